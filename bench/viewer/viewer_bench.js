// Browser benchmark of the built-in viewer (never run by ctest): headless
// Debian chromium driven by playwright-core (tests/viewer/node_modules),
// 1600x900, against `tracetable serve` on given tables.
//
// Per table, for the tile viewer (this build) and, with --json-path, for the
// previous Chrome-trace JSON viewer (query/viewer at git rev --old-rev,
// served by a small proxy in front of the same server, /window unchanged):
//   - time from navigation to the first `ready` (all visible tiles drawn);
//   - keypress -> ready for five `w`, five `s` (back over views already
//     seen), `a`/`d` pans, and wheel zooms;
//   - requests, bytes received (tile answers, uncompressed, and on the wire
//     when the browser reports it) and JS heap after each step.
// Prints one JSON object per table and path; medians over --reps fresh
// browser contexts.
//
// usage: node bench/viewer/viewer_bench.js --build BUILD [--reps N]
//          [--json-path] [--old-rev REV] [--settle MS] [--log FILE] TABLE.tracetable...
// --settle: pause after each step's `ready` (150 ms) before the next input;
// prefetches answered in it count to the step (a longer pause lets prefetch
// that waits for an idle view happen, as between a person's key presses).
// --log: one JSON line per response on the wire (tile viewer): the step it
// finished in, the step whose view asked for it, URL, wire bytes, level,
// track group, why (visible / side / near; 'other' for non-tile requests).
'use strict';

const path = require('path');
const fs = require('fs');
const os = require('os');
const http = require('http');
const { spawn, execFileSync } = require('child_process');

const repo = path.resolve(__dirname, '..', '..');
const { chromium } = require(path.join(repo, 'tests', 'viewer', 'node_modules', 'playwright-core'));

function parseArgs(argv) {
  const o = { build: path.join(repo, 'build'), reps: 3, jsonPath: false, oldRev: '2ae76ae', settle: 150, tables: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--build') o.build = argv[++i];
    else if (a === '--reps') o.reps = Number(argv[++i]);
    else if (a === '--json-path') o.jsonPath = true;
    else if (a === '--old-rev') o.oldRev = argv[++i];
    else if (a === '--settle') o.settle = Number(argv[++i]);
    else if (a === '--log') o.log = argv[++i];
    else o.tables.push(a);
  }
  return o;
}

function startServer(cli, tables) {
  return new Promise((resolve, reject) => {
    const proc = spawn(cli, ['serve', ...tables, '--port', '0', '--cache-mb', '256'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error('server did not start: ' + out)), 60000);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /serving .* at (http:\/\/[^ ]+\/)/.exec(out);
      if (m) { clearTimeout(timer); resolve({ proc, url: m[1] }); }
    });
    proc.on('exit', (code) => reject(new Error(`server exited (${code}): ${out}`)));
  });
}

// The previous viewer's files from git, served in front of the same server
// (everything but its own files is passed through).
function startOldViewer(rev, target) {
  const files = {};
  for (const f of ['index.html', 'viewer.js', 'viewer.css', 'favicon.svg']) {
    files['/' + (f === 'index.html' ? '' : f)] = execFileSync('git', ['-C', repo, 'show', `${rev}:query/viewer/${f}`]);
  }
  const types = { '/': 'text/html', '/viewer.js': 'application/javascript', '/viewer.css': 'text/css', '/favicon.svg': 'image/svg+xml' };
  const t = new URL(target);
  const server = http.createServer((req, res) => {
    const p = req.url.split('?')[0];
    if (files[p]) { res.writeHead(200, { 'Content-Type': types[p], 'Cache-Control': 'no-cache' }); res.end(files[p]); return; }
    const up = http.request({ host: t.hostname, port: t.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    up.on('error', () => { res.writeHead(502); res.end(); });
    req.pipe(up);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}/` })));
}

const median = (a) => { const s = a.filter((x) => x !== null && !isNaN(x)).sort((x, y) => x - y); return s.length ? s[(s.length - 1) >> 1] : null; };

// Page-side instrumentation: key/wheel timestamps and when the view is next
// complete. Tile viewer: body.dataset.viewState; JSON viewer: no request in
// flight and its answer installed.
const INSTRUMENT = () => {
  window.__bench = { t: 0, readyAt: 0, seq: 0 };
  for (const type of ['keydown', 'wheel']) {
    window.addEventListener(type, () => { window.__bench.t = performance.now(); window.__bench.readyAt = 0; window.__bench.seq++; }, { capture: true });
  }
  const obs = () => {
    const o = new MutationObserver(() => {
      if (document.body.dataset.viewState === 'ready') {
        if (!window.__bench.firstReady) window.__bench.firstReady = performance.now();
        window.__bench.readyAt = performance.now();
      }
    });
    o.observe(document.body, { attributes: true, attributeFilter: ['data-view-state'] });
  };
  if (document.body) obs(); else document.addEventListener('DOMContentLoaded', obs);
};

async function waitTilesReady(page) {
  await page.waitForFunction(() => window.__tt && window.__tt.readySeq === window.__tt.viewSeq &&
    document.body.dataset.viewState === 'ready' && window.__bench.readyAt >= window.__bench.t, null, { timeout: 120000, polling: 'raf' });
  return page.evaluate(() => window.__bench.readyAt - window.__bench.t);
}

// The JSON viewer has no readiness signal: done when, two frames after the
// input, nothing is in flight and the data covers the view.
async function waitJsonReady(page) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.waitForFunction(() => {
    const tt = window.__tt;
    if (!tt || tt.inflight !== 0 || !tt.ready) return false;
    const d = tt.S.data, v = tt.S.view;
    if (!d) return false;
    const pw = Math.max(50, document.getElementById('tracks').width / (window.devicePixelRatio || 1) - 220);
    const res = (v[1] - v[0]) / pw;
    return d.start <= Math.max(tt.S.full[0], v[0]) + 1e-9 && d.end >= Math.min(tt.S.full[1], v[1]) - 1e-9 &&
      d.res <= res * 1.001 && d.res >= res / 3;
  }, null, { timeout: 300000, polling: 'raf' });
  return page.evaluate(() => { window.__bench.readyAt = performance.now(); return window.__bench.readyAt - window.__bench.t; });
}

async function runOnce(browser, baseUrl, table, tiles, o) {
  const context = await browser.newContext({ viewport: { width: 1600, height: 900 } });
  const page = await context.newPage();
  let wire = 0, wireSeen = 0;
  const wireByUrl = new Map();
  let stepNo = -1;  // the step being measured (-1: first load)
  const finished = [];
  context.on('requestfinished', async (req) => {
    try {
      const during = stepNo;
      const s = await req.sizes();
      wire += s.responseBodySize + s.responseHeadersSize;
      const u = new URL(req.url()).pathname + new URL(req.url()).search;
      wireByUrl.set(u, s.responseBodySize + s.responseHeadersSize);
      finished.push({ during, url: u, wire: s.responseBodySize + s.responseHeadersSize });
      wireSeen++;
    } catch (e) { /* gone */ }
  });
  // Wire bytes of the tiles a step needed for its visible area (the rest
  // is prefetch: tracks a screen away, tiles left and right of the view).
  const visibleWire = async (from) => {
    const urls = await page.evaluate((n) => window.__tt.requests.slice(n).filter((r) => r.visible).map((r) => r.url), from);
    return urls.reduce((s, u) => s + (wireByUrl.get(u) || 0), 0);
  };
  // Wire bytes of the step's prefetch requests by reason (why: 'side' = the
  // tiles left/right of the view, 'near' = groups a screen above/below).
  const prefetchWire = async (from) => {
    const recs = await page.evaluate((n) => window.__tt.requests.slice(n).filter((r) => !r.visible).map((r) => [r.why, r.url]), from);
    const out = { side: 0, near: 0 };
    for (const [why, u] of recs) out[why] = (out[why] || 0) + (wireByUrl.get(u) || 0);
    return out;
  };
  const visibleTracks = () => page.evaluate(() => {
    const sc = document.getElementById('scroller');
    return window.__tt.S.rows.filter((r) => r.kind === 'track' && r.y + r.h > sc.scrollTop && r.y < sc.scrollTop + sc.clientHeight).length;
  });
  await page.addInitScript(INSTRUMENT);
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable');
  const heap = async () => {
    const m = await cdp.send('Performance.getMetrics');
    const h = m.metrics.find((x) => x.name === 'JSHeapUsedSize');
    return h ? Math.round(h.value / 1048576 * 10) / 10 : null;
  };
  const reqCount = () => page.evaluate(() => (window.__tt.requests || []).length);
  const tileBytes = () => page.evaluate(() => (window.__tt.requests || []).reduce((s, r) => s + (r.bytes || 0), 0));
  await page.goto(`${baseUrl}#table=${encodeURIComponent(table)}`);
  let first;
  if (tiles) {
    await page.waitForFunction(() => window.__bench.firstReady > 0 && window.__tt && window.__tt.readySeq === window.__tt.viewSeq, null, { timeout: 120000, polling: 'raf' });
    first = await page.evaluate(() => window.__bench.firstReady);
  } else {
    await page.evaluate(() => { window.__bench.t = 0; });
    first = await waitJsonReady(page);
  }
  const out = { first_ready_ms: Math.round(first), first_heap_mb: await heap(), steps: [],
    visible_tracks: await visibleTracks() };
  const box = await page.locator('#tracks').boundingBox();
  // Zoom around a third of the plot, where the trace is busy.
  await page.mouse.move(box.x + 220 + (box.width - 220) * 0.37, box.y + 100);
  await page.waitForTimeout(300);
  // Last, pans right after zooming into views not seen ('w2', then
  // 'd-fresh'/'a-fresh': what a pan costs when prefetch has not guessed it).
  const plan = [['w', 5], ['s', 5], ['d', 2], ['a', 2], ['wheel-in', 3], ['wheel-out', 3],
    ['w2', 7, 'w'], ['d-fresh', 2, 'd'], ['a-fresh', 2, 'a']];
  const stepStarts = [];  // index into __tt.requests where each step began
  for (const [label, times, key] of plan) {
    const what = key || label;
    for (let i = 0; i < times; i++) {
      const r0 = await reqCount(), b0 = tiles ? await tileBytes() : 0, w0 = wire;
      stepNo = out.steps.length;
      stepStarts.push(r0);
      if (what === 'wheel-in' || what === 'wheel-out') await page.mouse.wheel(0, what === 'wheel-in' ? -462 : 462);  // 2x
      else await page.keyboard.press(what);
      const ms = tiles ? await waitTilesReady(page) : await waitJsonReady(page);
      await page.waitForTimeout(tiles ? o.settle : 50);  // prefetches settle before the next step's count
      out.steps.push({ step: label, ms: Math.round(ms * 10) / 10, requests: (await reqCount()) - r0,
        tile_bytes: tiles ? (await tileBytes()) - b0 : null, wire_bytes: wire - w0,
        visible_wire_bytes: tiles ? await visibleWire(r0) : null,
        prefetch_wire_bytes: tiles ? await prefetchWire(r0) : null, heap_mb: await heap() });
    }
  }
  out.wire_requests_seen = wireSeen;
  if (o.log && tiles) {
    const recs = await page.evaluate(() => window.__tt.requests.map((r) => ({ url: r.url, level: r.level, k: r.k, tracks: r.tracks, why: r.why, status: r.status })));
    const askedIn = (i) => { let s = -1; for (let j = 0; j < stepStarts.length; j++) if (stepStarts[j] <= i) s = j; return s; };
    const byUrl = new Map();
    recs.forEach((r, i) => { const l = byUrl.get(r.url) || []; l.push({ ...r, asked: askedIn(i) }); byUrl.set(r.url, l); });
    const label = (n) => (n < 0 ? 'first' : out.steps[n].step);
    const lines = finished.map((f) => {
      const r = (byUrl.get(f.url) || [null])[0];
      return JSON.stringify({ table, rep: o.rep, during: f.during, during_step: label(f.during),
        asked: r ? r.asked : null, asked_step: r ? label(r.asked) : null, why: r ? r.why : 'other',
        level: r ? r.level : null, k: r ? r.k : null, tracks: r ? r.tracks : null,
        times_asked: r ? byUrl.get(f.url).length : 0, wire: f.wire, url: f.url });
    });
    fs.appendFileSync(o.log, lines.join('\n') + '\n');
  }
  await context.close();
  return out;
}

function summarize(runs) {
  const s = { first_ready_ms: median(runs.map((r) => r.first_ready_ms)), first_heap_mb: median(runs.map((r) => r.first_heap_mb)),
    visible_tracks: runs[0].visible_tracks, steps: {} };
  const groups = {};
  for (const r of runs) for (const st of r.steps) (groups[st.step] = groups[st.step] || []).push(st);
  for (const [k, list] of Object.entries(groups)) {
    s.steps[k] = {
      n: list.length,
      ms_median: median(list.map((x) => x.ms)), ms_max: Math.max(...list.map((x) => x.ms)),
      requests_median: median(list.map((x) => x.requests)),
      tile_kb_median: list[0].tile_bytes === null ? null : Math.round(median(list.map((x) => x.tile_bytes)) / 1024),
      wire_kb_median: Math.round(median(list.map((x) => x.wire_bytes)) / 1024),
      visible_wire_kb_median: list[0].visible_wire_bytes === null ? null : Math.round(median(list.map((x) => x.visible_wire_bytes)) / 1024),
      side_wire_kb_median: list[0].prefetch_wire_bytes ? Math.round(median(list.map((x) => x.prefetch_wire_bytes.side)) / 1024) : null,
      near_wire_kb_median: list[0].prefetch_wire_bytes ? Math.round(median(list.map((x) => x.prefetch_wire_bytes.near)) / 1024) : null,
      heap_mb_max: Math.max(...list.map((x) => x.heap_mb || 0)),
    };
  }
  return s;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (!o.tables.length) throw new Error('usage: viewer_bench.js --build BUILD [--reps N] [--json-path] TABLE...');
  const cli = path.join(o.build, 'cli', 'tracetable');
  const { proc, url } = await startServer(cli, o.tables);
  let old = null;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--no-first-run', '--disable-sync', '--disable-dev-shm-usage', '--enable-precise-memory-info'],
  });
  try {
    if (o.jsonPath) {
      // A shallow clone (CI) may not hold the old revision: measure tiles alone then.
      try { old = await startOldViewer(o.oldRev, url); } catch (e) {
        console.error(`viewer_bench: previous viewer (git ${o.oldRev}) unavailable, JSON path skipped: ${e.message.split('\n')[0]}`);
      }
    }
    for (const t of o.tables) {
      const name = path.basename(t).replace(/\.tracetable$/, '');
      for (const [label, base, tiles] of [['tiles', url, true], ...(old ? [['json', old.url, false]] : [])]) {
        const runs = [];
        for (let r = 0; r < o.reps; r++) runs.push(await runOnce(browser, base, name, tiles, { ...o, rep: r }));
        console.log(JSON.stringify({ table: name, path: label, reps: o.reps, summary: summarize(runs), runs }));
      }
    }
  } finally {
    await browser.close();
    if (old) old.server.close();
    proc.kill('SIGINT');
  }
}

main().catch((e) => { console.error('viewer_bench:', e.stack || e.message); process.exit(1); });
