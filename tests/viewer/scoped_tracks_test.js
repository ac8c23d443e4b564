// Browser test of scoped instants and async nests (issue 12, item 7):
// "s":"g" instants on one "Global instants" track at the top (no fake
// "process (pid )" row), "s":"p" instants on a "Process instants" track at
// the top of their process, and nested async b/e of one id drawn at their
// depth on their outermost slice's track, an overlapping id beside them.
// Screenshot: tests/viewer/artifacts/30-scoped-tracks.png.
//
// usage: node scoped_tracks_test.js [BUILD_DIR]   (run.sh installs what it needs)
'use strict';

const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { tracetable, artifacts, check, waitFor, startServer, launch, collectErrors, pass, cleanUp, run } = require('./harness');

const ready = () => document.body.dataset.viewState === 'ready' && window.__tt.readySeq === window.__tt.viewSeq;

const net = (ph, name, id, ts) => ({ ph, name, cat: 'net', id, pid: 1, tid: 2, ts });
const EVENTS = [
  { ph: 'M', name: 'process_name', pid: 1, args: { name: 'Renderer' } },
  { ph: 'M', name: 'thread_name', pid: 1, tid: 2, args: { name: 'Main' } },
  { ph: 'M', name: 'process_name', pid: 5, args: { name: 'GPU' } },
  // GPU sorts above Renderer; the global track still goes above both.
  { ph: 'M', name: 'process_sort_index', pid: 5, args: { sort_index: -10 } },
  { ph: 'X', name: 'kernel', pid: 5, tid: 1, ts: 0, dur: 80 },
  { ph: 'X', name: 'work', pid: 1, tid: 2, ts: 0, dur: 100 },
  { ph: 'i', name: 'navigationStart', s: 'g', pid: 1, tid: 2, ts: 10 },
  { ph: 'i', name: 'firstPaint', s: 'g', ts: 45 },
  { ph: 'i', name: 'gc', s: 'p', pid: 1, tid: 2, ts: 20 },
  { ph: 'i', name: 'tick', s: 't', pid: 1, tid: 2, ts: 30 },
  net('b', 'Request', '0x1', 0), net('b', 'Connect', '0x1', 10), net('b', 'Handshake', '0x1', 15),
  net('e', 'Handshake', '0x1', 30), net('e', 'Connect', '0x1', 40), net('b', 'Read', '0x1', 50),
  net('e', 'Read', '0x1', 80), net('e', 'Request', '0x1', 90),
  net('b', 'Request', '0x2', 5), net('b', 'Connect', '0x2', 6), net('e', 'Connect', '0x2', 60),
  net('e', 'Request', '0x2', 70),
];
// name@start -> the depth it must be drawn at: 0x1 stacks by depth, 0x2
// overlaps it and takes the lanes under 0x1's block.
const DEPTHS = { 'Request@0': 0, 'Connect@10': 1, 'Handshake@15': 2, 'Read@50': 1, 'Request@5': 3, 'Connect@6': 4 };

async function main() {
  const started = Date.now();
  fs.mkdirSync(artifacts, { recursive: true });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-viewer-scoped-'));
  const json = path.join(dir, 'scoped.json');
  fs.writeFileSync(json, JSON.stringify({ traceEvents: EVENTS }));
  execFileSync(tracetable, ['ingest', json, '-o', path.join(dir, 'scoped.tracetable'), '--force', '-q']);
  fs.rmSync(json);
  const { proc, url } = await startServer(dir);
  let browser;
  const errors = [];
  try {
    browser = await launch();
    const page = await browser.newPage({ viewport: { width: 1300, height: 560 } });
    collectErrors(page, errors);
    await page.goto(url + '#table=scoped');
    await waitFor(page, ready, null, 'first render');

    // Track list: the Global instants track first, with no process header
    // of its own; then GPU, then Renderer with its process instants first.
    await page.screenshot({ path: path.join(artifacts, '30-scoped-tracks.png') });
    // (A viewer without the label hook is judged by its rows.)
    const labels = await page.evaluate(() => window.__tt.rowLabels || window.__tt.S.rows.map((r) =>
      r.kind === 'process' ? `▾ ${r.process.name} (pid ${r.process.pid})` : r.track.name));
    console.log('rows:', JSON.stringify(labels));
    check(labels[0] === 'Global instants', `the first row is "Global instants" (${labels[0]})`);
    check(!labels.some((l) => /\(pid \)|pid ""/.test(l)) && labels.filter((l) => /Global/.test(l)).length === 1,
      'no fake "process (pid )" row, one global row');
    const gpu = labels.findIndex((l) => /^▾ GPU/.test(l)), rend = labels.findIndex((l) => /^▾ Renderer/.test(l));
    check(gpu === 1 && rend > gpu, `the global track is above every process, even one sorted first (GPU at ${gpu})`);
    check(labels[rend + 1] === 'Process instants', `"Process instants" is the first track of Renderer (${labels[rend + 1]})`);
    const rows = await page.evaluate(() => window.__tt.S.rows.filter((r) => r.kind === 'track').map((r) => ({
      id: r.track.id, kind: r.track.kind, name: r.track.name, global: !!r.process.global, pid: r.process.pid })));
    const asyncRows = rows.filter((r) => r.kind === 'async');
    check(asyncRows.length === 1 && asyncRows[0].name === 'Request',
      `one async track, named after the nests' outermost slices (${asyncRows.map((r) => r.name)}), not one per name`);
    check(rows[0].kind === 'instants' && rows[0].global, 'the first track is the global instants track');

    // What each instant track holds (the table's own answer).
    const win = await (await fetch(`${url}api/tables/scoped/window?resolution_us=0`)).json();
    const byTrack = new Map();
    const info = await (await fetch(`${url}api/tables/scoped`)).json();
    const tracksById = new Map();
    for (const p of info.processes) for (const t of p.tracks) tracksById.set(`${p.pid}|${t.tid}`, { ...t, global: !!p.global });
    for (const e of win.traceEvents) {
      if (e.ph === 'M') continue;
      const t = tracksById.get(`${e.pid}|${e.tid}`);
      const key = t ? `${t.kind}:${t.name}` : `?${e.pid}|${e.tid}`;
      if (!byTrack.has(key)) byTrack.set(key, []);
      byTrack.get(key).push(e);
    }
    const names = (k) => (byTrack.get(k) || []).map((e) => e.name).join(',');
    check(names('instants:Global instants') === 'navigationStart,firstPaint' &&
      byTrack.get('instants:Global instants').every((e) => e.s === 'g'), `global instants: ${names('instants:Global instants')}`);
    check(names('instants:Process instants') === 'gc', `process instants: ${names('instants:Process instants')}`);

    // Depths drawn on the async track: exactly the lanes of the nests.
    const track = asyncRows[0].id;
    await page.evaluate((id) => { window.__tt.logTrack = id; window.__tt.setView(window.__tt.S.view[0], window.__tt.S.view[1]); }, track);
    await waitFor(page, ready, null, 'redraw with the draw log');
    const drawn = await page.evaluate(() => window.__tt.lastDraw);
    const depthOf = new Map(drawn.depths.map(([id, d]) => [id, d]));
    const t0 = Math.min(...win.traceEvents.filter((e) => e.ph !== 'M').map((e) => Number(e.ts)));
    const got = {};
    for (const e of byTrack.get('async:Request') || []) {
      if (e.ph !== 'X') continue;
      got[`${e.name}@${Math.round(Number(e.ts) - t0)}`] = depthOf.get(e.tt_id);
    }
    console.log('drawn depths:', JSON.stringify(got));
    check(JSON.stringify(got, Object.keys(DEPTHS).sort()) === JSON.stringify(DEPTHS, Object.keys(DEPTHS).sort()),
      'nested async slices are drawn at their depth under their root, the overlapping id below the whole nest');
    const asyncRow = await page.evaluate((id) => { const r = window.__tt.S.rows.find((x) => x.kind === 'track' && x.track.id === id); return r.h; }, track);
    check(asyncRow >= 5 * 18, `the async row is tall enough for 5 lanes (${asyncRow} px)`);
    await page.evaluate(() => { window.__tt.logTrack = undefined; });
    pass(errors, started);
  } finally {
    await cleanUp(browser, proc, dir);
  }
}

run(main);
