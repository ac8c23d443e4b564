// tracetable viewer: a zoomable timeline over the `tracetable serve` API,
// streamed as map-style tiles (GET /api/tables/{t}/tile). This module holds
// the state and glues the others together: the table and its row layout, the
// tile plan of each frame (which tiles the visible tracks need, which cached
// ones stand in while they load), navigation, and the readiness signal
// `document.body.dataset.viewState` (`loading` while a visible tile at the
// view's level is missing, `ready` once the visible area is drawn from
// complete data).
'use strict';

import { MemoryPanel } from './memory_panel.js';
import { FarEnds } from './flows.js';
import { Panels } from './panels.js';
import { COUNTER_H, LANE, PROC_H, Renderer, forEachItem, itemAt } from './renderer.js';
import { TileCache, tileKey } from './tile_cache.js';
import { TileLoader } from './tile_loader.js';
import { GUTTER, MAX_TILE_LEVEL, TimeAxis } from './time_axis.js';
import { $, esc, fmtDur, getText } from './util.js';

const GROUP_TRACKS = 8;            // tracks per tile request
const CACHE_BYTES = 96 << 20;      // decoded tiles kept
const STAND_IN_COARSER = 10;       // levels to look up for a stand-in
const PREFETCH_INFLIGHT = 2;       // prefetch requests at a time
const PREFETCH_IDLE_MS = 250;      // a view ready this long without input prefetches
const NEAR_COARSER = 2;            // at least this many levels coarser for groups a screen away,
const NEAR_LEVEL_STEP = 3;         // on levels that are multiples of this (kept over zoom steps)
const PAN_FRACTION = 0.25;         // of the view, one a/d step
const PARTIAL_REDRAW_MS = 300;     // redraws while visible tiles arrive

// Debug counters for tests and benchmarks (tests/viewer/, bench/viewer/).
const tt = (window.__tt = {
  requests: [],     // {url, level, resolution_us, k, tracks, status, items, bytes, ms}
  renders: 0,
  draws: [],        // {at, ms, missing} of the first 64 draws
  eventsDrawn: 0,
  loads: 0,         // tiles installed
  dropped: 0,       // answers for a table no longer shown
  inflight: 0,
  selected: null,
  argsShown: 0,
  searchLanded: 0,
  ready: false,
  viewSeq: 0,       // bumped by every change of what is visible
  readySeq: -1,     // viewSeq of the last frame drawn from complete data
  prefetchSeq: -1,  // viewSeq of the last view whose prefetches were all asked for
  cancelled: 0,
  logTrack: undefined,  // set to a track id: lastDraw lists what was drawn on it
  lastDraw: null,
});

const S = {
  tables: [],
  table: null,
  host: '',
  collapsed: new Set(),
  pins: [],            // pinned track ids, drawn first
  rows: [],
  rowByTrack: new Map(),
  groups: [],          // {key, tracks, y0, y1}
  groupOf: new Map(),  // track id -> group key
  contentH: 0,
  trackByKey: new Map(),
  trackInfo: new Map(),
  strings: new Map(),  // string id -> text (from tiles)
  selected: null,
  range: null,
  marks: [],           // [[start, end]] flagged with "m"
  highlight: '',       // lower-case search text: matching slices are outlined
  dpr: window.devicePixelRatio || 1,
  plan: new Map(),
  pinned: new Set(),
  panDir: 0,           // the last view change: -1/+1 a pan left/right, 0 a zoom or jump
};

const axis = new TimeAxis();
Object.defineProperty(S, 'view', { get: () => axis.view });
Object.defineProperty(S, 'full', { get: () => axis.full });

const axisCanvas = $('axis'), canvas = $('tracks'), scroller = $('scroller'), spacer = $('spacer');
const statusEl = $('status');
const actx = axisCanvas.getContext('2d');
const renderer = new Renderer(canvas);
const cache = new TileCache(CACHE_BYTES);
const loader = new TileLoader(onTile, onTileError);
tt.loaderUp = () => loader.workerUp;  // for tests: whether tiles go through the worker yet
// A far end arriving while visible tiles load is drawn with the last of them.
const farEnds = new FarEnds(() => { if (!loader.visiblePending()) requestDraw(); });

const stringsByTable = new Map();  // table name -> (string id -> text)

const app = {
  S, axis, tt,
  requestDraw: () => requestDraw(),
  setView: (a, b) => setView(a, b),
  reveal: (it) => reveal(it),
  layout: () => layout(),
  highlight: (q) => { S.highlight = q.toLowerCase(); requestDraw(); },
  // The flows of a slice in the last frame, with the far end as an item
  // (from the tiles, or from the server when it lies outside them).
  flowsOf: (id) => renderer.flowsOf(id).map((x) => ({ dir: x.dir,
    item: x.other.item || itemAt(x.other.tile, x.other.i, x.other.track, S.strings) })),
  tableName: () => S.table.name,
  select: (it) => panels.select(it),
  showTab: (name) => panels.showTab(name),
  scheduleHash: () => scheduleHash(),
  zoom: (factor, x) => zoom(factor, x),
  memoryOpened: () => memory.opened(),
};
const panels = new Panels(app);
const memory = new MemoryPanel(app);

function setViewState(state) {
  if (document.body.dataset.viewState !== state) document.body.dataset.viewState = state;
}
// Anything that changes what is visible: the view is loading until a frame
// says otherwise.
function viewChanged() {
  tt.viewSeq++;
  $('tooltip').hidden = true;  // it described what was under the cursor before
  setViewState('loading');
  requestDraw();
}

// ---- tables and layout -------------------------------------------------------

// An answer the server wrote into the page (query/serve/index_page.h), or null.
function bootText(id) {
  const el = document.getElementById(id);
  return el ? el.textContent : null;
}

async function loadTables() {
  const h = readHash();
  const bootTables = bootText('tt-tables'), bootTable = bootText('tt-table');
  const bootName = bootTable && JSON.parse(bootTable).name;
  // The table the URL names, unless the page carries it, is fetched
  // alongside the list (first paint waits for both).
  const early = h.table && h.table !== bootName ? getText(`/api/tables/${encodeURIComponent(h.table)}`).catch(() => null) : null;
  const j = JSON.parse(bootTables || await getText('/api/tables'));
  tt.bootUsed = { tables: !!bootTables, table: false };
  S.tables = j.tables;
  const sel = $('table');
  sel.innerHTML = S.tables.map((t) => `<option>${esc(t.name)}</option>`).join('');
  const name = h.table && S.tables.some((t) => t.name === h.table) ? h.table : S.tables[0] && S.tables[0].name;
  if (!name) { statusEl.textContent = 'no tables'; return; }
  sel.value = name;
  const known = name === bootName ? bootTable : name === h.table && early ? await early : null;
  tt.bootUsed.table = name === bootName;
  await openTable(name, h, known);
}

async function openTable(name, h, known) {
  const text = known || await getText(`/api/tables/${encodeURIComponent(name)}`);
  const t = JSON.parse(text);
  axis.setTable(/"start_us":(-?[\d.]+)/.exec(text)[1], /"end_us":(-?[\d.]+)/.exec(text)[1]);
  S.table = t;
  $('table').value = name;
  S.selected = null;
  S.range = null;
  S.marks = [];
  tt.marks = [];
  // Strings arrive with tiles, and the tile cache outlives a table switch:
  // the strings of a table are kept for as long as its tiles may be.
  if (!stringsByTable.has(name)) stringsByTable.set(name, new Map());
  S.strings = stringsByTable.get(name);
  renderer.colorById.clear();
  renderer.rgbById.clear();
  renderer.matchQ = null;  // its cache is by string id, which is per table
  if (renderer.packed) renderer.packed.clear();
  S.collapsed.clear();
  S.pins = [];
  renderer.counterRange.clear();
  loader.cancelExcept(new Set());
  canvas.style.top = '0px';
  scroller.scrollTop = 0;
  panels.reset();
  const hostBox = $('host-box');
  hostBox.hidden = !(t.hosts && t.hosts.length > 1);
  $('host').innerHTML = '<option value="">all hosts</option>' +
    (t.hosts || []).map((x) => `<option>${esc(x)}</option>`).join('');
  S.host = h && h.host && (t.hosts || []).includes(h.host) ? h.host : '';
  $('host').value = S.host;
  memory.reset(h);
  if (h && h.start !== undefined && h.end !== undefined) {
    const a = axis.relFromText(h.start), b = axis.relFromText(h.end);
    if (isFinite(a) && isFinite(b) && b > a) axis.view = [a, b];
  }
  // Folded processes (by id) from the URL.
  if (h && h.collapsed) for (const id of h.collapsed.split(',')) if (/^\d+$/.test(id)) S.collapsed.add(Number(id));
  if (h && h.pins) for (const id of h.pins.split(',')) if (/^\d+$/.test(id) && Number(id) < t.num_tracks && !S.pins.includes(Number(id))) S.pins.push(Number(id));
  tt.pins = S.pins.slice();
  S.trackByKey.clear();
  S.trackInfo.clear();
  for (const p of t.processes) {
    for (const tr of p.tracks) {
      const key = tr.kind === 'counter' ? `c|${p.pid}|${tr.name}|${tr.series}` : `t|${p.pid}|${tr.tid}`;
      S.trackByKey.set(key, tr.id);
      S.trackInfo.set(tr.id, { process: p, track: tr });
    }
  }
  tt.ready = false;
  layout();
}

function sortIdx(x, fallback) { return x.sort_index !== undefined ? x.sort_index : fallback; }

// Rows top to bottom, and the groups of tracks tiles are requested for:
// consecutive tracks of one process, at most GROUP_TRACKS, the same whatever
// is folded or filtered (so cached tiles stay good).
function layout() {
  const rows = [], groups = [];
  S.groupOf = new Map();
  let y = 0;
  // Pinned tracks first (in pin order); their groups stay as they are and
  // also count as visible where the pinned rows are.
  const pinY = new Map();
  for (const id of S.pins) {
    const info = S.trackInfo.get(id);
    if (!info) continue;
    const tr = info.track;
    const h = tr.kind === 'counter' ? COUNTER_H : (tr.max_depth + 1) * LANE + 4;
    rows.push({ kind: 'track', y, h, process: info.process, track: tr, pinned: true });
    pinY.set(id, [y, y + h]);
    y += h;
  }
  if (pinY.size) y += 6;
  const sorted = S.table.processes.slice()
    .sort((a, b) => (sortIdx(a, Number(a.pid) || 0) - sortIdx(b, Number(b.pid) || 0)) ||
      String(a.pid).localeCompare(String(b.pid), undefined, { numeric: true }));
  // An input's global instants (its "global" process) go right above the
  // first process of its host, as Perfetto puts global tracks above the
  // processes.
  const globals = sorted.filter((p) => p.global), procs = [];
  for (const p of sorted) {
    if (p.global) continue;
    for (let i = 0; i < globals.length; i++) {
      if (globals[i].host === p.host) procs.push(...globals.splice(i--, 1));
    }
    procs.push(p);
  }
  procs.unshift(...globals);
  // A process's scoped instants sit at its top.
  const kindOrder = { instants: -1, thread: 0, async: 1, counter: 2 };
  for (const p of procs) {
    if (!p.tracks.length) continue;
    const tracks = p.tracks.slice().sort((a, b) => (kindOrder[a.kind] - kindOrder[b.kind]) ||
      (sortIdx(a, 0) - sortIdx(b, 0)) || (Number(a.tid) || 0) - (Number(b.tid) || 0) || a.id - b.id);
    const shown = !S.host || p.host === S.host;
    // The global process is no process: its track has no header to fold.
    const collapsed = !p.global && S.collapsed.has(p.id);
    if (shown && !p.global) { rows.push({ kind: 'process', y, h: PROC_H, process: p, collapsed }); y += PROC_H; }
    for (let i = 0; i < tracks.length; i += GROUP_TRACKS) {
      const chunk = tracks.slice(i, i + GROUP_TRACKS);
      const g = { key: chunk.map((tr) => tr.id).join(','), tracks: chunk.map((tr) => tr.id), y0: y, y1: y, shown: shown && !collapsed,
        pinned: chunk.filter((tr) => pinY.has(tr.id)).map((tr) => pinY.get(tr.id)) };
      for (const tr of chunk) S.groupOf.set(tr.id, g.key);
      if (g.pinned.length && !g.shown) groups.push(g);
      if (g.shown) {
        for (const tr of chunk) {
          if (pinY.has(tr.id)) continue;
          const h = tr.kind === 'counter' ? COUNTER_H : (tr.max_depth + 1) * LANE + 4;
          rows.push({ kind: 'track', y, h, process: p, track: tr });
          y += h;
        }
        g.y1 = y;
        groups.push(g);
      }
    }
  }
  S.rows = rows;
  S.groups = groups;
  S.rowByTrack = new Map(rows.filter((r) => r.kind === 'track').map((r) => [r.track.id, r]));
  S.contentH = y + 40;
  spacer.style.height = S.contentH + 'px';
  const maxTop = Math.max(0, S.contentH - scroller.clientHeight);
  if (scroller.scrollTop > maxTop) {
    canvas.style.top = '0px';
    scroller.scrollTop = maxTop;
  }
  resize();
}

// Canvas sizes follow their boxes (never their own previous size, which
// would keep a wide canvas over the side panel after the window narrows).
function resize() {
  const w = scroller.clientWidth, h = scroller.clientHeight;
  S.dpr = window.devicePixelRatio || 1;
  canvas.width = Math.max(1, Math.round(w * S.dpr));
  canvas.height = Math.max(1, Math.round(h * S.dpr));
  canvas.style.width = w + 'px';
  canvas.style.height = h + 'px';
  // The axis keeps its CSS width (100% of the timeline): only its bitmap follows.
  axisCanvas.width = Math.max(1, Math.round($('timeline').clientWidth * S.dpr));
  axisCanvas.height = Math.round(28 * S.dpr);
  axis.width = w;
  viewChanged();
}

// ---- the tile plan ---------------------------------------------------------------

// Whether a group has rows in [a, b) (content y): its own, or pinned ones.
function inBand(g, a, b) {
  return (g.y1 > g.y0 && g.y1 > a && g.y0 < b) || g.pinned.some(([p0, p1]) => p1 > a && p0 < b);
}

function tileUrl(g, level, k) {
  return `/api/tables/${encodeURIComponent(S.table.name)}/tile?level=${level}&k=${k}&tracks=${g.key}&v=2`;
}

// A cached tile that can stand in for (g, level, k) while it loads: the
// nearest coarser one holding its range, else the finer ones inside it.
function standIns(g, level, k, a, b) {
  for (let dz = 1; dz <= STAND_IN_COARSER; dz++) {
    const t = cache.get(tileKey(S.table.name, g.key, level + dz, Math.floor(k / 2 ** dz)));
    if (t) return [{ tile: t, a, b, exact: false }];
  }
  const out = [];
  if (level > 0) {
    for (const kk of [2 * k, 2 * k + 1]) {
      const t = cache.get(tileKey(S.table.name, g.key, level - 1, kk));
      if (t) out.push({ tile: t, a: Math.max(a, t.start), b: Math.min(b, t.start + t.width), exact: false });
    }
  }
  return out;
}

// Which tiles each visible group draws, which to request (visible groups
// first; then groups within a screen above or below, and the tiles left and
// right of the view), and what to cancel.
function planFrame() {
  const top = scroller.scrollTop, H = scroller.clientHeight;
  const level = axis.tileLevel();
  const [v0, v1] = axis.view;
  const ks = axis.tilesFor(level, v0, v1);
  const plan = new Map();
  const needed = new Set(), pinned = new Set();
  const want = [];
  let missing = 0;
  // Prefetch (groups within a screen above or below, tiles left and right)
  // waits until the view has been ready for PREFETCH_IDLE_MS: during a run
  // of zoom steps each view is left at once, and its prefetches would only
  // be bytes on the wire and work taken from the next view's tiles.
  const readyFor = readySince.seq === tt.viewSeq ? performance.now() - readySince.t : -1;
  const idle = readyFor >= PREFETCH_IDLE_MS;
  // Groups a screen away get tiles at least NEAR_COARSER levels coarser, on
  // every NEAR_LEVEL_STEP-th level: a scroll draws them at once as
  // stand-ins, and the same tiles serve several zoom steps.
  const nearLevel = Math.min(MAX_TILE_LEVEL, Math.ceil((level + NEAR_COARSER) / NEAR_LEVEL_STEP) * NEAR_LEVEL_STEP);
  const nearKs = axis.tilesFor(nearLevel, v0, v1);
  for (const g of S.groups) {
    const visible = inBand(g, top, top + H);
    const near = inBand(g, top - H, top + 2 * H);
    if (!visible && !(near && idle)) continue;
    if (!visible) {
      for (const k of nearKs) {
        const key = tileKey(S.table.name, g.key, nearLevel, k);
        needed.add(key);
        if (cache.has(key)) pinned.add(key);
        else want.push({ key, g, level: nearLevel, k, visible: false, why: 'near' });
      }
      continue;
    }
    const entries = [];
    for (const k of ks) {
      const key = tileKey(S.table.name, g.key, level, k);
      needed.add(key);
      const tile = cache.get(key);
      if (tile) {
        pinned.add(key);
        entries.push({ tile, a: tile.start, b: tile.start + tile.width, exact: true });
        continue;
      }
      want.push({ key, g, level, k, visible: true, why: 'visible' });
      missing++;
      const a = axis.full[0] + k * TimeAxis.tileWidthUs(level);
      entries.push(...standIns(g, level, k, a, a + TimeAxis.tileWidthUs(level)));
    }
    const exact = entries.filter((e) => e.exact);
    for (const e of exact) e.owns = (ts) => exact.some((o) => o !== e && o.a <= ts && ts < o.b);
    plan.set(g.key, entries);
  }
  // Once the visible tiles are in, after a pan only, the neighbour the next
  // pan (a/d: a quarter of the view) the same way would need: only where the
  // loaded tiles reach less than that past the view's edge. After a zoom or
  // a jump nothing sideways, however long the view stays: the next step is
  // as likely a zoom, which uses none of this level's tiles (both sides
  // after a rest were ~600 KB at 100M, half of a step's bytes), and a pan
  // after it fetches its one new column of tiles as it goes (20-60 ms).
  if (idle && S.panDir !== 0 && missing === 0 && ks.length) {
    const tw = TimeAxis.tileWidthUs(level), reach = PAN_FRACTION * (v1 - v0);
    const sides = [];
    if (S.panDir < 0 && v0 - (axis.full[0] + ks[0] * tw) < reach) sides.push(ks[0] - 1);
    if (S.panDir > 0 && axis.full[0] + (ks[ks.length - 1] + 1) * tw - v1 < reach) sides.push(ks[ks.length - 1] + 1);
    for (const g of S.groups) {
      if (!inBand(g, top, top + H)) continue;
      for (const k of sides) {
        if (k < 0 || k > axis.lastTile(level)) continue;
        const key = tileKey(S.table.name, g.key, level, k);
        needed.add(key);
        if (!cache.has(key)) want.push({ key, g, level, k, visible: false, why: 'side' });
      }
    }
  }
  loader.cancelExcept(needed);
  want.sort((x, y) => (y.visible - x.visible));
  let held = 0;  // prefetches left for a later frame
  for (const w of want) {
    if (loader.isPending(w.key)) continue;
    // Prefetches go a few at a time: on a small server they would compete
    // with the next step's visible tiles, and a cancelled request's work is
    // not taken back from the server.
    if (!w.visible && loader.inflight >= PREFETCH_INFLIGHT) { held++; continue; }
    loader.request(w.key, tileUrl(w.g, w.level, w.k), axis.full[0], {
      level: w.level, k: w.k, tracks: w.g.key, resolution_us: 2 ** w.level / 1000, table: S.table.name, visible: w.visible, why: w.why,
      start: axis.full[0] + w.k * TimeAxis.tileWidthUs(w.level),
      end: axis.full[0] + (w.k + 1) * TimeAxis.tileWidthUs(w.level),
    });
  }
  if (idle && missing === 0 && held === 0) tt.prefetchSeq = tt.viewSeq;
  tt.requests = loader.requests;
  tt.inflight = loader.inflight;
  tt.cancelled = loader.cancelled;
  S.plan = plan;
  S.pinned = pinned;
  return { plan, missing, level };
}

// While visible tiles are still missing, a frame for each arriving tile
// would spend the time the last ones need: redraw at most every
// PARTIAL_REDRAW_MS until the last visible one is in, then at once.
let partialTimer = 0;
let readySince = { seq: -1, t: 0 };  // the view last drawn ready, and since when
function onTile(key, tile, rec) {
  if (!S.table || rec.table !== S.table.name) { tt.dropped++; return; }
  for (const [id, s] of tile.strings) S.strings.set(id, s);
  cache.put(key, tile, S.pinned);
  tt.loads++;
  tt.inflight = loader.inflight;
  if (!rec.visible || loader.visiblePending() === 0) {
    clearTimeout(partialTimer);
    partialTimer = 0;
    requestDraw();
  } else if (!partialTimer) {
    partialTimer = setTimeout(() => { partialTimer = 0; requestDraw(); }, PARTIAL_REDRAW_MS);
  }
}

function onTileError(key, e, rec) {
  tt.inflight = loader.inflight;
  statusEl.textContent = 'error: ' + e.message;
  requestDraw();
}

// ---- drawing -----------------------------------------------------------------------

let drawQueued = false;
function requestDraw() {
  if (drawQueued) return;
  drawQueued = true;
  requestAnimationFrame(() => {
    drawQueued = false;
    draw();
    scheduleHash();
    panels.scheduleStats();
  });
}

function draw() {
  tt.renders++;
  const W = canvas.width / S.dpr, H = canvas.height / S.dpr;
  const top = scroller.scrollTop;
  canvas.style.top = top + 'px';
  if (!S.table) return;
  const seq = tt.viewSeq;
  const { plan, missing, level } = planFrame();
  tt.ticks = axis.drawAxis(actx, axisCanvas.width / S.dpr, S.dpr, fmtDur).map((k) => k.label);
  $('range').textContent = `${axis.fmtRel(axis.view[0])} – ${axis.fmtRel(axis.view[1])}`;
  const frame = {
    axis, rows: S.rows, top, W, H, dpr: S.dpr, plan, groupOf: S.groupOf, strings: S.strings,
    selected: S.selected, range: S.range, marks: S.marks, highlight: S.highlight, logTrack: tt.logTrack,
    farEnds: (key) => farEnds.get(S.table.name, key),
  };
  const t0 = performance.now();
  tt.eventsDrawn = renderer.draw(frame);
  tt.flows = renderer.flowInfo;
  farEnds.want(S.table.name, axis.origin, renderer.flowWants || []);
  tt.farEndsFetched = farEnds.fetched;
  if (S.selected) panels.refreshFlows(S.selected);
  tt.highlighted = renderer.hitIds;
  tt.drawMs = performance.now() - t0;
  tt.drawTotalMs = (tt.drawTotalMs || 0) + tt.drawMs;
  if (tt.draws.length < 64) tt.draws.push({ at: Math.round(t0), ms: Math.round(tt.drawMs), missing });  // the first load's draws, for benchmarks
  tt.rowLabels = renderer.labels;
  if (renderer.log) tt.lastDraw = { track: renderer.log.track, items: renderer.log.items, depths: renderer.log.depths, level, view: axis.view.slice(),
    tiles: [...(plan.get(S.groupOf.get(renderer.log.track)) || [])].map((e) => ({ level: e.tile.level, start: e.tile.start, exact: e.exact })) };
  S.frame = frame;
  memory.draw();
  const pend = loader.inflight;
  statusEl.textContent = missing ? `loading ${missing} tile${missing > 1 ? 's' : ''}… · level ${level}` :
    `level ${level} · ${(2 ** level / 1000).toPrecision(3)} µs bins · ${cache.map.size} tiles cached (${(cache.bytes / 1048576).toFixed(1)} MB)${pend ? ` · ${pend} prefetching` : ''}`;
  if (missing === 0) {
    tt.ready = true;
    tt.readySeq = seq;
    setViewState('ready');
    if (readySince.seq !== seq) {
      readySince = { seq, t: performance.now() };
      tt.readySince = readySince.t;
      // The frame that asks for this view's prefetches, if it is still shown.
      setTimeout(() => { if (readySince.seq === tt.viewSeq) requestDraw(); }, PREFETCH_IDLE_MS);
    }
  } else {
    setViewState('loading');
  }
}

// ---- navigation ----------------------------------------------------------------------

function setView(a, b) {
  const minSpan = 1e-3;  // 1 ns
  const full = axis.full[1] - axis.full[0];
  const span = Math.max(minSpan, Math.min(b - a, full * 1.2));
  const pad = full * 0.1;
  let s = a + (b - a - span) / 2;
  s = Math.max(axis.full[0] - pad, Math.min(s, axis.full[1] + pad - span));
  // A pan keeps the span (its direction guides prefetch); anything else is a zoom or a jump.
  const [o0, o1] = axis.view;
  S.panDir = Math.abs(span - (o1 - o0)) <= 1e-9 * span ? Math.sign(s - o0) : 0;
  axis.view = [s, s + span];
  viewChanged();
}
function zoom(factor, atX) {
  const t = atX === undefined ? (axis.view[0] + axis.view[1]) / 2 : axis.tOf(atX);
  setView(t - (t - axis.view[0]) * factor, t + (axis.view[1] - t) * factor);
}
function pan(frac) {
  const d = axis.span() * frac;
  setView(axis.view[0] + d, axis.view[1] + d);
}
function zoomTo(a, b, margin = 0.15) {
  const span = Math.max(b - a, 1e-3);
  setView(a - span * margin, b + span * margin);
}
function reveal(it) {
  const row = S.rowByTrack.get(it.track);
  if (!row) {
    const info = S.trackInfo.get(it.track);
    if (info && S.collapsed.delete(info.process.id)) { layout(); return reveal(it); }
    return;
  }
  const y = row.y + 2 + it.depth * LANE;
  if (y < scroller.scrollTop || y > scroller.scrollTop + scroller.clientHeight - LANE) {
    scroller.scrollTop = Math.max(0, y - scroller.clientHeight / 3);
  }
}

let mouse = { x: -1, y: -1 };
let drag = null;
const hitAt = (x, y) => (S.frame ? renderer.hit(S.frame, x, y + scroller.scrollTop) : null);
canvas.addEventListener('wheel', (e) => {
  e.preventDefault();
  if (e.shiftKey) { scroller.scrollTop += e.deltaY; return; }
  if (Math.abs(e.deltaX) > Math.abs(e.deltaY)) { pan(e.deltaX / axis.plotWidth()); return; }
  const r = canvas.getBoundingClientRect();
  const dy = e.deltaMode === 1 ? e.deltaY * 20 : e.deltaY;
  zoom(Math.pow(1.0015, Math.max(-300, Math.min(300, dy))), Math.max(GUTTER, e.clientX - r.left));
}, { passive: false });
canvas.addEventListener('mousedown', (e) => {
  const r = canvas.getBoundingClientRect();
  drag = { x: e.clientX, y: e.clientY, view: axis.view.slice(), top: scroller.scrollTop, moved: false,
    range: e.shiftKey && e.clientX - r.left >= GUTTER, t0: axis.tOf(e.clientX - r.left) };
  canvas.classList.add('dragging');
});
window.addEventListener('mousemove', (e) => {
  const r = canvas.getBoundingClientRect();
  mouse = { x: e.clientX - r.left, y: e.clientY - r.top };
  if (drag) {
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
    if (!drag.moved) return;
    if (drag.range) {
      const t1 = axis.tOf(mouse.x);
      S.range = [Math.min(drag.t0, t1), Math.max(drag.t0, t1)];
      requestDraw();
    } else {
      const dt = dx / axis.plotWidth() * (drag.view[1] - drag.view[0]);
      axis.view = [drag.view[0] - dt, drag.view[1] - dt];
      scroller.scrollTop = drag.top - dy;
      viewChanged();
    }
    $('tooltip').hidden = true;
    return;
  }
  if (e.target === canvas) panels.tooltip(hitAt(mouse.x, mouse.y), e); else $('tooltip').hidden = true;
});
window.addEventListener('mouseup', (e) => {
  if (!drag) return;
  canvas.classList.remove('dragging');
  const d = drag;
  drag = null;
  if (d.moved && d.range && S.range) panels.showTab('stats');  // the selection's statistics
  if (d.moved) return;
  const r = canvas.getBoundingClientRect();
  const h = hitAt(e.clientX - r.left, e.clientY - r.top);
  if (h && h.row && h.row.kind === 'process') {
    const id = h.row.process.id;
    if (S.collapsed.has(id)) S.collapsed.delete(id); else S.collapsed.add(id);
    layout();
    scheduleHash();
    return;
  }
  S.range = null;
  panels.select(h && h.item ? h.item : null);
});
canvas.addEventListener('mouseleave', () => { $('tooltip').hidden = true; });

// Hovering the axis shows the exact time under the cursor, from the trace
// start and absolute (the table's own clock, in us).
axisCanvas.addEventListener('mousemove', (e) => {
  const x = e.clientX - axisCanvas.getBoundingClientRect().left;
  if (x < GUTTER || !S.table) { axisCanvas.title = ''; return; }
  const t = axis.tOf(x);
  axisCanvas.title = `${axis.fmtRel(t)} from the start\nabsolute ${axis.absUs(Math.round(t * 1000) / 1000)} µs`;
  tt.axisHover = axisCanvas.title;
});

// Navigation keys work whatever has focus, except while typing in a text
// box: a focused drop-down or button must not swallow them (a <select>
// would otherwise switch tables on "s").
const NAV_KEYS = new Set(['w', 'a', 's', 'd', 'W', 'A', 'S', 'D', '0', 'f', 'F', 'm', 'M', 'p', 'P', 'u', 'U', ']', '[', '?', '/', 'Escape', 'Enter']);
function typing(el) {
  return el && (el.tagName === 'TEXTAREA' || el.isContentEditable ||
    (el.tagName === 'INPUT' && !['button', 'checkbox', 'radio', 'submit'].includes(el.type)));
}
window.addEventListener('keydown', (e) => {
  if ((e.ctrlKey || e.metaKey) && !e.altKey && (e.key === 'f' || e.key === 'F')) {
    e.preventDefault();  // the page's search, not the browser's find bar
    $('search').focus();
    $('search').select();
    return;
  }
  if (typing(e.target)) return;
  if (e.ctrlKey || e.metaKey || e.altKey || !NAV_KEYS.has(e.key)) return;
  if (e.key === 'Enter' && e.target && e.target.tagName === 'BUTTON') return;  // a click
  if (e.target && e.target !== document.body && e.target.blur) e.target.blur();
  const atX = mouse.x >= GUTTER && mouse.x <= canvas.width / S.dpr && mouse.y >= 0 ? mouse.x : undefined;
  switch (e.key) {
    case 'w': case 'W': zoom(0.5, atX); break;
    case 's': case 'S': zoom(2, atX); break;
    case 'a': case 'A': pan(-PAN_FRACTION); break;
    case 'd': case 'D': pan(PAN_FRACTION); break;
    case '0': setView(axis.full[0], axis.full[1]); break;
    case 'f': case 'F':
      if (S.range) { zoomTo(S.range[0], S.range[1], 0); S.range = null; } else if (S.selected) zoomTo(S.selected.ts, S.selected.ts + (S.selected.dur || 0));
      break;
    case 'm': case 'M': toggleMark(); break;
    case 'p': case 'P': if (S.selected) togglePin(S.selected.track); break;
    case 'u': case 'U': memory.toggle(); break;
    case ']': panels.followFlow('out'); break;
    case '[': panels.followFlow('in'); break;
    case '/': $('search').focus(); $('search').select(); break;
    case 'Enter': if ($('search').value.trim()) panels.searchStep(e.shiftKey ? -1 : 1); break;
    case 'Escape': if (!$('help').hidden) $('help').hidden = true; else { S.range = null; panels.select(null); } break;
    case '?': $('help').hidden = !$('help').hidden; break;
  }
  e.preventDefault();
});

// "p" pins the selected event's track to the top (again: unpins).
function togglePin(id) {
  const i = S.pins.indexOf(id);
  if (i >= 0) S.pins.splice(i, 1); else S.pins.push(id);
  tt.pins = S.pins.slice();
  layout();
  scheduleHash();
}

// "m" marks the selected range or event with a pair of flags (as in
// chrome://tracing); marking the same span again removes them.
function toggleMark() {
  const span = S.range ? [S.range[0], S.range[1]] : S.selected ? [S.selected.ts, S.selected.ts + (S.selected.dur || 0)] : null;
  if (!span) return;
  const i = S.marks.findIndex((m) => m[0] === span[0] && m[1] === span[1]);
  if (i >= 0) S.marks.splice(i, 1); else S.marks.push(span);
  tt.marks = S.marks.map((m) => [axis.absUs(m[0]), axis.absUs(m[1])]);
  requestDraw();
}

scroller.addEventListener('scroll', () => viewChanged());
// Any change of the timeline's box (window, side panel, scroll bar).
new ResizeObserver(() => resize()).observe(scroller);

// ---- URL hash ------------------------------------------------------------------------

function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  const o = {};
  for (const k of ['table', 'start', 'end', 'host', 'collapsed', 'pins', 'memory', 'memory_host', 'memory_at']) if (p.has(k)) o[k] = p.get(k);
  return o;
}
let hashTimer = 0;
function scheduleHash() {
  clearTimeout(hashTimer);
  hashTimer = setTimeout(() => {
    if (!S.table) return;
    const p = new URLSearchParams({ table: S.table.name, start: axis.absUs(axis.view[0]), end: axis.absUs(axis.view[1]) });
    if (S.host) p.set('host', S.host);
    if (S.collapsed.size) p.set('collapsed', [...S.collapsed].sort((x, y) => x - y).join(','));
    if (S.pins.length) p.set('pins', S.pins.join(','));
    memory.hashParams(p);
    history.replaceState(null, '', '#' + p.toString());
  }, 200);
}
window.addEventListener('hashchange', () => {
  const h = readHash();
  if (h.table && S.table && h.table !== S.table.name) { openTable(h.table, h); return; }
  if (h.start !== undefined && h.end !== undefined) {
    const a = axis.relFromText(h.start), b = axis.relFromText(h.end);
    if (b > a && (Math.abs(a - axis.view[0]) > 1e-6 || Math.abs(b - axis.view[1]) > 1e-6)) setView(a, b);
  }
});

$('table').addEventListener('change', (e) => { openTable(e.target.value, {}).catch(showError); });
$('host').addEventListener('change', (e) => { S.host = e.target.value; layout(); memory.hostChanged(); });
$('help-btn').addEventListener('click', () => { $('help').hidden = !$('help').hidden; });
// The side panel folds away (the timeline takes the width: ResizeObserver).
$('side-btn').addEventListener('click', () => {
  $('side').hidden = !$('side').hidden;
  $('side-btn').setAttribute('aria-pressed', String($('side').hidden));
});
// A link to this view (table, range, host, folded processes, memory panel).
$('link-btn').addEventListener('click', async () => {
  clearTimeout(hashTimer);
  const p = new URLSearchParams({ table: S.table.name, start: axis.absUs(axis.view[0]), end: axis.absUs(axis.view[1]) });
  if (S.host) p.set('host', S.host);
  if (S.collapsed.size) p.set('collapsed', [...S.collapsed].sort((x, y) => x - y).join(','));
  if (S.pins.length) p.set('pins', S.pins.join(','));
  memory.hashParams(p);
  history.replaceState(null, '', '#' + p.toString());
  tt.link = location.href;
  try {
    await navigator.clipboard.writeText(location.href);
    $('link-btn').textContent = 'copied';
  } catch (e) {
    window.prompt('Link to this view', location.href);  // no clipboard (plain http, permissions)
  }
  setTimeout(() => { $('link-btn').textContent = 'link'; }, 1500);
});

function showError(e) { statusEl.textContent = 'error: ' + e.message; }
tt.S = S;
tt.axis = axis;
tt.cache = cache;
tt.setView = (a, b) => setView(a, b);
// Tests: forget every decoded tile, so what the next view asks for is all its own.
tt.dropTiles = () => cache.clear();
// Page coordinates of a drawn, selectable event at least minPx wide.
tt.visibleEvent = (minPx = 6, prefix = '') => {
  if (!S.frame) return null;
  const r = canvas.getBoundingClientRect();
  const k = axis.plotWidth() / axis.span();
  for (const row of S.rows) {
    if (row.kind !== 'track' || row.track.kind === 'counter') continue;
    const y = row.y - scroller.scrollTop;
    if (y < 0 || y + row.h > scroller.clientHeight) continue;
    let found = null;
    forEachItem(S.plan.get(S.groupOf.get(row.track.id)) || [], row.track.id, (t, i) => {
      if (found || t.cols.kind[i] !== 0) return;  // an event (not a summary) slice
      if (prefix && !(S.strings.get(t.cols.name[i]) || '').startsWith(prefix)) return;
      const a = Math.max(t.cols.ts[i], axis.view[0]), e = Math.min(t.cols.ts[i] + t.cols.dur[i], axis.view[1]);
      if ((e - a) * k < minPx) return;
      const it = itemAt(t, i, row.track.id, S.strings);
      found = { x: r.left + axis.xOf((a + e) / 2), y: r.top + y + 2 + it.depth * LANE + LANE / 2 - 1, id: it.id, name: it.name };
    });
    if (found) return found;
  }
  return null;
};
setViewState('loading');
loadTables().catch(showError);
