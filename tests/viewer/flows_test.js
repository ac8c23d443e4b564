// Browser test of flows that can be followed and of thread time in the
// details (issue 12, items 3 and 7), on a real Kineto trace
// (shared/traces/kineto/df_index_resolver.json.gz, ac2g flows from
// cudaLaunchKernel to kernels):
//  - a launch selected in a view far narrower than its flow: the kernel lies
//    outside the loaded tiles, yet the arrow is drawn (its far end from
//    GET /flow), listed in the details, and "go to" shows and selects it —
//    the kernel found by brute force over the trace's JSON; "[" and "]"
//    follow the flow back and forth;
//  - coarser views with many flows draw bundles with counts, not a curtain
//    of lines;
//  - details give thread time and thread duration (tts/tdur) of an event that
//    has them, with or without arguments, and "no arguments" for `{}`, with
//    no 404 in the console.
// Screenshots go to tests/viewer/artifacts/3x-*.png.
//
// usage: node flows_test.js [BUILD_DIR]   (run.sh installs what it needs)
'use strict';

const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const zlib = require('zlib');
const { repo, tracetable, artifacts, check, waitFor, startServer, launch, collectErrors, pass, cleanUp, run } = require('./harness');

const ready = () => document.body.dataset.viewState === 'ready' && window.__tt.readySeq === window.__tt.viewSeq;
const shared = process.env.TT_SHARED_TRACES || path.join(repo, '..', 'shared', 'traces');
const kinetoPath = path.join(shared, 'kineto', 'df_index_resolver.json.gz');

// The first launch whose ac2g flow ends at least 40 µs later in a kernel,
// by brute force over the events: {launch, kernel, s, f}.
function findFlow(events) {
  const byId = new Map();
  for (const e of events) {
    if ((e.ph === 's' || e.ph === 'f') && e.cat === 'ac2g') {
      if (!byId.has(e.id)) byId.set(e.id, []);
      byId.get(e.id).push(e);
    }
  }
  const enclosing = (p) => {
    let best = null;
    for (const e of events) {
      if (e.ph !== 'X' || e.pid !== p.pid || e.tid !== p.tid || e.ts > p.ts || e.ts + e.dur < p.ts) continue;
      if (!best || e.dur < best.dur) best = e;  // the deepest: the shortest enclosing one
    }
    return best;
  };
  for (const [, l] of byId) {
    if (l.length !== 2) continue;
    const s = l.find((e) => e.ph === 's'), f = l.find((e) => e.ph === 'f');
    if (!s || !f || f.ts - s.ts < 40) continue;
    const launch = enclosing(s), kernel = enclosing(f);
    if (launch && kernel && /cudaLaunchKernel/.test(launch.name)) return { launch, kernel, s, f };
  }
  return null;
}

function makeTables(dir) {
  const kineto = JSON.parse(zlib.gunzipSync(fs.readFileSync(kinetoPath)).toString());
  const flow = findFlow(kineto.traceEvents);
  execFileSync(tracetable, ['ingest', kinetoPath, '-o', path.join(dir, 'kineto.tracetable'), '--force', '-q']);
  // Thread time: with arguments, without, and arguments that are `{}`.
  const tt = [
    { ph: 'X', pid: 1, tid: 1, ts: 100, dur: 50, tts: 1000, tdur: 30, name: 'withArgs', args: { a: 1 } },
    { ph: 'X', pid: 1, tid: 1, ts: 200, dur: 50, tts: 2000, tdur: 40, name: 'threadTimeOnly' },
    { ph: 'X', pid: 1, tid: 1, ts: 300, dur: 50, name: 'emptyArgs', args: {} },
    { ph: 'X', pid: 1, tid: 1, ts: 400, dur: 50, name: 'nothing' },
  ];
  const f = path.join(dir, 'tt.json');
  fs.writeFileSync(f, JSON.stringify({ traceEvents: tt }));
  execFileSync(tracetable, ['ingest', f, '-o', path.join(dir, 'tt.tracetable'), '--force', '-q']);
  fs.rmSync(f);
  return flow;
}

async function main() {
  const t0 = Date.now();
  if (!fs.existsSync(kinetoPath)) {
    console.log(`SKIP: ${kinetoPath} is missing (set TT_SHARED_TRACES)`);
    return;
  }
  fs.mkdirSync(artifacts, { recursive: true });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-viewer-flows-'));
  const flow = makeTables(dir);
  check(flow, `the trace has a launch whose flow ends later in a kernel: ${flow && flow.launch.name} → ${flow && flow.kernel.name} (${flow && (flow.f.ts - flow.s.ts).toFixed(3)} µs)`);
  const { proc, url } = await startServer(dir);
  let browser;
  const errors = [], notFound = [];
  try {
    browser = await launch();
    const page = await browser.newPage({ viewport: { width: 1500, height: 900 } });
    collectErrors(page, errors);
    page.on('response', (r) => { if (r.status() === 404) notFound.push(r.url()); });

    // 1. A far end outside the loaded range: a view of 6 µs around the launch.
    const a = flow.s.ts - 3, b = flow.s.ts + 3;
    await page.goto(`${url}#table=kineto&start=${a.toFixed(3)}&end=${b.toFixed(3)}`);
    await waitFor(page, () => window.__tt.S && window.__tt.S.table && window.__tt.S.table.name === 'kineto' && document.body.dataset.viewState === 'ready' && window.__tt.readySeq === window.__tt.viewSeq, null, 'kineto view');
    const launchEv = await page.evaluate((name) => window.__tt.visibleEvent(6, name), flow.launch.name);
    check(launchEv, `the launch ${flow.launch.name} is drawn`);
    const loaded = await page.evaluate((ts) => {
      const tt = window.__tt, t = tt.axis.origin + ts;
      const tiles = [...tt.S.plan.values()].flat().map((e) => [e.tile.start, e.tile.start + e.tile.width]);
      return { inView: t >= tt.axis.view[0] && t <= tt.axis.view[1], inTiles: tiles.some(([x, y]) => t >= x && t <= y) };
    }, flow.f.ts - Number((await (await fetch(url + 'api/tables/kineto')).json()).start_us));
    check(!loaded.inView && !loaded.inTiles, 'the kernel lies outside the view and outside every loaded tile');
    await page.mouse.click(launchEv.x, launchEv.y);
    await waitFor(page, (id) => window.__tt.selected && window.__tt.selected.id === id, launchEv.id, 'launch selected');
    await waitFor(page, () => (window.__tt.flowList || []).some((x) => x.dir === 'out') && window.__tt.flows.arrows.some((r) => r.mine && r.far),
      null, 'the far end fetched and drawn');
    const st = await page.evaluate(() => ({ list: window.__tt.flowList, arrow: window.__tt.flows.arrows.find((r) => r.mine && r.far), W: window.__tt.S.frame.W }));
    const out = st.list.find((x) => x.dir === 'out');
    check(out.name === flow.kernel.name, `details list the flow to ${out.name} (brute force: ${flow.kernel.name})`);
    check(st.arrow.x1 >= st.W - 1 && st.arrow.x1 > st.arrow.x0, `the arrow runs from the launch (x ${st.arrow.x0.toFixed(0)}) to the screen's right edge (x ${st.arrow.x1.toFixed(0)})`);
    await page.screenshot({ path: path.join(artifacts, '30-flow-far-end.png') });
    await page.click(`#flows button[data-flow="${st.list.indexOf(out)}"]`);
    await waitFor(page, (name) => window.__tt.selected && window.__tt.selected.name === name && document.body.dataset.viewState === 'ready', flow.kernel.name, 'go to the kernel');
    const there = await page.evaluate(() => {
      const tt = window.__tt, s = tt.S.selected;
      return { inView: s.ts >= tt.axis.view[0] && s.ts <= tt.axis.view[1], back: (tt.flowList || []).some((x) => x.dir === 'in' && /cudaLaunchKernel/.test(x.name)) };
    });
    check(there.inView, '"go to" moves the view to the kernel and selects it');
    await waitFor(page, () => (window.__tt.flowList || []).some((x) => x.dir === 'in'), null, 'the kernel lists its incoming flow');
    check(true, 'the kernel lists the flow back to the launch');
    await page.screenshot({ path: path.join(artifacts, '31-flow-go-to.png') });
    await page.keyboard.press('[');
    // The kernel encloses several flows' ends: "[" takes the first one in.
    await waitFor(page, () => window.__tt.selected && /cudaLaunchKernel/.test(window.__tt.selected.name) && document.body.dataset.viewState === 'ready', null, '"[" back to a launch');
    check(true, '"[" follows the kernel\'s first incoming flow back to its launch');
    await page.keyboard.press(']');
    await waitFor(page, (name) => window.__tt.selected && window.__tt.selected.name === name, flow.kernel.name, '"]" to the kernel');
    check(true, '"]" follows the launch\'s outgoing flow to the kernel');

    // 2. Coarse views: bundles with counts, never a curtain of lines.
    await page.keyboard.press('Escape');
    let coarse = null;
    for (const span of [2000, 5000, 20000, 100000]) {
      await page.evaluate(([t, span]) => window.__tt.setView(t - span / 2, t + span / 2), [await page.evaluate(() => window.__tt.axis.view[0]), span]);
      await waitFor(page, ready, null, `a ${span} µs view`);
      const fi = await page.evaluate(() => window.__tt.flows);
      if (fi.inView >= 60) { coarse = { span, ...fi }; break; }
    }
    check(coarse, `a coarse view has many flows in view (${coarse && coarse.inView} at ${coarse && coarse.span} µs)`);
    const lines = coarse.arrows.filter((r) => !r.mine).length;
    const bundled = coarse.bundles.reduce((x, b) => x + b.count, 0);
    check(coarse.bundles.length >= 1 && coarse.bundles.every((b) => b.count >= 2) && lines <= 60 && coarse.bundles.length + lines < coarse.inView / 2,
      `${coarse.inView} flows drawn as ${coarse.bundles.length} bundles (${bundled} flows, largest ${Math.max(...coarse.bundles.map((b) => b.count))}) and ${lines} lone arrows`);
    await page.screenshot({ path: path.join(artifacts, '32-flows-bundled.png') });

    // 3. Thread time in the details; no 404 for events without arguments.
    await page.goto(`${url}#table=tt`);
    await waitFor(page, () => window.__tt.S && window.__tt.S.table && window.__tt.S.table.name === 'tt' && document.body.dataset.viewState === 'ready' && window.__tt.readySeq === window.__tt.viewSeq, null, 'tt table');
    for (const [name, want] of [['withArgs', { tdur: 30, args: '"a": 1' }], ['threadTimeOnly', { tdur: 40, args: '(no arguments)' }],
      ['emptyArgs', { args: '(no arguments)' }], ['nothing', { args: '(no arguments)' }]]) {
      const ev = await page.evaluate((n) => window.__tt.visibleEvent(6, n), name);
      const shown = await page.evaluate(() => window.__tt.argsShown || 0);
      await page.mouse.click(ev.x, ev.y);
      await waitFor(page, (n) => (window.__tt.argsShown || 0) > n, shown, `details of ${name}`);
      const d = await page.evaluate(() => ({ args: document.getElementById('args').textContent, text: document.getElementById('details').innerText }));
      check(d.args.includes(want.args), `${name}: arguments read ${JSON.stringify(d.args.slice(0, 40))}`);
      if (want.tdur) {
        check(/thread duration\s+\d/.test(d.text) && d.text.includes(`${want.tdur}.00 µs`) && /thread start\s+\d/.test(d.text),
          `${name}: details show thread duration ${want.tdur} µs and the thread start`);
        if (name === 'threadTimeOnly') await page.screenshot({ path: path.join(artifacts, '33-thread-time.png') });
      } else {
        check(!/thread duration/.test(d.text), `${name}: no thread time shown`);
      }
    }

    check(notFound.length === 0, `no 404 answers${notFound.length ? ': ' + notFound.join(' ') : ''}`);
    pass(errors, t0);
  } finally {
    await cleanUp(browser, proc, dir);
  }
}

run(main);
