// Browser test of the viewer's interactions (issue 12): exact time-axis
// ticks down to ns with the absolute time on hover; keys that work whatever
// has focus (a drop-down, the search box after a search), "/" and ctrl+f,
// "m" flags, "?"; search from the view (highlight, exact total); range
// statistics (shift+drag, per name and per track); Perfetto extras
// (neutral summaries, no /event request without arguments, end time, whole
// track names on hover, a folding side panel, folds in a copyable link); the axis following resizes; a table switch leaving nothing
// of the previous table. Screenshots go to tests/viewer/artifacts/1x-*.png.
//
// usage: node interactions_test.js [BUILD_DIR]   (run.sh installs what it needs)
'use strict';

const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { tracetable, artifacts, check, waitFor, startServer, launch, collectErrors, pass, cleanUp, run } = require('./harness');

const ready = () => document.body.dataset.viewState === 'ready' && window.__tt.readySeq === window.__tt.viewSeq;
const EPOCH = 1700000000000000;  // us: an epoch-sized start, as real traces have
let generated = [];  // the events of "sample", for brute-force answers

// "sample": two threads over 300 ms from an epoch start; "second": another
// small table whose name also starts with "s" (a focused drop-down would
// jump to it on "s").
function makeTables(dir) {
  const ev = generated = [{ ph: 'M', name: 'process_name', pid: 1, tid: 0, args: { name: 'host-1' } }];
  for (let t = 1; t <= 2; t++) {
    for (let i = 0; i < 3000; i++) {
      const ts = EPOCH + i * 100 + t;
      ev.push({ ph: 'X', pid: 1, tid: t, ts, dur: 80, name: `step.${i % 20}`, args: { i } });
      ev.push({ ph: 'X', pid: 1, tid: t, ts: ts + 10, dur: 30, name: `fusion.${i % 13}` });
    }
  }
  const second = [{ ph: 'M', name: 'process_name', pid: 7, tid: 0, args: { name: 'other' } }];
  for (let i = 0; i < 500; i++) second.push({ ph: 'X', pid: 7, tid: 1, ts: i * 20, dur: 15, name: `other.${i % 5}` });
  // "flows": a Kineto-style ac2g flow from a cudaLaunchKernel nested in a
  // ProfilerStep to a GPU kernel; a v2 chain A→B→C bound by one id; 600
  // flows far later (bundles).
  const flows = [
    { ph: 'M', name: 'process_name', pid: 1, tid: 0, args: { name: 'host' } },
    { ph: 'M', name: 'process_name', pid: 2, tid: 0, args: { name: 'GPU 0' } },
    { ph: 'M', name: 'process_labels', pid: 2, tid: 0, args: { labels: 'GPU 1' } },
    { ph: 'X', pid: 1, tid: 1, ts: 0, dur: 1000, name: 'ProfilerStep#1' },
    { ph: 'X', pid: 1, tid: 1, ts: 100, dur: 50, name: 'cudaLaunchKernel' },
    { ph: 's', pid: 1, tid: 1, ts: 120, id: 7, cat: 'ac2g', name: 'ac2g' },
    { ph: 'X', pid: 2, tid: 5, ts: 300, dur: 100, name: 'kernel' },
    { ph: 'f', pid: 2, tid: 5, ts: 300, id: 7, bp: 'e', cat: 'ac2g', name: 'ac2g' },
    { ph: 'X', pid: 3, tid: 1, ts: 0, dur: 100, name: 'chainA', bind_id: 'c1', flow_out: true },
    { ph: 'X', pid: 3, tid: 1, ts: 200, dur: 100, name: 'chainB', bind_id: 'c1', flow_in: true, flow_out: true },
    { ph: 'X', pid: 3, tid: 2, ts: 400, dur: 100, name: 'chainC', bind_id: 'c1', flow_in: true },
  ];
  for (let p = 0; p < 4; p++) {  // four sender/receiver pairs, 150 flows each, one per bin
    for (let k = 0; k < 150; k++) {
      const ts = 100000 + k * 66 + p * 3, id = 1000 + p * 1000 + k;
      flows.push({ ph: 'X', pid: 4, tid: 10 + 2 * p, ts, dur: 4, name: 'send' }, { ph: 's', pid: 4, tid: 10 + 2 * p, ts: ts + 1, id, cat: 'x', name: 'msg' },
        { ph: 'X', pid: 4, tid: 11 + 2 * p, ts: ts + 30, dur: 4, name: 'recv' }, { ph: 'f', pid: 4, tid: 11 + 2 * p, ts: ts + 30, id, bp: 'e', cat: 'x', name: 'msg' });
    }
  }
  for (const [name, events] of [['sample', ev], ['second', second], ['flows', flows]]) {
    const f = path.join(dir, `${name}.json`);
    fs.writeFileSync(f, JSON.stringify({ traceEvents: events }));
    execFileSync(tracetable, ['ingest', f, '-o', path.join(dir, `${name}.tracetable`), '--force', '-q']);
    fs.rmSync(f);
  }
}

// Tick labels as numbers of ns ("230.620 2 ms" -> 230620200).
function labelNs(label) {
  const m = /^(-?[\d.\u2009]+) (s|ms|µs|ns)$/.exec(label);
  if (!m) return NaN;
  const digits = m[1].replace(/\u2009/g, '');
  const [ip, fp = ''] = digits.split('.');
  const exp = { s: 9, ms: 6, 'µs': 3, ns: 0 }[m[2]];
  return Number(BigInt(ip + fp.padEnd(exp, '0').slice(0, exp)));
}

async function main() {
  const t0 = Date.now();
  fs.mkdirSync(artifacts, { recursive: true });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-viewer-ix-'));
  makeTables(dir);
  const { proc, url } = await startServer(dir);
  let browser;
  const errors = [];
  try {
    browser = await launch();
    const page = await browser.newPage({ viewport: { width: 1500, height: 900 } });
    collectErrors(page, errors, /\/event\?id=/);
    await page.goto(url + '#table=sample');
    await waitFor(page, ready, null, 'first render');
    const span = () => page.evaluate(() => window.__tt.S && window.__tt.axis.span());
    const table = () => page.evaluate(() => window.__tt.S.table.name);

    // 1. Time axis: distinct, exact ticks at 1.1 us and 10 ns views, 230 ms in.
    for (const [a, b, shot] of [[230620.0, 230621.1, '10-axis-1us.png'], [230620.001, 230620.011, '11-axis-10ns.png']]) {
      await page.evaluate(([a, b]) => window.__tt.setView(window.__tt.axis.origin + a, window.__tt.axis.origin + b), [a, b]);
      await waitFor(page, ready, null, `view of ${b - a} us`);
      const st = await page.evaluate(() => ({ ticks: window.__tt.ticks, range: document.getElementById('range').textContent }));
      const ns = st.ticks.map(labelNs);
      const steps = ns.slice(1).map((v, i) => v - ns[i]);
      check(st.ticks.length >= 3 && new Set(st.ticks).size === st.ticks.length, `${st.ticks.length} distinct ticks at a ${(b - a).toFixed(3)} us view: ${st.ticks.join(' | ')}`);
      check(ns.every((v) => v >= a * 1000 - 1 && v <= b * 1000 + 1) && steps.every((d) => d > 0 && d === steps[0]),
        `tick labels are exact times from the start, ${steps[0]} ns apart`);
      const [r0, r1] = st.range.split(' – ');
      check(r0 !== r1 && Math.abs(labelNs(r0) - a * 1000) <= steps[0] && Math.abs(labelNs(r1) - b * 1000) <= steps[0], `header range reads ${st.range}`);
      await page.screenshot({ path: path.join(artifacts, shot) });
    }
    const ax = await page.locator('#axis').boundingBox();
    await page.mouse.move(ax.x + 220 + (ax.width - 220) / 2, ax.y + 10);
    const hv = await page.evaluate(() => ({ text: window.__tt.axisHover || '', origin: window.__tt.axis.absUs(window.__tt.axis.origin) }));
    const hm = /^(.*) from the start\nabsolute (\d+)\.(\d{3}) µs$/.exec(hv.text);
    const usNs = (s) => BigInt(s.split('.')[0]) * 1000n + BigInt((s.split('.')[1] || '').padEnd(3, '0'));
    check(hm && BigInt(hm[2] + hm[3]) === usNs(hv.origin) + BigInt(labelNs(hm[1])) && labelNs(hm[1]) > 230620000,
      `axis hover gives the time from the start and the absolute time: ${hv.text.replace(/\n/g, ' / ')}`);

    // 4. Keys whatever has focus.
    await page.keyboard.press('0');
    await waitFor(page, ready, null, 'whole trace');
    const full = await span();
    await page.focus('#table');
    await page.keyboard.press('w');
    await waitFor(page, ready, null, 'w with the drop-down focused');
    check(Math.abs(await span() - full / 2) < full * 1e-6 && await table() === 'sample', '"w" zooms in while the table drop-down has focus');
    await page.focus('#table');
    await page.keyboard.press('s');
    await waitFor(page, ready, null, 's with the drop-down focused');
    check(Math.abs(await span() - full) < full * 1e-6 && await table() === 'sample' &&
      await page.evaluate(() => document.getElementById('table').value) === 'sample', '"s" zooms out and does not switch tables');

    await page.click('#search');
    await page.keyboard.type('fusion.7');
    const landed = await page.evaluate(() => window.__tt.searchLanded);
    await page.keyboard.press('Enter');
    await waitFor(page, (n) => window.__tt.searchLanded > n, landed, 'search landing');
    await waitFor(page, ready, null, 'search view');
    check(await page.evaluate(() => document.activeElement.id !== 'search'), 'Enter runs the search and leaves the box');
    const before = await span();
    await page.keyboard.press('w');
    await waitFor(page, ready, null, 'w after a search');
    check(await page.inputValue('#search') === 'fusion.7' && Math.abs(await span() - before / 2) < before * 1e-6, '"w" after a search zooms and types nothing');
    await page.keyboard.press('Enter');
    await waitFor(page, (n) => window.__tt.searchLanded > n + 1, landed, 'Enter steps to the next match');
    check(true, 'Enter outside the box steps to the next match');
    await page.keyboard.press('/');
    check(await page.evaluate(() => document.activeElement.id === 'search'), '"/" focuses the search box');
    await page.keyboard.press('Escape');
    check(await page.evaluate(() => document.activeElement.id !== 'search') && await page.inputValue('#search') === 'fusion.7', 'Esc leaves the search box, keeping the query');
    await page.keyboard.press('Control+f');
    check(await page.evaluate(() => document.activeElement.id === 'search'), 'ctrl+f focuses the search box');
    await page.keyboard.press('Escape');

    await page.keyboard.press('0');
    await waitFor(page, ready, null, 'whole trace');
    await page.evaluate(() => window.__tt.setView(window.__tt.axis.origin + 1000, window.__tt.axis.origin + 1400));
    await waitFor(page, ready, null, 'a 400 us view');
    const target = await page.evaluate(() => window.__tt.visibleEvent(20));
    await page.mouse.click(target.x, target.y);
    await waitFor(page, (id) => window.__tt.selected && window.__tt.selected.id === id, target.id, 'selection');
    await page.keyboard.press('m');
    const marks = await page.evaluate(() => {
      const { S, axis, marks } = window.__tt;
      return { marks, want: [axis.absUs(S.selected.ts), axis.absUs(S.selected.ts + S.selected.dur)] };
    });
    check(marks.marks.length === 1 && marks.marks[0][0] === marks.want[0] && marks.marks[0][1] === marks.want[1],
      `"m" flags the selected event (${marks.marks[0]})`);
    await page.screenshot({ path: path.join(artifacts, '12-marks.png') });
    await page.keyboard.press('m');
    check(await page.evaluate(() => window.__tt.marks.length === 0), '"m" again removes the flags');
    await page.keyboard.press('?');
    const help = await page.evaluate(() => ({ shown: !document.getElementById('help').hidden, text: document.getElementById('help').textContent }));
    check(help.shown && /ctrl\+f/.test(help.text) && /mark/.test(help.text) && /esc/.test(help.text), '"?" lists the keys');
    await page.screenshot({ path: path.join(artifacts, '13-keys.png') });
    await page.keyboard.press('Escape');
    check(await page.evaluate(() => document.getElementById('help').hidden), 'Esc closes the key list');

    // 5. Search from the current view: the first match is at or after the
    // view's start, the zoom is kept, every match drawn is outlined and the
    // total is exact.
    const q5 = 'fusion.5';
    const slices = generated.filter((e) => e.ph === 'X');
    const t0us = Math.min(...slices.map((e) => e.ts));
    const named = slices.filter((e) => e.name.includes(q5));
    const [va, vb] = [150000, 150400];  // us from the trace start
    await page.evaluate(([a, b]) => window.__tt.setView(window.__tt.axis.origin + a, window.__tt.axis.origin + b), [va, vb]);
    await waitFor(page, ready, null, 'a 400 us view 150 ms in');
    const landed5 = await page.evaluate(() => window.__tt.searchLanded);
    // A slow count (a big table's takes the server's whole budget) does not
    // hold the landing back: the count line says so and follows.
    await page.route(/\/search\?.*count=1/, async (route) => {
      await new Promise((r) => setTimeout(r, 2500));
      try { await route.continue(); } catch (e) { /* page moved on */ }
    });
    await page.fill('#search', q5);
    await page.press('#search', 'Enter');
    await waitFor(page, (n) => window.__tt.searchLanded > n, landed5, 'search from the view');
    const counting = await page.evaluate(() => document.getElementById('search-count').textContent);
    check(/counting/.test(counting), `the search lands before its count arrives (${counting})`);
    await waitFor(page, ready, null, 'view on the match');
    await waitFor(page, () => window.__tt.searchTotal && /total/.test(document.getElementById('search-count').textContent), null, 'the search total');
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    const s5 = await page.evaluate(() => ({ m: window.__tt.lastMatch, o: window.__tt.axis.origin, span: window.__tt.axis.span(),
      view: window.__tt.axis.view.slice(), total: window.__tt.searchTotal, text: document.getElementById('search-count').textContent,
      hits: [...new Set(window.__tt.highlighted)].length }));
    const rel = s5.m.ts - s5.o;
    const firstAfter = Math.min(...named.filter((e) => e.ts - t0us + e.dur >= va).map((e) => e.ts - t0us));
    check(Math.abs(rel - firstAfter) < 1e-6, `the first match is the first one at the view's start (${rel.toFixed(3)} us from the start, not ${(Math.min(...named.map((e) => e.ts)) - t0us).toFixed(3)})`);
    check(Math.abs(s5.span - (vb - va)) < 1e-6, `the zoom is kept when jumping (${s5.span.toFixed(3)} us)`);
    check(s5.total === named.length.toLocaleString('en-US') && s5.text.includes(`${s5.total} total`), `exact total: ${s5.text}`);
    const inView = named.filter((e) => e.ts - t0us <= s5.view[1] - s5.o && e.ts - t0us + e.dur >= s5.view[0] - s5.o).length;
    check(inView > 1 && s5.hits === inView, `every match in view is outlined (${s5.hits} of ${inView})`);
    await page.screenshot({ path: path.join(artifacts, '17-search.png') });

    // 2. Range selection: shift+drag gives the range's statistics (server),
    // per name count, total, self, min/avg/max, and per track on request.
    await page.keyboard.press('Escape');
    await page.evaluate(() => window.__tt.setView(window.__tt.axis.origin + 2000, window.__tt.axis.origin + 2600));
    await waitFor(page, ready, null, 'a 600 us view');
    const tb = await page.locator('#tracks').boundingBox();
    const statsBefore = await page.evaluate(() => window.__tt.statsLoaded || 0);
    await page.keyboard.down('Shift');
    await page.mouse.move(tb.x + 220 + (tb.width - 220) * 0.2, tb.y + 100);
    await page.mouse.down();
    await page.mouse.move(tb.x + 220 + (tb.width - 220) * 0.45, tb.y + 100, { steps: 5 });
    await page.mouse.move(tb.x + 220 + (tb.width - 220) * 0.7, tb.y + 100, { steps: 5 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    await waitFor(page, (n) => (window.__tt.statsLoaded || 0) > n && window.__tt.stats.range, statsBefore, 'range statistics');
    const st2 = await page.evaluate(() => ({ ...window.__tt.stats, o: window.__tt.axis.absUs(window.__tt.axis.origin), shown: !document.getElementById('stats').hidden }));
    const ra = Number(st2.start_us) - EPOCH, rb = Number(st2.end_us) - EPOCH;  // us from EPOCH
    const want = new Map();
    const clip = (e) => Math.max(0, Math.min(e.ts - EPOCH + e.dur, rb) - Math.max(e.ts - EPOCH, ra));
    for (const e of slices) {
      if (!(e.ts - EPOCH <= rb && e.ts - EPOCH + e.dur >= ra)) continue;
      const w = want.get(e.name) || { count: 0, total: 0, self: 0, min: Infinity, max: 0 };
      const c = clip(e);
      // A step's child is the fusion 10 us into it on the same thread.
      const child = e.name.startsWith('step.') ? clip({ ts: e.ts + 10, dur: 30 }) : 0;
      w.count++; w.total += c; w.self += c - child; w.min = Math.min(w.min, c); w.max = Math.max(w.max, c);
      want.set(e.name, w);
    }
    const near = (x, y) => Math.abs(x - y) < 1e-6;
    const bad = st2.names.filter((n) => {
      const w = want.get(n.name);
      return !w || n.count !== w.count || !near(n.total_us, w.total) || !near(n.self_us, w.self) || !near(n.min_us, w.min) ||
        !near(n.max_us, w.max) || Math.abs(n.avg_us - w.total / w.count) > 1e-5;
    });
    check(st2.shown && st2.range && rb - ra > 100 && st2.names.length === want.size && bad.length === 0,
      `range ${ra.toFixed(3)}–${rb.toFixed(3)} us: ${st2.names.length} names with exact count/total/self/min/avg/max` +
      (bad.length ? ` (wrong: ${JSON.stringify(bad[0])} want ${JSON.stringify(want.get(bad[0].name))})` : ''));
    await page.screenshot({ path: path.join(artifacts, '18-range-stats.png') });
    const loaded = await page.evaluate(() => window.__tt.statsLoaded);
    await page.click('#stats-by-track');
    await waitFor(page, (n) => window.__tt.statsLoaded > n && window.__tt.stats.byTrack, loaded, 'stats by track');
    const st3 = await page.evaluate(() => ({ tracks: window.__tt.stats.tracks, rows: document.querySelectorAll('#stats-tracks tr').length }));
    const inRange = slices.filter((e) => e.ts - EPOCH <= rb && e.ts - EPOCH + e.dur >= ra).length;
    check(st3.tracks.length === 2 && st3.rows === 3 && st3.tracks.reduce((x, t) => x + t.count, 0) === inRange,
      `by track: ${st3.tracks.map((t) => t.count).join(' + ')} = ${inRange} events`);
    await page.screenshot({ path: path.join(artifacts, '19-range-stats-tracks.png') });
    await page.click('#stats-by-track');
    await page.keyboard.press('Escape');
    await waitFor(page, () => window.__tt.stats && !window.__tt.stats.range, null, 'stats of the view again after Esc');
    check(true, 'Esc drops the range: stats are of the visible range again');
    await page.click('[data-tab=details]');

    // 6. Resize: the axis follows the timeline; the side panel keeps its clicks.
    for (const [w, shot] of [[900, '14-narrow.png'], [1920, '15-wide.png']]) {
      await page.setViewportSize({ width: w, height: 800 });
      await waitFor(page, ready, null, `resize to ${w}`);
      await page.waitForTimeout(100);
      const boxes = await page.evaluate(() => {
        const r = (id) => document.getElementById(id).getBoundingClientRect();
        return { axis: r('axis'), side: r('side'), tl: r('timeline'), bitmap: document.getElementById('axis').width / (window.devicePixelRatio || 1) };
      });
      check(Math.abs(boxes.axis.right - boxes.side.left) <= 1 && Math.abs(boxes.axis.width - boxes.tl.width) <= 1 && Math.abs(boxes.bitmap - boxes.axis.width) <= 1,
        `at ${w} px the axis spans the timeline (${Math.round(boxes.axis.left)}–${Math.round(boxes.axis.right)}, side panel from ${Math.round(boxes.side.left)})`);
      await page.click('[data-tab=stats]');
      check(await page.evaluate(() => !document.getElementById('stats').hidden), `at ${w} px the Stats tab takes clicks`);
      await page.click('[data-tab=details]');
      await page.screenshot({ path: path.join(artifacts, shot) });
    }
    await page.setViewportSize({ width: 1500, height: 900 });

    // 6. Table switch: nothing of the previous table stays; the drop-down follows.
    const ev6 = await page.evaluate(() => window.__tt.visibleEvent(20));
    await page.mouse.click(ev6.x, ev6.y);
    await waitFor(page, (id) => window.__tt.selected && window.__tt.selected.id === id, ev6.id, 'selection before the switch');
    check(await page.evaluate(() => document.getElementById('details').textContent.includes(window.__tt.selected.name)), 'details show the selected event');
    await page.selectOption('#table', 'second');
    await waitFor(page, () => window.__tt.S.table.name === 'second' && document.body.dataset.viewState === 'ready', null, 'switch to second');
    const sw = await page.evaluate(() => ({ details: document.getElementById('details').textContent, selected: window.__tt.selected }));
    check(sw.selected === null && /Click an event/.test(sw.details), 'switching tables clears the details');
    await page.evaluate(() => { location.hash = '#table=sample'; });
    await waitFor(page, () => window.__tt.S.table.name === 'sample' && document.body.dataset.viewState === 'ready', null, 'switch back by URL');
    check(await page.evaluate(() => document.getElementById('table').value) === 'sample', 'the drop-down follows a switch by URL');
    await page.screenshot({ path: path.join(artifacts, '16-switched.png') });
    await page.evaluate(() => window.__tt.setView(window.__tt.axis.origin + 1000, window.__tt.axis.origin + 1400));
    await waitFor(page, ready, null, 'a view seen before the switch');
    const back = await page.evaluate(() => window.__tt.visibleEvent(20));
    check(back && back.name.length > 0, `back on a table seen before, its cached tiles still have their names (${back && back.name})`);

    // 7. Perfetto extras.
    await page.keyboard.press('0');
    await waitFor(page, ready, null, 'whole trace');
    const px = await page.evaluate(() => {
      const { S } = window.__tt;
      const c = document.getElementById('tracks');
      const row = S.rows.find((r) => r.kind === 'track');
      const dpr = window.devicePixelRatio || 1;
      const y = Math.round((row.y - document.getElementById('scroller').scrollTop + 2 + 6) * dpr);
      const d = c.getContext('2d').getImageData(Math.round(230 * dpr), y, c.width - Math.round(240 * dpr), 1).data;
      let ink = 0, colour = 0;
      for (let i = 0; i < d.length; i += 4) {
        if (d[i] > 245 && d[i + 1] > 245 && d[i + 2] > 245) continue;
        ink++;
        if (Math.max(d[i], d[i + 1], d[i + 2]) - Math.min(d[i], d[i + 1], d[i + 2]) > 16) colour++;
      }
      return { ink, colour, summaries: window.__tt.eventsDrawn };
    });
    check(px.ink > 100 && px.colour === 0, `zoomed out, summary boxes are neutral grey (${px.ink} px inked, ${px.colour} coloured)`);
    await page.screenshot({ path: path.join(artifacts, '20-summaries.png') });

    await page.evaluate(() => window.__tt.setView(window.__tt.axis.origin + 1000, window.__tt.axis.origin + 1400));
    await waitFor(page, ready, null, 'a 400 us view');
    const eventReqs = [];
    const onReq = (r) => { if (/\/event\?id=/.test(r.url())) eventReqs.push(r.url()); };
    page.on('request', onReq);
    const fz = await page.evaluate(() => window.__tt.visibleEvent(10, 'fusion.'));
    await page.mouse.click(fz.x, fz.y);
    await waitFor(page, (id) => window.__tt.selected && window.__tt.selected.id === id, fz.id, 'fusion selected');
    await page.waitForTimeout(200);
    const d7 = await page.evaluate(() => document.getElementById('details').textContent);
    check(eventReqs.length === 0 && /\(no arguments\)/.test(d7), 'an event without arguments asks for none (no 404)');
    check(/end/.test(d7) && /1700000000001\d{3}(\.\d+)? µs/.test(d7), 'details give the end time');
    await waitFor(page, (id) => window.__tt.relatives && window.__tt.relatives.id === id, fz.id, 'relatives of the fusion');
    const relF = await page.evaluate(() => window.__tt.relatives);
    check(/^step\./.test(relF.parent) && relF.children.length === 0 && Math.abs(relF.self - 30) < 1e-9, `details: parent ${relF.parent}, no children, self ${relF.self} us`);
    const st = await page.evaluate(() => window.__tt.visibleEvent(10, 'step.'));
    await page.mouse.click(st.x, st.y);
    await waitFor(page, () => /"i"/.test(document.getElementById('details').textContent), null, 'arguments of a step');
    check(eventReqs.length === 1, 'an event with arguments fetches them');
    await waitFor(page, (id) => window.__tt.relatives && window.__tt.relatives.id === id, st.id, 'relatives of the step');
    const relS = await page.evaluate(() => window.__tt.relatives);
    check(relS.parent === null && relS.children.length === 1 && /^fusion\./.test(relS.children[0]) && Math.abs(relS.self - 50) < 1e-9,
      `details: a step's child ${relS.children[0]} and self time ${relS.self} us (80 - 30)`);
    page.off('request', onReq);

    const rowY = await page.evaluate(() => {
      const r = window.__tt.S.rows.find((x) => x.kind === 'track');
      return r.y - document.getElementById('scroller').scrollTop + 8;
    });
    const tb7 = await page.locator('#tracks').boundingBox();
    await page.mouse.move(tb7.x + 60, tb7.y + rowY);
    const tip = await page.evaluate(() => ({ hidden: document.getElementById('tooltip').hidden, text: document.getElementById('tooltip').textContent }));
    check(!tip.hidden && /host-1 › .*\(pid 1, tid 1\)/.test(tip.text), `hovering a track name shows it whole: ${tip.text}`);

    await page.click('#side-btn');
    await waitFor(page, ready, null, 'side panel folded');
    const fold = await page.evaluate(() => ({ side: document.getElementById('side').hidden, axis: document.getElementById('axis').getBoundingClientRect().right, w: window.innerWidth }));
    check(fold.side && Math.abs(fold.axis - fold.w) <= 1, `the side panel folds away and the timeline takes the width (${Math.round(fold.axis)} of ${fold.w})`);
    await page.screenshot({ path: path.join(artifacts, '21-side-folded.png') });
    await page.click('#side-btn');
    check(await page.evaluate(() => !document.getElementById('side').hidden), 'and comes back');

    // Pin thread (2) to the top: select one of its events, "p".
    const on2 = await page.evaluate(() => {
      const { S } = window.__tt;
      const row = S.rows.filter((r) => r.kind === 'track')[1];
      const ev = window.__tt.visibleEvent(10);
      return { track: row.track.id, y: row.y - document.getElementById('scroller').scrollTop, ev };
    });
    await page.mouse.click(on2.ev.x, tb7.y + on2.y + 2 + 6);
    await waitFor(page, (t) => window.__tt.selected && window.__tt.S.selected.track === t, on2.track, 'an event of thread 2 selected');
    await page.keyboard.press('p');
    await waitFor(page, ready, null, 'pinned');
    const pin = await page.evaluate(() => { const r = window.__tt.S.rows; return { first: r[0].kind === 'track' && r[0].pinned ? r[0].track.id : null, n: r.filter((x) => x.kind === 'track' && x.track.id === r[0].track.id).length, drawn: window.__tt.eventsDrawn }; });
    check(pin.first === on2.track && pin.n === 1 && pin.drawn > 0, `"p" pins the selected event's track to the top (track ${on2.track})`);
    await page.screenshot({ path: path.join(artifacts, '25-pinned.png') });

    const procY = await page.evaluate(() => {
      const r = window.__tt.S.rows.find((x) => x.kind === 'process');
      return r.y - document.getElementById('scroller').scrollTop + r.h / 2;
    });
    await page.mouse.click(tb7.x + 60, tb7.y + procY);
    await waitFor(page, () => window.__tt.S.collapsed.size === 1, null, 'process folded');
    await page.click('#link-btn');
    const link = await page.evaluate(() => window.__tt.link);
    check(/collapsed=\d+/.test(link) && /table=sample/.test(link), `the link keeps the folded process (${link.replace(/^.*#/, '#')})`);
    const page2 = await browser.newPage({ viewport: { width: 1500, height: 900 } });
    page2.on('pageerror', (e) => errors.push('pageerror: ' + e.message));
    await page2.goto(link);
    await waitFor(page2, ready, null, 'the link opened');
    const p2 = await page2.evaluate(() => ({ collapsed: [...window.__tt.S.collapsed], pins: window.__tt.S.pins, rows: window.__tt.S.rows.filter((r) => r.kind === 'track').length }));
    check(/pins=\d+/.test(link) && p2.collapsed.length === 1 && p2.rows === 1 && p2.pins.length === 1, 'opening the link shows the process folded and the pinned track on top');
    await page2.screenshot({ path: path.join(artifacts, '22-link-folded.png') });
    await page2.close();

    // 3. Flows.
    await page.goto(url + '#table=flows&start=0&end=1000');
    await waitFor(page, () => window.__tt.S && window.__tt.S.table && window.__tt.S.table.name === 'flows' && document.body.dataset.viewState === 'ready' && window.__tt.readySeq === window.__tt.viewSeq, null, 'flows table');
    const fl = await page.evaluate(() => {
      const tt = window.__tt;
      const ev = (p) => tt.visibleEvent(1, p);
      return { arrows: tt.flows.arrows, launch: ev('cudaLaunchKernel'), kernel: ev('kernel'), a: ev('chainA'), b: ev('chainB'), c: ev('chainC') };
    });
    const gpuRow = await page.evaluate(() => {
      const r = window.__tt.S.rows.find((x) => x.kind === 'track' && x.process.pid === 2);
      return r.y - document.getElementById('scroller').scrollTop + 8;
    });
    const tbf = await page.locator('#tracks').boundingBox();
    await page.mouse.move(tbf.x + 60, tbf.y + gpuRow);
    const gpuTip = await page.evaluate(() => document.getElementById('tooltip').textContent);
    check(/GPU 0 \[GPU 1\] › /.test(gpuTip), `Kineto process_labels are shown (${gpuTip})`);
    const arrow = (x, y) => fl.arrows.find((r) => r.from === x.id && r.to === y.id);
    const ac2g = arrow(fl.launch, fl.kernel);
    check(ac2g && Math.abs(ac2g.y0 - (fl.launch.y - (await page.locator('#tracks').boundingBox()).y)) <= 2,
      'the ac2g arrow starts on the cudaLaunchKernel slice at its lane (not the ProfilerStep lane)');
    check(arrow(fl.a, fl.b) && arrow(fl.b, fl.c), `a chain A→B→C bound by one id draws both arrows (${fl.arrows.length} drawn)`);
    await page.mouse.click(fl.b.x, fl.b.y);
    await waitFor(page, (id) => window.__tt.selected && window.__tt.selected.id === id, fl.b.id, 'chainB selected');
    // The highlight is drawn on the frame after the click: wait for it (or
    // time out and let the check below say what was drawn).
    await page.waitForFunction(() => window.__tt.flows.arrows.filter((r) => r.mine).length >= 2 && (window.__tt.flowList || []).length >= 2,
      null, { timeout: 5000, polling: 50 }).catch(() => {});
    const list = await page.evaluate(() => ({ flows: window.__tt.flowList, mine: window.__tt.flows.arrows.filter((r) => r.mine).length }));
    check(list.flows.length === 2 && list.flows.some((x) => x.dir === 'in' && x.name === 'chainA') && list.flows.some((x) => x.dir === 'out' && x.name === 'chainC') && list.mine === 2,
      'selecting B highlights its two flows and lists them');
    await page.screenshot({ path: path.join(artifacts, '23-flows.png') });
    await page.click('#flows button[data-flow="' + (list.flows[0].name === 'chainC' ? 0 : 1) + '"]');
    await waitFor(page, () => window.__tt.selected && window.__tt.selected.name === 'chainC', null, 'go to C');
    check(true, '"go to" selects the far end');
    // The flow event itself (a "msg" start 1 us into its "send" slice,
    // selected by a click just before the slice) lists the same flow, and
    // "]" follows it to the "recv" end.
    await page.evaluate(() => window.__tt.setView(window.__tt.axis.origin + 99500, window.__tt.axis.origin + 100500));
    await waitFor(page, ready, null, 'a 1 ms view on the first sends');
    const fe = await page.evaluate(() => {
      const { S, axis } = window.__tt;
      for (const row of S.rows) {
        if (row.kind !== 'track') continue;
        for (const e of S.plan.get(S.groupOf.get(row.track.id)) || []) {
          const c = e.tile.cols;
          for (const tr of e.tile.tracks) {
            if (tr.id !== row.track.id) continue;
            for (let i = tr.from; i < tr.to; i++) {
              const rel = c.ts[i] - axis.origin;
              if (c.kind[i] !== 3 || Math.abs(rel - 100001) > 0.5) continue;
              return { id: c.id[i], x: axis.xOf(c.ts[i] - 1) - 2, y: row.y - document.getElementById('scroller').scrollTop + 2 + c.lane[i] * 18 + 8 };
            }
          }
        }
      }
      return null;
    });
    check(fe, 'the first msg flow event is loaded');
    await page.mouse.click(tbf.x + fe.x, tbf.y + fe.y);
    await waitFor(page, (id) => window.__tt.selected && window.__tt.selected.id === id, fe.id, 'the flow event selected');
    await waitFor(page, () => (window.__tt.flowList || []).some((x) => x.dir === 'out' && x.name === 'recv'), null, 'its flow listed');
    await page.keyboard.press(']');
    await waitFor(page, () => window.__tt.selected && window.__tt.selected.name === 'recv', null, '"]" from the flow event');
    check(true, 'a selected flow event lists its flow and "]" follows it to its end');
    await page.keyboard.press('Escape');
    await page.evaluate(() => window.__tt.setView(window.__tt.axis.origin + 100000, window.__tt.axis.origin + 110000));
    await waitFor(page, ready, null, '600 flows in view');
    const thin = await page.evaluate(() => window.__tt.flows);
    check(thin.inView >= 500 && thin.bundles.length >= 4 && thin.bundles.length <= 32 && thin.bundles.every((b) => b.count >= 2) && thin.bundles.reduce((x, b) => x + b.count, 0) >= 500 && thin.drawn <= 60,
      `zoomed out, ${thin.inView} flows are drawn as ${thin.bundles.length} bundles (${thin.bundles.map((b) => b.count).join(', ')}) and ${thin.drawn} arrows`);
    await page.screenshot({ path: path.join(artifacts, '24-flows-thinned.png') });

    pass(errors, t0);
  } finally {
    await cleanUp(browser, proc, dir);
  }
}

run(main);
