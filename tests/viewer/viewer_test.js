// Browser test of the built-in viewer: builds a sample table, starts
// `tracetable serve` on a free port, drives headless Chromium with
// playwright-core and checks that the page reaches `ready`, draws for a
// track exactly what the tiles hold, zooms with finer tiles, leaves no stale
// drawing when requests are cancelled, shows an event's arguments and lands
// on search matches.
// Screenshots go to tests/viewer/artifacts/.
//
// usage: node viewer_test.js [BUILD_DIR]   (run.sh installs what it needs)
'use strict';

const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { tracetable, gen, artifacts, check, waitFor, startServer, launch, collectErrors, pass, cleanUp, run } = require('./harness');

const idle = () => window.__tt.inflight === 0 && window.__tt.ready && document.body.dataset.viewState === 'ready';
const ready = () => document.body.dataset.viewState === 'ready' && window.__tt.readySeq === window.__tt.viewSeq;

// Decodes a tile answer (docs/api.md) the way the page must read it; times
// as the page computes them (origin + ps from the table start / 1e6).
function decodeTile(buf, origin) {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const pad8 = (n) => (n + 7) & ~7;
  const start = Number(dv.getBigInt64(8, true));
  const T = dv.getUint32(44, true), n = dv.getUint32(48, true);
  let off = 64;
  const tracks = [];
  let from = 0;
  for (let t = 0; t < T; t++) {
    const c = dv.getUint32(off + 4 * T + 4 * t, true);
    tracks.push({ id: dv.getUint32(off + 4 * t, true), from, to: from + c });
    from += c;
  }
  off = pad8(off + 8 * T);
  const col8 = (j, i) => off + 8 * n * j + 8 * i;
  const col4 = (j, i) => off + 48 * n + 4 * n * j + 4 * i;
  const items = [];
  for (let i = 0; i < n; i++) {
    const kb = dv.getUint8(off + 48 * n + 24 * n + i);
    items.push({
      ts: origin + (start + Number(dv.getBigInt64(col8(0, i), true))) / 1e6,
      dur: Number(dv.getBigInt64(col8(1, i), true)) / 1e6,
      id: Number(dv.getBigUint64(col8(2, i), true)),
      lane: dv.getUint32(col4(2, i), true), count: dv.getUint32(col4(3, i), true),
      kind: kb & 127, summary: (kb & 128) !== 0,
      track: tracks.find((t) => i >= t.from && i < t.to).id,
    });
  }
  return items;
}

function makeSample(dir) {
  const trace = path.join(dir, 'sample.json');
  const table = path.join(dir, 'sample.tracetable');
  if (fs.existsSync(gen)) {
    execFileSync(gen, ['--events', '200000', '--hosts', '2', '--devices', '2', '--seed', '1', '-o', trace], { stdio: 'ignore' });
  } else {
    // No bench build: a small nested trace written here.
    const ev = [];
    for (let p = 1; p <= 2; p++) {
      ev.push({ ph: 'M', name: 'process_name', pid: p, tid: 0, args: { name: `host-${p}` } });
      for (let t = 1; t <= 3; t++) {
        let ts = 0;
        for (let i = 0; i < 4000; i++) {
          const d = 20 + ((i * 7919 + t * 31) % 200);
          ev.push({ ph: 'X', pid: p, tid: t, ts, dur: d, name: `step.${i % 50}`, args: { i } });
          ev.push({ ph: 'X', pid: p, tid: t, ts: ts + 2, dur: d / 3, name: `fusion.${i % 97}`, args: { i, k: 'v' } });
          ts += d + 5;
        }
      }
    }
    fs.writeFileSync(trace, JSON.stringify({ traceEvents: ev }));
  }
  execFileSync(tracetable, ['ingest', trace, '-o', table, '--force', '-q']);
  // A small two-host table (one input file per host).
  const inputs = [];
  for (const host of ['alpha', 'beta']) {
    const ev = [{ ph: 'M', name: 'process_name', pid: 1, tid: 0, args: { name: `${host} worker` } }];
    for (let i = 0; i < 2000; i++) {
      ev.push({ ph: 'X', pid: 1, tid: 1, ts: 1000 + i * 50, dur: 40, name: `${host}.step`, args: { i } });
      ev.push({ ph: 'X', pid: 1, tid: 1, ts: 1005 + i * 50, dur: 20, name: `${host}.inner.${i % 7}` });
    }
    const f = path.join(dir, `${host}.json`);
    fs.writeFileSync(f, JSON.stringify({ traceEvents: ev }));
    inputs.push(f);
  }
  execFileSync(tracetable, ['ingest', ...inputs, '-o', path.join(dir, 'hosts.tracetable'), '--force', '-q']);
  return dir;
}

// What the page draws for one track is exactly what its tiles hold
// (fetched again here and decoded by the test's own decoder); `label` names
// the view. Returns the draw log and the track's probe.
async function checkDrawnAreTiles(page, url, table, label) {
  const probe = await page.evaluate(() => {
    const row = window.__tt.S.rows.find((r) => r.kind === 'track' && r.track.kind === 'thread');
    window.__tt.logTrack = row.track.id;
    window.__tt.setView(window.__tt.S.view[0], window.__tt.S.view[1]);
    return { track: row.track.id, origin: window.__tt.S.full[0] };
  });
  await waitFor(page, ready, null, 'redraw with the draw log');
  const drawn = await page.evaluate(() => window.__tt.lastDraw);
  check(drawn && drawn.track === probe.track && drawn.tiles.length > 0 && drawn.tiles.every((t) => t.exact && t.level === drawn.level),
    `${label}: track ${probe.track} drawn from ${drawn.tiles.length} tiles of level ${drawn.level}`);
  const expected = new Set();
  for (const t of drawn.tiles) {
    const k = Math.round((t.start - probe.origin) * 1e6 / (512 * 1000 * 2 ** drawn.level));
    const res = await fetch(`${url}api/tables/${table}/tile?level=${drawn.level}&k=${k}&tracks=${probe.track}`);
    check(res.status === 200 && res.headers.get('etag'), `tile k=${k} fetched with ETag ${res.headers.get('etag')}`);
    for (const it of decodeTile(new Uint8Array(await res.arrayBuffer()), probe.origin)) {
      const [v0, v1] = drawn.view;
      const slice = it.kind === 0;
      if (slice ? (it.ts > v1 || it.ts + it.dur < v0) : (it.ts < v0 || it.ts > v1)) continue;
      expected.add(it.summary ? `s:${it.ts}:${it.lane}:${it.count}` : `e:${it.id}`);
    }
  }
  const got = new Set(drawn.items);
  const missing = [...expected].filter((x) => !got.has(x)), extra = [...got].filter((x) => !expected.has(x));
  check(expected.size > 0 && missing.length === 0 && extra.length === 0,
    `${label}: drawn items of track ${probe.track} = its tiles' items in view (${got.size} items; missing ${missing.slice(0, 3)}, extra ${extra.slice(0, 3)})`);
  await page.evaluate(() => { window.__tt.logTrack = undefined; });
  return { drawn, probe };
}

async function main() {
  const t0 = Date.now();
  fs.mkdirSync(artifacts, { recursive: true });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-viewer-'));
  const tables = makeSample(dir);
  const { proc, url } = await startServer(tables);
  let browser;
  const errors = [];
  try {
    browser = await launch();
    const page = await browser.newPage({ viewport: { width: 1500, height: 900 } });
    // /event answers 404 for events without arguments (shown as such).
    collectErrors(page, errors, /\/event\?id=/);
    await page.goto(url + '#table=sample');

    // 1. First render.
    await waitFor(page, () => document.body.dataset.viewState === 'ready' && window.__tt.inflight === 0 && window.__tt.eventsDrawn > 0, null, 'first render (viewState ready)');
    const first = await page.evaluate(() => ({ drawn: window.__tt.eventsDrawn, reqs: window.__tt.requests.map((r) => ({ ...r })) }));
    check(first.reqs.length >= 1 && first.reqs[0].status === 200 && /\/tile\?/.test(first.reqs[0].url), `first tile request answered (${first.reqs[0].url})`);
    check(first.drawn > 100, `first render drew ${first.drawn} events/summaries`);
    await page.screenshot({ path: path.join(artifacts, '01-initial.png') });

    // 1b. The first view's tiles do not wait for the loader worker: with its
    // script held back, the page asks for them itself and hands their bodies
    // to the worker, which decodes them once it runs; what is drawn is
    // exactly their items, and later requests go through the worker. The
    // table list and the first table's answer (no table in the URL:
    // "hosts") came with the page, not asked for.
    {
      const p2 = await browser.newPage({ viewport: { width: 1500, height: 900 } });
      collectErrors(p2, errors, /\/event\?id=/);
      let release;
      const held = new Promise((r) => { release = r; });
      await p2.route('**/tile_worker.js', async (route) => { await held; await route.continue(); });
      await p2.goto(url);
      await waitFor(p2, () => window.__tt && window.__tt.requests.length > 0, null, 'first tile requests, worker held back');
      await p2.waitForTimeout(300);
      check(!(await p2.evaluate(() => window.__tt.loaderUp())), 'the worker is not up while its script is held back');
      release();
      await waitFor(p2, () => document.body.dataset.viewState === 'ready' && window.__tt.inflight === 0 && window.__tt.eventsDrawn > 0, null, 'first render');
      const f = await p2.evaluate(() => ({ via: window.__tt.requests.map((r) => r.via), boot: window.__tt.bootUsed, table: window.__tt.S.table.name,
        asked: performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname).filter((x) => x.startsWith('/api/tables') && !x.endsWith('/tile')) }));
      check(f.table === 'hosts' && f.boot.tables && f.boot.table && f.asked.length === 0,
        `table list and table answer came with the page (table ${f.table}; asked for: ${f.asked.join(' ') || 'nothing'})`);
      check(f.via.length > 0 && f.via.every((v) => v === 'page'), `worker held back: the first view's ${f.via.length} tiles asked by the page`);
      await checkDrawnAreTiles(p2, url, 'hosts', 'first view, fetched by the page');
      await waitFor(p2, () => window.__tt.loaderUp(), null, 'the worker up');
      const n = await p2.evaluate(() => window.__tt.requests.length);
      await p2.keyboard.press('w');
      await waitFor(p2, () => document.body.dataset.viewState === 'ready' && window.__tt.readySeq === window.__tt.viewSeq, null, 'zoom with the worker up');
      const later = await p2.evaluate((k) => window.__tt.requests.slice(k).map((r) => r.via), n);
      check(later.length > 0 && later.every((v) => v === 'worker'), `worker up: the next ${later.length} tiles fetched by the worker`);
      await checkDrawnAreTiles(p2, url, 'hosts', 'zoomed, fetched by the worker');
      await p2.close();
    }

    // 2. Zoom in three steps with the keyboard (around the plot's middle).
    const box = await page.locator('#tracks').boundingBox();
    await page.mouse.move(box.x + 220 + (box.width - 220) * 0.13, box.y + 60);
    let lastRes = first.reqs[first.reqs.length - 1].resolution_us;
    for (let step = 1; step <= 3; step++) {
      const before = await page.evaluate(() => window.__tt.requests.length);
      await page.keyboard.press('w');
      await page.keyboard.press('w');
      // Two presses: the answer to the first may be dropped as stale, then
      // the viewer asks again at the finer resolution.
      // The finest of the step's requests (groups a screen away are asked
      // for coarser tiles).
      await waitFor(page, ([n, res]) => {
        const r = window.__tt.requests.slice(n).filter((x) => x.visible);
        return r.length > 0 && window.__tt.inflight === 0 && r.every((x) => x.status === 200 || x.status === 'cancelled') &&
          Math.min(...r.map((x) => x.resolution_us)) < res / 2 && window.__tt.loads > 0;
      }, [before, lastRes], `zoom step ${step} answer`);
      await page.waitForTimeout(50);
      const st = await page.evaluate((n) => ({ res: Math.min(...window.__tt.requests.slice(n).filter((x) => x.visible).map((x) => x.resolution_us)),
        drawn: window.__tt.eventsDrawn }), before);
      check(st.res < lastRes / 2, `zoom step ${step}: resolution ${st.res.toFixed(4)} us < ${(lastRes / 2).toFixed(4)} us`);
      check(st.drawn > 0, `zoom step ${step}: drew ${st.drawn} items`);
      lastRes = st.res;
    }
    await page.screenshot({ path: path.join(artifacts, '02-zoomed.png') });

    // 2a. Prefetch policy, for a fresh view once its prefetches are in:
    // nothing but visible tiles until the view has been ready for 250 ms;
    // then groups off screen are asked at least two levels coarser, on a
    // level that is a multiple of 3; after this zoom, no neighbour tile
    // left or right, however long the view stays (watched 1.5 s past the
    // prefetches, beyond the 1 s after which they used to come).
    const pf0 = await page.evaluate(() => {
      window.__tt.dropTiles();
      const v = window.__tt.S.view;
      const a = v[0] + (v[1] - v[0]) * 0.3;
      window.__tt.setView(a, a + (v[1] - v[0]) * 0.6);
      return window.__tt.requests.length;
    });
    await waitFor(page, () => document.body.dataset.viewState === 'ready' && window.__tt.prefetchSeq === window.__tt.viewSeq &&
      window.__tt.inflight === 0, null, 'view and prefetches in');
    await page.waitForTimeout(1500);
    const pf = await page.evaluate((n) => {
      const { axis } = window.__tt;
      const level = axis.tileLevel();
      const nearLevel = Math.ceil((level + 2) / 3) * 3;
      const reqs = window.__tt.requests.slice(n).filter((r) => r.status !== 'cancelled');
      const visibleGroups = new Set(reqs.filter((r) => r.visible).map((r) => r.tracks));
      const pre = reqs.filter((x) => !x.visible);
      const bad = pre.filter((r) => !(r.level === nearLevel && !visibleGroups.has(r.tracks))).map((r) => `${r.level}/${r.k}/${r.tracks}/${r.why}`);
      return { level, near: pre.filter((r) => r.level === nearLevel).length, bad,
        early: Math.min(...pre.map((r) => r.t0 - window.__tt.readySince)), seqNow: window.__tt.viewSeq };
    }, pf0);
    check(pf.near > 0 && pf.early >= 249,
      `prefetches asked only once the view was ready: ${pf.near} of groups a screen away after ${Math.round(pf.early)} ms (≥ 250)`);
    check(pf.bad.length === 0,
      `after a zoom only coarser tiles of groups a screen away, no neighbours, 1.5 s on (level ${pf.level})${pf.bad.length ? '; not: ' + pf.bad.slice(0, 3) : ''}`);
    // After a pan (the span kept) to a view not seen, the neighbour on the
    // side it went to comes at 250 ms, the other side's never.
    const pan0 = await page.evaluate(() => {
      window.__tt.dropTiles();
      const [a, b] = window.__tt.S.view;
      window.__tt.setView(a + 3 * (b - a), b + 3 * (b - a));
      return window.__tt.requests.length;
    });
    await waitFor(page, () => document.body.dataset.viewState === 'ready' && window.__tt.prefetchSeq === window.__tt.viewSeq &&
      window.__tt.inflight === 0, null, 'panned view and prefetches in');
    await page.waitForTimeout(1500);
    const pan = await page.evaluate((n) => {
      const { axis, S } = window.__tt;
      const level = axis.tileLevel(), [v0, v1] = axis.view;
      const ks = axis.tilesFor(level, v0, v1), tw = 512 * 2 ** level / 1000, reach = 0.25 * (v1 - v0);
      const right = S.full[0] + (ks[ks.length - 1] + 1) * tw - v1 < reach && ks[ks.length - 1] < axis.lastTile(level);
      const side = window.__tt.requests.slice(n).filter((r) => !r.visible && r.level === level)
        .map((r) => ({ k: r.k, why: r.why, dt: r.t0 - window.__tt.readySince }));
      return { right, side, last: ks[ks.length - 1] };
    }, pan0);
    check(pan.side.every((x) => x.k === pan.last + 1 && x.why === 'side' && x.dt >= 249) && (!pan.right || pan.side.length > 0),
      `after a pan right: ${pan.side.length} right neighbours only (needed: ${pan.right}), none left, 1.5 s on`);
    // A pan onto the prefetched side is drawn from the cache: no request.
    if (pan.side.length) {
      const r0 = await page.evaluate(() => {
        const [a, b] = window.__tt.S.view;
        window.__tt.setView(a + 0.25 * (b - a), b + 0.25 * (b - a));
        return window.__tt.requests.length;
      });
      await waitFor(page, () => document.body.dataset.viewState === 'ready' && window.__tt.readySeq === window.__tt.viewSeq, null, 'pan onto the prefetched side');
      const vis = await page.evaluate((n) => window.__tt.requests.slice(n).filter((r) => r.visible).length, r0);
      check(vis === 0, `the next pan right needs no visible request (${vis})`);
    }

    // 2b. What the page draws for one track is exactly what its tiles hold.
    const { drawn, probe } = await checkDrawnAreTiles(page, url, 'sample', 'after zooms');

    // 2b'. The viewer asks for the compact layout (v=2, gzip on the wire);
    // the page's decoder turns it into exactly the columns and strings of
    // the aligned layout (v=1) for the tiles of every group at three levels.
    const layouts = await page.evaluate(async (lvl) => {
      const { decodeTile } = await import('/tile_decode.js');
      const S = window.__tt.S, out = { tiles: 0, items: 0, diffs: [], v2bytes: 0, v1bytes: 0 };
      for (const level of [lvl + 2, lvl, Math.max(0, lvl - 3)]) {
        for (const g of S.groups) {
          for (const k of [0, 1, 5]) {
            const base = `/api/tables/sample/tile?level=${level}&k=${k}&tracks=${g.key}`;
            const [a, b] = await Promise.all([fetch(base), fetch(base + '&v=2')]);
            if (a.status !== 200 || b.status !== 200) continue;
            const [ba, bb] = [await a.arrayBuffer(), await b.arrayBuffer()];
            out.v1bytes += ba.byteLength; out.v2bytes += bb.byteLength;
            const x = decodeTile(ba, S.full[0]), y = decodeTile(bb, S.full[0]);
            out.tiles++; out.items += x.n;
            for (const f of ['level', 'start', 'width', 'res', 'n']) if (x[f] !== y[f]) out.diffs.push(`${base} ${f}`);
            if (JSON.stringify(x.tracks) !== JSON.stringify(y.tracks)) out.diffs.push(`${base} tracks`);
            if (JSON.stringify(x.strings) !== JSON.stringify(y.strings)) out.diffs.push(`${base} strings`);
            for (const c of Object.keys(x.cols)) {
              const p = x.cols[c], q = y.cols[c];
              if (p.length !== q.length || p.some((v, i) => !Object.is(v, q[i]))) out.diffs.push(`${base} ${c}`);
            }
          }
        }
      }
      out.asked = window.__tt.requests.filter((r) => /\/tile\?/.test(r.url)).every((r) => /&v=2$/.test(r.url));
      return out;
    }, drawn.level);
    check(layouts.tiles >= 6 && layouts.items > 0 && layouts.diffs.length === 0,
      `compact and aligned tiles decode to the same columns (${layouts.tiles} tiles, ${layouts.items} items, ${layouts.v2bytes} vs ${layouts.v1bytes} bytes; diffs ${layouts.diffs.slice(0, 3)})`);
    check(layouts.v2bytes < layouts.v1bytes / 2 && layouts.asked, 'the viewer asks for the compact layout, under half the bytes');

    // 2c. A request cancelled by the view moving on leaves no stale drawing:
    // tiles one level finer answer slowly; zoom in and straight back out.
    const lvl = drawn.level;
    await page.context().route(new RegExp(`/tile\\?level=${lvl - 1}&`), async (route) => {
      await new Promise((r) => setTimeout(r, 1500));
      try { await route.continue(); } catch (e) { /* cancelled meanwhile */ }
    });
    const cancelledBefore = await page.evaluate(() => window.__tt.cancelled);
    await page.evaluate((id) => { window.__tt.logTrack = id; }, probe.track);
    await page.keyboard.press('w');
    await waitFor(page, () => document.body.dataset.viewState === 'loading' && window.__tt.lastDraw &&
      window.__tt.lastDraw.level < window.__tt.lastDraw.tiles.reduce((m, t) => Math.max(m, t.level), -1), null, 'finer tiles loading');
    // Meanwhile the cached coarser tiles are drawn in their place.
    const standIn = await page.evaluate(() => window.__tt.lastDraw);
    check(standIn.tiles.length > 0 && standIn.tiles.every((t) => !t.exact && t.level === standIn.level + 1) && standIn.items.length > 0,
      `while level-${standIn.level} tiles load, ${standIn.tiles.length} cached level-${standIn.level + 1} tiles stand in (${standIn.items.length} items drawn)`);
    await page.keyboard.press('s');
    await waitFor(page, ready, null, 'back to the cached level');
    const c1 = await page.evaluate(() => ({ cancelled: window.__tt.cancelled, state: document.body.dataset.viewState }));
    check(c1.cancelled > cancelledBefore, `zooming back cancelled ${c1.cancelled - cancelledBefore} pending tile requests`);
    await page.waitForTimeout(1800);  // the slow answers would have arrived by now
    await page.evaluate(() => { window.__tt.logTrack = window.__tt.S.rows.find((r) => r.kind === 'track' && r.track.kind === 'thread').track.id; window.__tt.setView(window.__tt.S.view[0], window.__tt.S.view[1]); });
    await waitFor(page, ready, null, 'redraw after the slow answers');
    const after = await page.evaluate(() => window.__tt.lastDraw);
    check(after.level === lvl && after.tiles.every((t) => t.exact && t.level === lvl) && new Set(after.items).size === new Set(drawn.items).size,
      `after cancelling, only level-${lvl} tiles are drawn (${after.tiles.length} tiles, ${new Set(after.items).size} items)`);
    await page.evaluate(() => { window.__tt.logTrack = undefined; });
    await page.context().unrouteAll({ behavior: 'ignoreErrors' });
    await page.screenshot({ path: path.join(artifacts, '02b-after-cancel.png') });

    // 3. Click an event: the details panel shows it and its arguments.
    const target = await page.evaluate(() => window.__tt.visibleEvent(8));
    check(target !== null, `an event is on screen to click (${target && target.name})`);
    await page.mouse.click(target.x, target.y);
    await waitFor(page, () => window.__tt.argsShown > 0 && document.getElementById('args') &&
      document.getElementById('args').textContent !== 'loading…', null, 'event arguments');
    const details = await page.evaluate(() => ({ sel: window.__tt.selected, text: document.getElementById('details').innerText }));
    check(details.sel && details.sel.id === target.id, `clicked event ${target.id} is selected`);
    check(details.text.includes(target.name), 'details panel names the event');
    const argsText = await page.locator('#args').innerText();
    check(argsText.startsWith('{') || argsText === '(no arguments)', `arguments shown: ${argsText.slice(0, 60).replace(/\s+/g, ' ')}`);
    await page.screenshot({ path: path.join(artifacts, '03-details.png') });

    // 4. Search and land on matches.
    const name = fs.existsSync(gen) ? 'all-reduce' : 'fusion.3';
    await page.fill('#search', name);
    await page.press('#search', 'Enter');
    await waitFor(page, () => window.__tt.searchLanded >= 1, null, 'first search match');
    await waitFor(page, idle, null, 'window after search');
    await waitFor(page, () => window.__tt.selected && window.__tt.lastMatch && window.__tt.selected.id === window.__tt.lastMatch.id,
      null, 'match selected');
    let m = await page.evaluate(() => ({ last: window.__tt.lastMatch, view: window.__tt.S.view, count: document.getElementById('search-count').textContent }));
    check(m.last.name.toLowerCase().includes(name), `landed on match "${m.last.name}" (${m.count})`);
    check(m.view[0] <= m.last.ts && m.last.ts <= m.view[1], 'the match is inside the view');
    await page.press('#search', 'Enter');
    await waitFor(page, () => window.__tt.searchLanded >= 2, null, 'second search match');
    await waitFor(page, idle, null, 'window after second match');
    const m2 = await page.evaluate(() => ({ last: window.__tt.lastMatch, view: window.__tt.S.view, drawn: window.__tt.eventsDrawn }));
    check(m2.last.index === 1 && m2.last.ts >= m.last.ts, `next match #2 at or after the first (${m2.last.name})`);
    check(m2.view[0] <= m2.last.ts && m2.last.ts <= m2.view[1] && m2.drawn > 0, 'second match in view and drawn');
    await page.screenshot({ path: path.join(artifacts, '04-search.png') });

    // 5. Stats for the visible range; the URL hash keeps the view.
    await page.click('.tabs button[data-tab="stats"]');
    await waitFor(page, () => window.__tt.statsLoaded > 0, null, 'stats');
    const statRows = await page.locator('#stats .stats-table tr').count();
    check(statRows > 1, `stats panel lists ${statRows - 1} names`);
    await page.keyboard.press('0');
    await waitFor(page, () => window.__tt.inflight === 0 && /start=/.test(location.hash), null, 'hash');
    await page.waitForTimeout(400);
    const hash = await page.evaluate(() => location.hash);
    check(/table=sample/.test(hash) && /end=/.test(hash), `URL hash keeps the view (${hash.slice(0, 80)})`);
    await page.screenshot({ path: path.join(artifacts, '05-stats.png') });

    // 6. Another table with two hosts: the host filter appears and filters.
    await page.selectOption('#table', 'hosts');
    await waitFor(page, () => window.__tt.S.table.name === 'hosts' && window.__tt.inflight === 0 && window.__tt.loads > 1 && window.__tt.eventsDrawn > 0, null, 'hosts table', 20000);
    check(await page.isVisible('#host'), 'host filter shown for a two-host table');
    await page.selectOption('#host', 'beta');
    await waitFor(page, () => window.__tt.inflight === 0 && document.body.dataset.viewState === 'ready' &&
      window.__tt.S.rows.filter((r) => r.kind === 'process').length === 1, null, 'host-filtered view');
    const rows = await page.evaluate(() => window.__tt.S.rows.filter((r) => r.kind === 'process').map((r) => r.process.host));
    check(rows.length === 1 && rows[0] === 'beta', `only host beta's processes are laid out (${rows.join(',')})`);
    const asked = await page.evaluate(() => {
      const beta = new Set(window.__tt.S.table.processes.filter((p) => p.host === 'beta').flatMap((p) => p.tracks.map((t) => t.id)));
      const groups = [...window.__tt.S.plan.keys()];
      return groups.length > 0 && groups.every((g) => g.split(',').every((id) => beta.has(Number(id))));
    });
    check(asked, 'the view draws tiles of beta\'s tracks only');
    await page.waitForTimeout(300);
    await page.screenshot({ path: path.join(artifacts, '06-hosts.png') });

    const reqs = await page.evaluate(() => window.__tt.requests.length);
    console.log(`tile requests: ${reqs}, cancelled: ${await page.evaluate(() => window.__tt.cancelled)}`);
    pass(errors, t0);
  } finally {
    await cleanUp(browser, proc, dir);
  }
}

run(main);
