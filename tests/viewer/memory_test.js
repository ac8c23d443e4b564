// Browser test of the viewer's memory panel (issue 13, item 3) on two real
// traces (TRACETABLE_SHARED_TRACES, else ../shared/traces next to the repo):
// the memory IDs listed (with their host), the peak shown equal to
// `tracetable memory --peak --json`, the chart under the timeline (y axis
// from 0 in binary units) following zoom, a click on the chart giving the
// breakdown at that time (equal to `memory --at-us`), a breakdown row
// selecting its allocation's event, XSpace shapes and data types, and the
// panel's state kept in the URL. Screenshots: tests/viewer/artifacts/memory-*.png.
//
// usage: node memory_test.js [BUILD_DIR]   (run.sh installs what it needs)
'use strict';

const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { repo, tracetable, artifacts, check, waitFor, startServer, launch, collectErrors, pass, cleanUp, run } = require('./harness');

const SKIP = 77;  // ctest SKIP_RETURN_CODE
const shared = process.env.TRACETABLE_SHARED_TRACES || path.join(repo, '..', 'shared', 'traces');
const traces = {
  kineto: path.join(shared, 'kineto', 'df_index_resolver.json.gz'),
  xspace: path.join(shared, 'xspace', 'gpu_multi_worker_host179.xplane.pb'),
};
const ready = () => document.body.dataset.viewState === 'ready' && window.__tt.readySeq === window.__tt.viewSeq;
// The tiles drawn, and the chart (when shown) from a timeline of this view.
const drawn = () => document.body.dataset.viewState === 'ready' && window.__tt.readySeq === window.__tt.viewSeq &&
  (document.getElementById('memory-strip').hidden || (window.__tt.memory && window.__tt.memory.chartReady));

// JSON whose *_us times stay exact decimal text (doubles would round them).
function parseExact(text) {
  return JSON.parse(text.replace(/"(\w+_us)":(-?[\d.]+)/g, '"$1":"$2"'));
}
function cli(args) {
  return parseExact(execFileSync(tracetable, ['memory', ...args, '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 }));
}

async function main() {
  const t0 = Date.now();
  if (!fs.existsSync(traces.kineto) || !fs.existsSync(traces.xspace)) {
    console.log(`SKIP: the shared traces are missing (${shared})`);
    process.exit(SKIP);
  }
  fs.mkdirSync(artifacts, { recursive: true });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-viewer-memory-'));
  const tables = {};
  for (const [name, f] of Object.entries(traces)) {
    tables[name] = path.join(dir, `${name}.tracetable`);
    execFileSync(tracetable, ['ingest', f, '-o', tables[name], '-q']);
  }
  // Both in one table: each input is a host.
  tables.both = path.join(dir, 'both.tracetable');
  execFileSync(tracetable, ['ingest', traces.kineto, traces.xspace, '-o', tables.both, '-q']);
  // And a table without memory events.
  const plain = path.join(dir, 'plain.json');
  fs.writeFileSync(plain, JSON.stringify({ traceEvents: [{ ph: 'X', pid: 1, tid: 1, ts: 0, dur: 10, name: 'work' }] }));
  execFileSync(tracetable, ['ingest', plain, '-o', path.join(dir, 'plain.tracetable'), '-q']);
  fs.rmSync(plain);
  const { proc, url } = await startServer(dir);
  let browser;
  const errors = [];
  try {
    browser = await launch();
    const page = await browser.newPage({ viewport: { width: 1500, height: 900 } });
    collectErrors(page, errors, /\/event\?id=/);
    const mem = () => page.evaluate(() => JSON.parse(JSON.stringify(window.__tt.memory)));
    const breakdownIn = (n) => waitFor(page, (k) => window.__tt.memory.breakdownLoads > k && !document.querySelector('#memory-breakdown.loading'), n, 'a breakdown');

    // ---- Kineto: cuda:1 and cpu ----
    const kRef = cli([tables.kineto, '--peak', '--limit', '0']);
    await page.goto(url + '#table=kineto');
    await waitFor(page, ready, null, 'first render');
    check(await page.evaluate(() => document.getElementById('memory-strip').hidden), 'the memory chart is hidden until asked for');
    await page.keyboard.press('u');
    await waitFor(page, () => window.__tt.memory.ids.length > 0 && window.__tt.memory.breakdown && window.__tt.memory.timelineLoads > 0, null, 'memory panel');
    await waitFor(page, drawn, null, 'render with the chart');
    const opts = await page.$$eval('#memory-id option', (os) => os.map((o) => o.textContent));
    check(opts.length === kRef.ids.length && kRef.ids.every((m) => opts.includes(m.id)), `"u" opens the Memory tab listing the IDs: ${opts.join(', ')}`);
    check(await page.evaluate(() => !document.getElementById('memory').hidden && !document.getElementById('memory-strip').hidden),
      'the Memory tab and the chart strip are shown');
    const cuda = kRef.ids.find((m) => m.id === 'cuda:1');
    check(cuda.peak.in_use === 6629508096 && cuda.peak.ts_us === '1669783687579130', `the CLI's cuda:1 peak is the known one (${cuda.peak.in_use} B at ${cuda.peak.ts_us} µs)`);
    let shown = await page.evaluate(() => {
      const el = document.getElementById('memory-peak-value');
      return { sel: document.getElementById('memory-id').selectedOptions[0].textContent, bytes: Number(el.dataset.bytes), ts: el.dataset.ts,
        text: document.getElementById('memory-summary').textContent };
    });
    check(shown.sel === 'cuda:1' && shown.bytes === cuda.peak.in_use && shown.ts === cuda.peak.ts_us &&
      shown.text.includes('6,629,508,096 B') && shown.text.includes(cuda.peak.ts_us),
    `the ID with the highest peak is chosen and its peak shown equals the CLI's: ${shown.text.slice(0, 120).replace(/\s+/g, ' ')}`);
    let m = await mem();
    const kb = kRef.breakdowns.find((b) => b.id === 'cuda:1');
    check(m.breakdown.at === 'peak' && m.breakdown.in_use === kb.in_use && m.breakdown.live_count === kb.live_count &&
      m.breakdown.rows.every((r, i) => r.event_id === kb.rows[i].event_id && r.bytes === kb.rows[i].bytes && r.alloc_us === kb.rows[i].alloc_us),
    `the breakdown at the peak equals the CLI's (${m.breakdown.live_count} live, first ${m.breakdown.rows.length} rows)`);
    const c0 = m.lastChart;
    check(c0.ticks[0] === '0' && /GiB$/.test(c0.ticks[c0.ticks.length - 1]) && c0.yMax >= cuda.peak.in_use,
      `the chart's y axis starts at 0 and is labelled in GiB: ${c0.ticks.join(' | ')}`);
    await page.screenshot({ path: path.join(artifacts, 'memory-1-kineto-peak.png') });

    // Zoom (keys over the timeline): the chart follows the view and asks
    // for a finer timeline.
    const peakRel = await page.evaluate((ts) => window.__tt.axis.relFromText(ts), cuda.peak.ts_us);
    const before = await mem();
    await page.evaluate((t) => window.__tt.setView(t - 20000, t + 20000), peakRel);
    await waitFor(page, (n) => window.__tt.memory.timelineLoads > n, before.timelineLoads, 'timeline after zoom');
    await waitFor(page, drawn, null, 'zoomed view');
    m = await mem();
    const view = await page.evaluate(() => [window.__tt.axis.absUs(window.__tt.axis.view[0]), window.__tt.axis.absUs(window.__tt.axis.view[1])]);
    const req = m.timelineRequests[m.timelineRequests.length - 1];
    const prev = before.timelineRequests[before.timelineRequests.length - 1];
    check(m.chartDraws > before.chartDraws && m.lastChart.view[0] === view[0] && m.lastChart.view[1] === view[1] &&
      Number(m.lastChart.loaded.start_us) <= Number(view[0]) && Number(m.lastChart.loaded.end_us) >= Number(view[1]),
    `the chart redraws on zoom, from a timeline covering the view (${m.lastChart.loaded.start_us} – ${m.lastChart.loaded.end_us})`);
    check(Number(req.resolution_us) < Number(prev.resolution_us) / 10 && Number(req.resolution_us) <= 40000 / 500,
      `…asked at the view's resolution: ${prev.resolution_us} µs, then ${req.resolution_us} µs`);
    await page.screenshot({ path: path.join(artifacts, 'memory-2-kineto-zoomed.png') });

    // A click on the chart: the breakdown at that time, equal to the CLI's.
    const chart = await page.locator('#memory-chart').boundingBox();
    let loads = m.breakdownLoads;
    await page.mouse.click(chart.x + 220 + (chart.width - 220) * 0.3, chart.y + 80);
    await breakdownIn(loads);
    m = await mem();
    await waitFor(page, () => /memory_at=/.test(location.hash), null, 'memory_at in the URL');
    const at = await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get('memory_at'));
    const atRef = cli([tables.kineto, '--id', 'cuda:1', '--at-us', at, '--limit', '200']).breakdowns[0];
    check(m.breakdown.at === 'time' && m.breakdown.in_use === atRef.in_use && m.breakdown.ts_us === atRef.ts_us &&
      m.breakdown.live_count === atRef.live_count && m.breakdown.rows.length === atRef.rows.length &&
      m.breakdown.rows.every((r, i) => r.event_id === atRef.rows[i].event_id),
    `a click on the chart shows the breakdown at ${at} µs, equal to the CLI's (${atRef.in_use} B in use, ${atRef.live_count} live)`);
    await page.screenshot({ path: path.join(artifacts, 'memory-3-kineto-clicked.png') });

    // A breakdown row selects its allocation's event.
    const row = m.breakdown.rows[0];
    await page.click('#memory-rows tr[data-row="0"]');
    await waitFor(page, (id) => window.__tt.selected && window.__tt.selected.id === id, row.event_id, 'the allocation event selected');
    await waitFor(page, drawn, null, 'view on the allocation');
    const sel = await page.evaluate(() => {
      const { S, axis } = window.__tt;
      return { ts: axis.absUs(S.selected.ts), inView: S.selected.ts >= axis.view[0] && S.selected.ts <= axis.view[1], name: S.selected.name,
        details: document.getElementById('details').textContent, detailsShown: !document.getElementById('details').hidden };
    });
    check(sel.ts === row.alloc_us && sel.inView && sel.name === '[memory]' && sel.detailsShown && sel.details.includes(row.alloc_us),
      `clicking the largest row selects event ${row.event_id} at ${sel.ts} µs (its allocation time), in view, with its details`);
    await waitFor(page, () => /"Bytes"/.test((document.getElementById('args') || {}).textContent || ''), null, 'the event\'s arguments');
    await page.screenshot({ path: path.join(artifacts, 'memory-4-kineto-row-selected.png') });

    // The URL keeps the panel: a reload shows the same ID and breakdown time.
    await waitFor(page, () => /memory=cuda%3A1/.test(location.hash), null, 'memory= in the URL');
    const link = await page.evaluate(() => location.href);
    await page.goto('about:blank');
    await page.goto(link);
    await waitFor(page, () => window.__tt.memory && window.__tt.memory.breakdown && window.__tt.memory.timelineLoads > 0, null, 'panel from the URL');
    m = await mem();
    check(m.selected.id === 'cuda:1' && m.breakdown.at === 'time' && m.breakdown.ts_us === atRef.ts_us &&
      await page.evaluate(() => !document.getElementById('memory-strip').hidden),
    'a link with memory= and memory_at= opens the chart, the ID and the breakdown time');
    loads = m.breakdownLoads;
    await page.click('#memory-at-peak');
    await breakdownIn(loads);
    await waitFor(page, () => !/memory_at=/.test(location.hash), null, 'memory_at gone from the URL');
    m = await mem();
    check(m.breakdown.at === 'peak' && m.breakdown.ts_us === cuda.peak.ts_us, '"at the peak" goes back to the breakdown at the peak');
    // The wheel over the chart zooms the timeline around the cursor.
    await waitFor(page, drawn, null, 'view from the link');
    const span0 = await page.evaluate(() => window.__tt.axis.span());
    const box = await page.locator('#memory-chart').boundingBox();
    await page.mouse.move(box.x + 220 + (box.width - 220) / 2, box.y + 60);
    await page.mouse.wheel(0, -400);
    await waitFor(page, (s) => window.__tt.axis.span() < s * 0.9, span0, 'wheel zoom over the chart');
    await waitFor(page, drawn, null, 'view after the wheel');
    m = await mem();
    check(m.lastChart.view[0] === await page.evaluate(() => window.__tt.axis.absUs(window.__tt.axis.view[0])),
      `the wheel over the chart zooms the timeline and the chart (span ${span0.toFixed(0)} µs -> ${(await page.evaluate(() => window.__tt.axis.span())).toFixed(0)} µs)`);
    await page.keyboard.press('u');
    check(await page.evaluate(() => document.getElementById('memory-strip').hidden), '"u" again hides the chart');
    await page.keyboard.press('?');
    check(await page.evaluate(() => /memory/.test(document.getElementById('help').textContent)), '"?" lists "u"');
    await page.keyboard.press('Escape');

    // ---- XSpace: allocators per host, shapes and data types ----
    const xRef = cli([tables.xspace, '--peak', '--limit', '0']);
    const g6 = xRef.ids.find((x) => x.id === 'GPU_6_bfc');
    check(g6.peak.in_use === 6210111488 && g6.peak.ts_us === '2587153.828', `the CLI's GPU_6_bfc peak is the known one (${g6.peak.in_use} B at ${g6.peak.ts_us} µs)`);
    await page.goto(url + `#table=xspace&memory=GPU_6_bfc&memory_host=${encodeURIComponent(g6.host)}`);
    await waitFor(page, () => window.__tt.S.table.name === 'xspace' && window.__tt.memory.breakdown && window.__tt.memory.selected &&
      window.__tt.memory.selected.id === 'GPU_6_bfc' && window.__tt.memory.timelineLoads > 0, null, 'xspace panel');
    await waitFor(page, drawn, null, 'xspace render');
    const xopts = await page.$$eval('#memory-id option', (os) => os.map((o) => o.textContent));
    check(xopts.length === xRef.ids.length && xRef.ids.every((x) => xopts.includes(`${x.host} · ${x.id}`)),
      `the XSpace IDs are listed with their host: ${xopts.join(', ')}`);
    shown = await page.evaluate(() => {
      const el = document.getElementById('memory-peak-value');
      return { bytes: Number(el.dataset.bytes), ts: el.dataset.ts, text: document.getElementById('memory-summary').textContent };
    });
    check(shown.bytes === g6.peak.in_use && shown.ts === g6.peak.ts_us && shown.text.includes('6,210,111,488 B'),
      `GPU_6_bfc's peak shown equals the CLI's (${shown.bytes} B at ${shown.ts} µs)`);
    m = await mem();
    const xb = xRef.breakdowns.find((b) => b.id === 'GPU_6_bfc');
    check(m.breakdown.in_use === xb.in_use && m.breakdown.rows.every((r, i) => r.event_id === xb.rows[i].event_id && r.shape === xb.rows[i].shape),
      'the XSpace breakdown equals the CLI\'s');
    const shaped = xb.rows.filter((r) => /^\[[\d,]*\]$/.test(r.shape) && /^\d+$/.test(r.data_type));
    check(shaped.length > xb.rows.length / 2, `XSpace allocations carry their shape and data type (${shaped.length} of ${xb.rows.length}, e.g. ${shaped[0].shape} type ${shaped[0].data_type})`);
    const cell = await page.evaluate(() => document.querySelector('#memory-rows tr[data-row="0"] td.name').textContent);
    check(cell.includes(xb.rows[0].shape) && /float|half|int32|int64|bfloat16|double|bool|uint8/.test(cell),
      `a row shows op, shape and data type by name: ${cell}`);
    await page.screenshot({ path: path.join(artifacts, 'memory-5-xspace-peak.png') });
    const xrow = m.breakdown.rows[0];
    await page.click('#memory-rows tr[data-row="0"]');
    await waitFor(page, (id) => window.__tt.selected && window.__tt.selected.id === id, xrow.event_id, 'the XSpace allocation selected');
    await waitFor(page, drawn, null, 'view on the XSpace allocation');
    const xsel = await page.evaluate(() => ({ ts: window.__tt.axis.absUs(window.__tt.S.selected.ts), name: window.__tt.S.selected.name }));
    check(xsel.ts === xrow.alloc_us && xsel.name === 'MemoryAllocation', `clicking a row selects its MemoryAllocation at ${xsel.ts} µs`);
    await waitFor(page, () => /"shape"/.test((document.getElementById('args') || {}).textContent || ''), null, 'the allocation\'s arguments');
    await page.screenshot({ path: path.join(artifacts, 'memory-6-xspace-row-selected.png') });

    // ---- Two hosts in one table: one set of IDs each, the host filter narrows them ----
    const bRef = cli([tables.both, '--limit', '1']);
    const hosts = [...new Set(bRef.ids.map((x) => x.host))];
    check(hosts.length === 2 && bRef.ids.length === kRef.ids.length + xRef.ids.length, `the table of both traces has two hosts (${hosts.join(', ')})`);
    await page.goto(url + '#table=both');
    await waitFor(page, () => window.__tt.S.table.name === 'both' && document.body.dataset.viewState === 'ready', null, 'both: first render');
    await page.keyboard.press('u');
    await waitFor(page, (n) => window.__tt.memory.ids.length === n && window.__tt.memory.breakdown && window.__tt.memory.chartReady,
      bRef.ids.length, 'both: memory panel');
    const bopts = await page.$$eval('#memory-id option', (os) => os.map((o) => o.textContent));
    const kHost = bRef.ids.find((x) => x.id === 'cuda:1').host;
    check(bopts.length === bRef.ids.length && bRef.ids.every((x) => bopts.includes(`${x.host} · ${x.id}`)) &&
      (await mem()).selected.host === kHost && (await mem()).selected.id === 'cuda:1',
    `every host's IDs are listed with their host, the highest peak chosen: ${bopts.join(', ')}`);
    const xHost = bRef.ids.find((x) => x.id === 'GPU_6_bfc').host;
    await page.selectOption('#host', xHost);
    await waitFor(page, () => window.__tt.memory.selected.id === 'GPU_6_bfc' && window.__tt.memory.breakdown, null, 'host filter');
    await waitFor(page, drawn, null, 'both: one host drawn');
    const hopts = await page.$$eval('#memory-id option', (os) => os.map((o) => o.textContent));
    const hRef = cli([tables.both, '--host', xHost, '--id', 'GPU_6_bfc', '--limit', '1']).ids[0];
    shown = await page.evaluate(() => ({ bytes: Number(document.getElementById('memory-peak-value').dataset.bytes), ts: document.getElementById('memory-peak-value').dataset.ts }));
    check(hopts.length === xRef.ids.length && hopts.every((o) => o.startsWith(xHost + ' · ')) && shown.bytes === hRef.peak.in_use && shown.ts === hRef.peak.ts_us,
      `the host filter leaves that host's IDs and picks GPU_6_bfc, peak ${shown.bytes} B at ${shown.ts} µs as the CLI's --host`);
    await page.screenshot({ path: path.join(artifacts, 'memory-7-two-hosts.png') });

    // A switch from the drop-down keeps the chart; a table without memory
    // events says so.
    await page.selectOption('#table', 'plain');
    await waitFor(page, () => window.__tt.S.table.name === 'plain' && window.__tt.memory.ids.length === 0 &&
      /No memory events/.test(document.getElementById('memory').textContent), null, 'the plain table');
    await waitFor(page, drawn, null, 'plain drawn');
    check(await page.evaluate(() => !document.getElementById('memory-strip').hidden && window.__tt.memory.selected === null),
      'switching to a table without memory events keeps the chart, empty, and the tab says there are none');

    pass(errors, t0);
  } finally {
    await cleanUp(browser, proc, dir);
  }
}

run(main);
