// Where the viewer's first `ready` goes (never run by ctest): a request
// waterfall and a Chrome performance trace of the first load of a table in
// headless chromium (1600x900). Per fresh browser context (same server, so
// run 1 is the server's cold one): the HTML, modules and API answers with
// their start/end, every tile with its Server-Timing (query, encode), the
// page-side time of each tile (request to decoded), and the busy time of
// the page's main thread and of the loader worker from the trace (CDP
// `Tracing`), split by what ran (script, style/layout, paint, GC).
// With --keys (e.g. wwwww), then those key presses one by one (cursor at a
// third of the plot, as bench/viewer/viewer_bench.js): per step the time to
// `ready`, each tile's page time (request to decoded) and Server-Timing,
// and the last draw's time.
//
// usage: node bench/viewer/first_load.js --build BUILD [--reps N] [--keys KEYS] [--serve-args "A B"] TABLE.tracetable
'use strict';

const path = require('path');
const { spawn } = require('child_process');

const repo = path.resolve(__dirname, '..', '..');
const { chromium } = require(path.join(repo, 'tests', 'viewer', 'node_modules', 'playwright-core'));

function args(argv) {
  const o = { build: path.join(repo, 'build'), reps: 3, serveArgs: [], keys: '', table: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--build') o.build = argv[++i];
    else if (argv[i] === '--reps') o.reps = Number(argv[++i]);
    else if (argv[i] === '--serve-args') o.serveArgs = argv[++i].split(' ').filter(Boolean);
    else if (argv[i] === '--keys') o.keys = argv[++i];
    else o.table = argv[i];
  }
  if (!o.table) throw new Error('usage: first_load.js --build BUILD [--reps N] TABLE.tracetable');
  return o;
}

function serve(cli, table, extra) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const proc = spawn(cli, ['serve', table, '--port', '0', '--cache-mb', '256', ...extra], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /serving .* at (http:\/\/[^ ]+\/)/.exec(out);
      if (m) resolve({ proc, url: m[1], startMs: Date.now() - t0 });
    });
    proc.on('exit', (code) => reject(new Error(`server exited (${code}): ${out}`)));
  });
}

// Busy time per thread and category from trace events (complete events of
// the top-level task and the work inside it).
function summarizeTrace(events) {
  const threadName = new Map();
  for (const e of events) if (e.ph === 'M' && e.name === 'thread_name') threadName.set(`${e.pid}:${e.tid}`, e.args.name);
  const cat = (n) => {
    if (/^(EvaluateScript|v8\.compile|v8\.run|FunctionCall|TimerFire|FireAnimationFrame|EventDispatch|v8\.produceModuleCache|v8\.compileModule|v8\.evaluateModule|RunMicrotasks|V8\.Execute)/.test(n)) return 'script';
    if (/^(UpdateLayoutTree|Layout|RecalculateStyles|ParseAuthorStyleSheet|UpdateLayerTree)/.test(n)) return 'style_layout';
    if (/^(Paint|PaintImage|CompositeLayers|Rasterize|Layerize|PrePaint|Commit)/.test(n)) return 'paint';
    if (/^(MinorGC|MajorGC|V8\.GC|BlinkGC)/.test(n)) return 'gc';
    if (/^ParseHTML/.test(n)) return 'parse_html';
    return null;
  };
  const out = {};
  // Top-level categories only: an event inside one already counted is skipped.
  const byThread = new Map();
  for (const e of events) {
    if (e.ph !== 'X' || !e.dur) continue;
    const name = threadName.get(`${e.pid}:${e.tid}`) || '';
    if (!/CrRendererMain|DedicatedWorker/.test(name)) continue;
    const list = byThread.get(name) || [];
    list.push(e);
    byThread.set(name, list);
  }
  for (const [name, list] of byThread) {
    list.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
    const t = { task_ms: 0 };
    let taskEnd = -1, catEnd = -1;
    for (const e of list) {
      if (e.name === 'RunTask' || e.name === 'ThreadControllerImpl::RunTask') {
        if (e.ts >= taskEnd) { t.task_ms += e.dur / 1000; taskEnd = e.ts + e.dur; }
        continue;
      }
      const c = cat(e.name);
      if (!c || e.ts < catEnd) continue;
      t[c] = (t[c] || 0) + e.dur / 1000;
      catEnd = e.ts + e.dur;
    }
    for (const k of Object.keys(t)) t[k] = Math.round(t[k] * 10) / 10;
    const key = /DedicatedWorker/.test(name) ? 'worker' : 'main';
    out[key] = t;
  }
  return out;
}

async function once(browser, url, table, keys) {
  const context = await browser.newContext({ viewport: { width: 1600, height: 900 } });
  const page = await context.newPage();
  const reqs = [];
  context.on('requestfinished', async (req) => {
    try {
      const u = new URL(req.url());
      const resp = await req.response();
      const st = (resp && (await resp.allHeaders())['server-timing']) || '';
      const s = await req.sizes();
      const tm = req.timing();
      reqs.push({ path: u.pathname + (u.pathname.endsWith('/tile') ? u.search : ''), wall0: tm.startTime,
        start: tm.requestStart, ttfb: tm.responseStart, end: tm.responseEnd, wire: s.responseBodySize + s.responseHeadersSize,
        server_timing: st });
    } catch (e) { /* gone */ }
  });
  await page.addInitScript(() => {
    window.__first = 0;
    const obs = () => new MutationObserver(() => {
      if (!window.__first && document.body.dataset.viewState === 'ready') window.__first = performance.now();
    }).observe(document.body, { attributes: true, attributeFilter: ['data-view-state'] });
    if (document.body) obs(); else document.addEventListener('DOMContentLoaded', obs);
  });
  const cdp = await context.newCDPSession(page);
  const events = [];
  cdp.on('Tracing.dataCollected', (d) => events.push(...d.value));
  const done = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
  await cdp.send('Tracing.start', { transferMode: 'ReportEvents',
    traceConfig: { includedCategories: ['devtools.timeline', 'v8.execute', 'v8', 'disabled-by-default-devtools.timeline', 'blink.user_timing', '__metadata'] } });
  const wall0 = Date.now();
  await page.goto(`${url}#table=${encodeURIComponent(table)}`);
  await page.waitForFunction(() => window.__first > 0 && window.__tt && window.__tt.readySeq === window.__tt.viewSeq, null, { timeout: 120000, polling: 'raf' });
  await cdp.send('Tracing.end');
  await done;
  const page_ = await page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    const res = performance.getEntriesByType('resource').map((e) => ({ name: new URL(e.name).pathname, start: Math.round(e.startTime), end: Math.round(e.responseEnd) }));
    return { first_ready_ms: Math.round(window.__first), html_end_ms: Math.round(nav.responseEnd), dcl_ms: Math.round(nav.domContentLoadedEventEnd),
      resources: res, draw_ms: Math.round((window.__tt.drawMs || 0) * 10) / 10, draw_total_ms: Math.round(window.__tt.drawTotalMs || 0), renders: window.__tt.renders, draws: window.__tt.draws,
      tiles: window.__tt.requests.map((r) => ({ level: r.level, k: r.k, tracks: r.tracks, visible: r.visible, via: r.via, t0: Math.round(r.t0), ms: r.ms, items: r.items, bytes: r.bytes })) };
  });
  // Playwright's request timing is relative to each request's wall start.
  const navStart = Math.min(...reqs.map((r) => r.wall0));
  for (const r of reqs) {
    const at = r.wall0 - navStart;
    r.at_ms = Math.round(at);
    r.ttfb_ms = Math.round(at + r.ttfb);
    r.end_ms = Math.round(at + r.end);
    delete r.wall0; delete r.start; delete r.ttfb; delete r.end;
  }
  reqs.sort((a, b) => a.at_ms - b.at_ms);
  const steps = [];
  if (keys) {
    const box = await page.locator('#tracks').boundingBox();
    await page.mouse.move(box.x + 220 + (box.width - 220) * 0.37, box.y + 100);
    await page.waitForTimeout(300);
    for (const key of keys) {
      const n0 = await page.evaluate(() => window.__tt.requests.length), r0 = reqs.length;
      const t0 = await page.evaluate(() => performance.now());
      await page.keyboard.press(key);
      await page.waitForFunction(() => document.body.dataset.viewState === 'ready' && window.__tt.readySeq === window.__tt.viewSeq, null, { timeout: 120000, polling: 'raf' });
      const st = await page.evaluate(([n, t]) => ({ ms: Math.round(performance.now() - t), draw_ms: Math.round(window.__tt.drawMs * 10) / 10,
        tiles: window.__tt.requests.slice(n).filter((r) => r.visible).map((r) => ({ level: r.level, k: r.k, at: Math.round(r.t0 - t), ms: r.ms, items: r.items, bytes: r.bytes })) }), [n0, t0]);
      await page.waitForTimeout(150);
      st.server_timing = reqs.slice(r0).filter((r) => /\/tile/.test(r.path)).map((r) => r.server_timing);
      steps.push({ key, ...st });
    }
  }
  await context.close();
  return { ...page_, requests: reqs, trace: summarizeTrace(events), steps, wall_ms: Date.now() - wall0 };
}

async function main() {
  const o = args(process.argv.slice(2));
  const name = path.basename(o.table).replace(/\.tracetable$/, '');
  const { proc, url, startMs } = await serve(path.join(o.build, 'cli', 'tracetable'), o.table, o.serveArgs);
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--no-first-run'] });
  try {
    for (let r = 0; r < o.reps; r++) {
      const x = await once(browser, url, name, o.keys);
      console.log(JSON.stringify({ table: name, rep: r, serve_start_ms: startMs, ...x }));
    }
  } finally {
    await browser.close();
    proc.kill('SIGINT');
  }
}

main().catch((e) => { console.error('first_load:', e.stack || e.message); process.exit(1); });
