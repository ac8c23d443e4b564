// tracetable viewer: a zoomable timeline over the `tracetable serve` API.
// Plain JS + canvas, no build step. Times inside the viewer are microseconds
// relative to `base` (the integer part of the table start), so doubles keep
// sub-nanosecond precision even for epoch-scale traces.
'use strict';

(() => {
  const $ = (id) => document.getElementById(id);
  const GUTTER = 220;        // label column, px
  const LANE = 18;           // px per nesting level
  const PROC_H = 22;         // process header row
  const COUNTER_H = 44;
  const PREFETCH = 3;        // request this many viewport widths

  // Debug counters for tests (tests/viewer/).
  const tt = (window.__tt = {
    requests: [],      // {url, resolution_us, start, end, status, items}
    renders: 0,
    eventsDrawn: 0,    // boxes / marks drawn in the last frame
    loads: 0,          // answers installed
    dropped: 0,        // stale answers dropped
    inflight: 0,
    selected: null,
    argsShown: 0,
    searchLanded: 0,
    ready: false,
  });

  const S = {
    tables: [],
    table: null,       // /api/tables/{t} answer
    base: 0n,          // BigInt microseconds subtracted from every ts
    baseNum: 0,
    origin: 0,         // trace start, relative us
    full: [0, 1],      // trace span, relative us
    view: [0, 1],
    host: '',
    collapsed: new Set(),
    counterRange: new Map(),  // counter track id -> [min, max] seen
    rows: [],          // layout: {kind:'process'|'track', y, h, ...}
    contentH: 0,
    trackByKey: new Map(),
    trackInfo: new Map(),  // track id -> {process, track}
    data: null,        // {start, end, res, host, byTrack: Map(trackId -> {slices, instants, counters}), flows}
    inflight: null,
    selected: null,    // an item
    range: null,       // [a, b] shift-drag selection
    search: { q: '', matches: [], index: -1, cursor: null, busy: false },
    stats: { timer: 0, seq: 0 },
    dpr: window.devicePixelRatio || 1,
  };

  const axis = $('axis'), canvas = $('tracks'), scroller = $('scroller'), spacer = $('spacer');
  const tooltip = $('tooltip'), statusEl = $('status');
  const ctx = canvas.getContext('2d'), actx = axis.getContext('2d');

  // ---- utilities -----------------------------------------------------------

  function hashColor(name, light) {
    let h = 2166136261;
    for (let i = 0; i < name.length; i++) { h ^= name.charCodeAt(i); h = Math.imul(h, 16777619); }
    h >>>= 0;
    const hue = h % 360, sat = 45 + (h >> 9) % 25, lum = (light ? 78 : 58) + (h >> 17) % 10;
    return `hsl(${hue} ${sat}% ${lum}%)`;
  }
  const colorCache = new Map();
  function color(name) {
    let c = colorCache.get(name);
    if (!c) { c = hashColor(name, false); colorCache.set(name, c); }
    return c;
  }

  function fmtDur(us) {
    const a = Math.abs(us);
    if (a === 0) return '0';
    if (a >= 1e6) return (us / 1e6).toFixed(a >= 1e7 ? 2 : 3) + ' s';
    if (a >= 1e3) return (us / 1e3).toFixed(a >= 1e4 ? 2 : 3) + ' ms';
    if (a >= 1) return us.toFixed(a >= 10 ? 2 : 3) + ' µs';
    return (us * 1e3).toFixed(a >= 0.01 ? 1 : 3) + ' ns';
  }

  function fmtNum(v) {
    const a = Math.abs(v);
    for (const [d, u] of [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']]) {
      if (a >= d) return +(v / d).toPrecision(4) + ' ' + u;
    }
    return String(+v.toPrecision(4));
  }

  // Relative us -> absolute microsecond text for the API (exact to 1 ps).
  function absUs(rel) {
    let ps = BigInt(Math.round(rel * 1e6)) + S.base * 1000000n;
    const neg = ps < 0n;
    if (neg) ps = -ps;
    const ip = ps / 1000000n, fp = (ps % 1000000n).toString().padStart(6, '0').replace(/0+$/, '');
    return (neg ? '-' : '') + ip.toString() + (fp ? '.' + fp : '');
  }
  function usText(us) {  // a duration as exact-enough decimal text (>= 1 ps)
    const ps = Math.max(1, Math.round(us * 1e6));
    const ip = Math.floor(ps / 1e6), fp = String(ps % 1e6).padStart(6, '0').replace(/0+$/, '');
    return ip + (fp ? '.' + fp : '');
  }

  // Parses a JSON answer whose "ts" numbers are absolute: rebases them on
  // S.base first when the numbers are too large for doubles.
  function parseRebased(text) {
    if (S.base !== 0n) {
      text = text.replace(/"ts":(-?\d+)(\.\d+)?/g, (m, i, f) => '"ts":' + (BigInt(i) - S.base).toString() + (f || ''));
    }
    return JSON.parse(text);
  }
  function relFromText(t) {  // "1680000000000.123" -> relative us
    const m = /^(-?\d+)(\.\d+)?$/.exec(String(t));
    if (!m) return Number(t) - S.baseNum;
    return Number(BigInt(m[1]) - S.base) + (m[2] ? Number(m[2]) * (m[1].startsWith('-') ? -1 : 1) : 0);
  }

  function esc(s) {
    return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
  }

  async function getText(url) {
    const r = await fetch(url);
    const text = await r.text();
    if (!r.ok) {
      let msg = text;
      try { const j = JSON.parse(text); msg = j.error + (j.parameter ? ` (${j.parameter})` : ''); } catch (e) { /* text */ }
      const err = new Error(msg);
      err.status = r.status;
      throw err;
    }
    return text;
  }

  // ---- tables and layout -----------------------------------------------------

  async function loadTables() {
    const j = JSON.parse(await getText('/api/tables'));
    S.tables = j.tables;
    const sel = $('table');
    sel.innerHTML = S.tables.map((t) => `<option>${esc(t.name)}</option>`).join('');
    const h = readHash();
    const name = h.table && S.tables.some((t) => t.name === h.table) ? h.table : S.tables[0] && S.tables[0].name;
    if (!name) { statusEl.textContent = 'no tables'; return; }
    sel.value = name;
    await openTable(name, h);
  }

  async function openTable(name, h) {
    const text = await getText(`/api/tables/${encodeURIComponent(name)}`);
    const t = JSON.parse(text);
    const m = /"start_us":(-?\d+)/.exec(text);
    const startInt = m ? BigInt(m[1]) : 0n;
    S.base = (startInt > 1000000000n || startInt < -1000000000n) ? startInt : 0n;
    S.baseNum = Number(S.base);
    S.table = t;
    S.full = [relFromText(/"start_us":(-?[\d.]+)/.exec(text)[1]), relFromText(/"end_us":(-?[\d.]+)/.exec(text)[1])];
    if (S.full[1] <= S.full[0]) S.full[1] = S.full[0] + 1;
    S.origin = S.full[0];
    S.data = null;
    S.selected = null;
    S.range = null;
    S.collapsed.clear();
    S.counterRange.clear();
    canvas.style.top = '0px';
    scroller.scrollTop = 0;
    S.search = { q: '', matches: [], index: -1, cursor: null, busy: false };
    $('search-count').textContent = '';
    const hostBox = $('host-box');
    hostBox.hidden = !(t.hosts && t.hosts.length > 1);
    $('host').innerHTML = '<option value="">all hosts</option>' +
      (t.hosts || []).map((x) => `<option>${esc(x)}</option>`).join('');
    S.host = h && h.host && (t.hosts || []).includes(h.host) ? h.host : '';
    $('host').value = S.host;
    S.view = S.full.slice();
    if (h && h.start !== undefined && h.end !== undefined) {
      const a = relFromText(h.start), b = relFromText(h.end);
      if (isFinite(a) && isFinite(b) && b > a) S.view = [a, b];
    }
    buildTrackIndex();
    layout();
    tt.ready = false;
    requestDraw();
  }

  function buildTrackIndex() {
    S.trackByKey.clear();
    S.trackInfo.clear();
    for (const p of S.table.processes) {
      for (const tr of p.tracks) {
        const key = tr.kind === 'counter' ? `c|${p.pid}|${tr.name}|${tr.series}` : `t|${p.pid}|${tr.tid}`;
        S.trackByKey.set(key, tr.id);
        S.trackInfo.set(tr.id, { process: p, track: tr });
      }
    }
  }

  function sortIdx(x, fallback) { return x.sort_index !== undefined ? x.sort_index : fallback; }

  function layout() {
    const rows = [];
    let y = 0;
    const procs = S.table.processes
      .filter((p) => !S.host || p.host === S.host)
      .slice()
      .sort((a, b) => (sortIdx(a, Number(a.pid) || 0) - sortIdx(b, Number(b.pid) || 0)) ||
        String(a.pid).localeCompare(String(b.pid), undefined, { numeric: true }));
    for (const p of procs) {
      if (!p.tracks.length) continue;
      const collapsed = S.collapsed.has(p.id);
      rows.push({ kind: 'process', y, h: PROC_H, process: p, collapsed });
      y += PROC_H;
      if (collapsed) continue;
      const kindOrder = { thread: 0, async: 1, counter: 2 };
      const tracks = p.tracks.slice().sort((a, b) => (kindOrder[a.kind] - kindOrder[b.kind]) ||
        (sortIdx(a, 0) - sortIdx(b, 0)) || (Number(a.tid) || 0) - (Number(b.tid) || 0) || a.id - b.id);
      for (const tr of tracks) {
        const h = tr.kind === 'counter' ? COUNTER_H : (tr.max_depth + 1) * LANE + 4;
        rows.push({ kind: 'track', y, h, process: p, track: tr });
        y += h;
      }
    }
    S.rows = rows;
    S.rowByTrack = new Map(rows.filter((r) => r.kind === 'track').map((r) => [r.track.id, r]));
    S.contentH = y + 40;
    spacer.style.height = S.contentH + 'px';
    // The canvas sits at the old scroll offset and would keep the scroll
    // range open: clamp the offset to the new content first.
    const maxTop = Math.max(0, S.contentH - scroller.clientHeight);
    if (scroller.scrollTop > maxTop) {
      canvas.style.top = '0px';
      scroller.scrollTop = maxTop;
    }
    resize();
  }

  function resize() {
    const w = scroller.clientWidth, h = scroller.clientHeight;
    S.dpr = window.devicePixelRatio || 1;
    for (const [c, cw, ch] of [[canvas, w, h], [axis, axis.clientWidth, 28]]) {
      c.width = Math.max(1, Math.round(cw * S.dpr));
      c.height = Math.max(1, Math.round(ch * S.dpr));
      c.style.width = cw + 'px';
      c.style.height = ch + 'px';
    }
    requestDraw();
  }

  function plotWidth() { return Math.max(50, canvas.width / S.dpr - GUTTER); }
  function xOf(t) { return GUTTER + (t - S.view[0]) / (S.view[1] - S.view[0]) * plotWidth(); }
  function tOf(x) { return S.view[0] + (x - GUTTER) / plotWidth() * (S.view[1] - S.view[0]); }

  // ---- fetching --------------------------------------------------------------

  function wanted() {
    const span = S.view[1] - S.view[0];
    const res = span / plotWidth();
    return { res, start: S.view[0] - span * (PREFETCH - 1) / 2, end: S.view[1] + span * (PREFETCH - 1) / 2 };
  }

  // Whether loaded data is good for the current view: covers it, at a
  // resolution neither coarser than a pixel nor much finer (a zoomed-out
  // view needs the wider range).
  function satisfies(d, w) {
    if (!d || d.host !== S.host) return false;
    const s = Math.max(S.full[0], S.view[0]), e = Math.min(S.full[1], S.view[1]);
    if (d.start > s + 1e-9 || d.end < e - 1e-9) return false;
    return d.res <= w.res * 1.001 && d.res >= w.res / 3;
  }

  function maybeFetch() {
    if (!S.table) return;
    const w = wanted();
    if (satisfies(S.data, w)) return;
    if (S.inflight) { S.inflight.stale = !satisfies(S.inflight, w); return; }
    const start = Math.max(S.full[0], w.start), end = Math.min(S.full[1], w.end);
    const req = { start, end, res: w.res, host: S.host, table: S.table.name, stale: false };
    const params = new URLSearchParams({
      // A coarser answer beats one cut short: a zoomed-out view of a huge
      // trace would otherwise stop part way.
      start_us: absUs(start), end_us: absUs(end), resolution_us: usText(w.res), limit: '250000',
      coarsen: '1',
    });
    if (S.host) params.set('host', S.host);
    const url = `/api/tables/${encodeURIComponent(S.table.name)}/window?${params}`;
    const rec = { url, resolution_us: w.res, start, end, status: 0, items: 0 };
    tt.requests.push(rec);
    S.inflight = req;
    tt.inflight = 1;
    statusEl.textContent = 'loading…';
    const t0 = performance.now();
    loadWindow(url).then((d) => {
      const h = d.header;
      rec.status = 200;
      rec.items = h.items || 0;
      rec.ms = Math.round(performance.now() - t0);
      if (S.table && req.table === S.table.name && satisfies(req, wanted())) {
        install(req, d);
        statusEl.textContent = `${(h.items || 0).toLocaleString()} items · ${(h.summaries || 0).toLocaleString()} summaries · level ${h.level} · ${rec.ms} ms${h.truncated ? ' · truncated' : ''}`;
      } else {
        tt.dropped++;
      }
    }).catch((e) => {
      rec.status = e.status || -1;
      statusEl.textContent = 'error: ' + e.message;
    }).finally(() => {
      S.inflight = null;
      tt.inflight = 0;
      requestDraw();
    });
  }

  // Turns a window answer (text) into per-track arrays. Pure (no viewer
  // state) so that it also runs in the loader worker: parsing tens of MB of
  // JSON there keeps the page responsive.
  function buildWindow(text, baseText, trackByKey) {
    const base = BigInt(baseText);
    if (base !== 0n) {
      text = text.replace(/"ts":(-?\d+)(\.\d+)?/g, (m, i, f) => '"ts":' + (BigInt(i) - base).toString() + (f || ''));
    }
    const j = JSON.parse(text);
    const byTrack = new Map();
    const flowsById = new Map();
    const binds = new Map();
    const get = (id) => {
      let b = byTrack.get(id);
      if (!b) { b = { slices: [], instants: [], counters: [], flows: [] }; byTrack.set(id, b); }
      return b;
    };
    for (const e of j.traceEvents) {
      if (e.ph === 'M') continue;
      if (e.ph === 'C') {
        const series = Object.keys(e.args || {})[0];
        const id = trackByKey.get(`c|${e.pid}|${e.name}|${series}`);
        if (id === undefined) continue;
        get(id).counters.push({ ts: e.ts, v: e.args[series], id: e.tt_id });
        continue;
      }
      const id = trackByKey.get(`t|${e.pid}|${e.tid}`);
      if (id === undefined) continue;
      const b = get(id);
      const summary = e.cat === 'tracetable.summary';
      const depth = summary ? (e.args.depth || 0) : (e.tt_depth || 0);
      const item = { ph: e.ph, ts: e.ts, dur: e.dur || 0, name: e.name, cat: e.cat, depth, id: e.tt_id, track: id, summary };
      if (summary) {
        item.count = e.args.count;
        item.covered = e.args.covered_us;
        item.longest = e.args.longest_us;
        item.kind = e.args.kind;
        if (item.kind === 'slice') b.slices.push(item); else b.instants.push(item);
      } else if (e.ph === 'X') {
        if (e.bind_id !== undefined) {
          item.bind = e.bind_id;
          const pair = binds.get(e.bind_id) || {};
          if (e.flow_out) pair.from = item; else pair.to = item;
          binds.set(e.bind_id, pair);
        }
        if (e.tt_incomplete) item.incomplete = true;
        b.slices.push(item);
      } else if (e.ph === 'i') {
        b.instants.push(item);
      } else if (e.ph === 's' || e.ph === 't' || e.ph === 'f') {
        item.flow = e.id;
        b.flows.push(item);
        const list = flowsById.get(e.id) || [];
        list.push(item);
        flowsById.set(e.id, list);
      }
    }
    const arrows = [];
    for (const list of flowsById.values()) {
      list.sort((a, b) => a.ts - b.ts);
      for (let i = 0; i + 1 < list.length; i++) arrows.push([list[i], list[i + 1]]);
    }
    for (const p of binds.values()) if (p.from && p.to) arrows.push([p.from, p.to]);
    for (const b of byTrack.values()) {
      b.slices.sort((x, y) => x.ts - y.ts);
      b.maxDur = 0;
      for (const x of b.slices) if (x.dur > b.maxDur) b.maxDur = x.dur;
      b.counters.sort((x, y) => x.ts - y.ts);
    }
    return { byTrack, arrows, header: j.tracetable || {} };
  }

  const loaderSource = `'use strict';
${buildWindow.toString()}
self.onmessage = async (m) => {
  const { url, base, keys } = m.data;
  try {
    const r = await fetch(url);
    const text = await r.text();
    if (!r.ok) {
      let msg = text;
      try { const e = JSON.parse(text); msg = e.error + (e.parameter ? ' (' + e.parameter + ')' : ''); } catch (e) { /* text */ }
      self.postMessage({ ok: false, status: r.status, message: msg });
      return;
    }
    self.postMessage({ ok: true, data: buildWindow(text, base, new Map(keys)) });
  } catch (e) {
    self.postMessage({ ok: false, status: -1, message: String(e && e.message || e) });
  }
};`;
  let loader = null;
  try {
    loader = new Worker(URL.createObjectURL(new Blob([loaderSource], { type: 'text/javascript' })));
  } catch (e) {
    loader = null;  // no workers: parse on the page
  }

  // Fetches and decodes one window (one at a time: see maybeFetch).
  function loadWindow(url) {
    const base = S.base.toString();
    if (!loader) return getText(url).then((text) => buildWindow(text, base, S.trackByKey));
    return new Promise((resolve, reject) => {
      loader.onmessage = (m) => {
        if (m.data.ok) { resolve(m.data.data); return; }
        const err = new Error(m.data.message);
        err.status = m.data.status;
        reject(err);
      };
      loader.onerror = (e) => reject(new Error(e.message || 'loader failed'));
      loader.postMessage({ url: new URL(url, location.href).href, base, keys: [...S.trackByKey] });
    });
  }

  function install(req, d) {
    const { byTrack, arrows } = d;
    const get = (id) => {
      let b = byTrack.get(id);
      if (!b) { b = { slices: [], instants: [], counters: [], flows: [], maxDur: 0 }; byTrack.set(id, b); }
      return b;
    };
    // Counters: a window holds only the samples inside it; carry the value in
    // effect at its start over from the previous answer when it has one.
    if (S.data) {
      for (const [id, old] of S.data.byTrack) {
        if (!old.counters.length) continue;
        const b = get(id);
        const first = b.counters.length ? b.counters[0].ts : Infinity;
        if (first <= req.start) continue;
        let prev = null;
        for (const p of old.counters) { if (p.ts < Math.min(first, req.start)) prev = p; else break; }
        if (prev) b.counters.unshift(prev);
      }
    }
    S.data = { start: req.start, end: req.end, res: req.res, host: req.host, byTrack, arrows };
    tt.loads++;
    // Keep the selection pointing at the fresh copy of the same event.
    if (S.selected && !S.selected.summary) {
      const b = byTrack.get(S.selected.track);
      const same = b && b.slices.concat(b.instants).find((x) => x.id === S.selected.id);
      if (same) S.selected = same;
    }
    if (S.pendingSelect !== undefined) {
      for (const b of byTrack.values()) {
        const hit = b.slices.find((x) => x.id === S.pendingSelect);
        if (hit) { select(hit); S.pendingSelect = undefined; break; }
      }
    }
  }

  // ---- drawing ---------------------------------------------------------------

  let drawQueued = false;
  function requestDraw() {
    if (drawQueued) return;
    drawQueued = true;
    requestAnimationFrame(() => {
      drawQueued = false;
      draw();
      maybeFetch();
      scheduleHash();
      scheduleStats();
    });
  }

  let hatch = null;
  function hatchPattern() {
    if (hatch) return hatch;
    const c = document.createElement('canvas');
    c.width = c.height = 6;
    const g = c.getContext('2d');
    g.strokeStyle = 'rgba(255,255,255,0.55)';
    g.lineWidth = 1.5;
    g.beginPath();
    g.moveTo(0, 6); g.lineTo(6, 0);
    g.moveTo(-1, 1); g.lineTo(1, -1);
    g.moveTo(5, 7); g.lineTo(7, 5);
    g.stroke();
    hatch = ctx.createPattern(c, 'repeat');
    return hatch;
  }

  function niceStep(span, px) {
    const raw = span / Math.max(1, px / 90);
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }

  function drawAxis() {
    const w = axis.width / S.dpr;
    actx.setTransform(S.dpr, 0, 0, S.dpr, 0, 0);
    actx.clearRect(0, 0, w, 28);
    actx.fillStyle = '#fff';
    actx.fillRect(0, 0, w, 28);
    const span = S.view[1] - S.view[0];
    const step = niceStep(span, plotWidth());
    actx.font = '11px system-ui, sans-serif';
    actx.fillStyle = '#4b5563';
    actx.strokeStyle = '#c4c8cf';
    actx.textBaseline = 'middle';
    const first = Math.ceil((S.view[0] - S.origin) / step) * step + S.origin;
    actx.beginPath();
    for (let t = first; t <= S.view[1]; t += step) {
      const x = Math.round(xOf(t)) + 0.5;
      if (x < GUTTER) continue;
      actx.moveTo(x, 16); actx.lineTo(x, 28);
      actx.fillText(fmtDur(t - S.origin), x + 3, 10);
    }
    actx.stroke();
    actx.fillStyle = '#111827';
    actx.font = '600 11px system-ui, sans-serif';
    actx.fillText(`${fmtDur(span)} visible`, 8, 14);
  }

  function draw() {
    tt.renders++;
    const W = canvas.width / S.dpr, H = canvas.height / S.dpr;
    const top = scroller.scrollTop;
    canvas.style.top = top + 'px';
    ctx.setTransform(S.dpr, 0, 0, S.dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, W, H);
    if (!S.table) return;
    drawAxis();
    $('range').textContent = `${fmtDur(S.view[0] - S.origin)} – ${fmtDur(S.view[1] - S.origin)}`;
    const span = S.view[1] - S.view[0];
    const k = plotWidth() / span;
    let drawn = 0;
    const d = S.data;

    // Grid lines.
    const step = niceStep(span, plotWidth());
    ctx.strokeStyle = '#f0f1f4';
    ctx.beginPath();
    for (let t = Math.ceil((S.view[0] - S.origin) / step) * step + S.origin; t <= S.view[1]; t += step) {
      const x = Math.round(xOf(t)) + 0.5;
      ctx.moveTo(x, 0); ctx.lineTo(x, H);
    }
    ctx.stroke();

    ctx.textBaseline = 'middle';
    for (const row of S.rows) {
      const y = row.y - top;
      if (y + row.h < 0 || y > H) continue;
      if (row.kind === 'process') {
        ctx.fillStyle = '#eef1f6';
        ctx.fillRect(0, y, W, row.h);
        ctx.fillStyle = '#1f2937';
        ctx.font = '600 12px system-ui, sans-serif';
        const p = row.process;
        const label = `${row.collapsed ? '▸' : '▾'} ${p.name || 'process'}  (pid ${p.pid})${p.host ? ' · ' + p.host : ''}`;
        ctx.fillText(label, 6, y + row.h / 2, W - 12);
        continue;
      }
      ctx.strokeStyle = '#eceef1';
      ctx.beginPath(); ctx.moveTo(0, y + row.h + 0.5); ctx.lineTo(W, y + row.h + 0.5); ctx.stroke();
      const b = d && d.byTrack.get(row.track.id);
      ctx.save();
      ctx.beginPath();
      ctx.rect(GUTTER, y, W - GUTTER, row.h);
      ctx.clip();
      if (b) drawn += row.track.kind === 'counter' ? drawCounter(row, b, y, k) : drawSlices(row, b, y, k);
      ctx.restore();
      // Label.
      ctx.fillStyle = '#fff';
      ctx.fillRect(0, y, GUTTER - 1, Math.min(row.h, LANE + 2));
      ctx.fillStyle = '#374151';
      ctx.font = '12px system-ui, sans-serif';
      const tr = row.track;
      const label = tr.kind === 'counter' ? `${tr.name}${tr.series && tr.series !== tr.name ? ' · ' + tr.series : ''}` :
        `${tr.kind === 'async' ? 'async: ' : ''}${tr.name || 'thread'} ${tr.tid !== null ? '(' + tr.tid + ')' : ''}`;
      ctx.fillText(label, 14, y + LANE / 2 + 1, GUTTER - 20);
    }
    ctx.strokeStyle = '#d9dce1';
    ctx.beginPath(); ctx.moveTo(GUTTER - 0.5, 0); ctx.lineTo(GUTTER - 0.5, H); ctx.stroke();
    if (d) drawArrows(d, top, k);
    if (S.range) {
      const a = xOf(S.range[0]), bx = xOf(S.range[1]);
      ctx.fillStyle = 'rgba(37,99,235,0.10)';
      ctx.fillRect(Math.max(GUTTER, a), 0, bx - Math.max(GUTTER, a), H);
      ctx.strokeStyle = 'rgba(37,99,235,0.6)';
      ctx.strokeRect(a + 0.5, -1, bx - a, H + 2);
      ctx.fillStyle = '#1e40af';
      ctx.font = '600 11px system-ui, sans-serif';
      ctx.fillText(fmtDur(S.range[1] - S.range[0]), Math.max(GUTTER + 4, a + 4), 10);
    }
    tt.eventsDrawn = drawn;
    if (drawn > 0 && !tt.ready) tt.ready = true;
  }

  function drawSlices(row, b, y0, k) {
    let n = 0;
    const W = canvas.width / S.dpr;
    const v0 = S.view[0], v1 = S.view[1];
    const pat = hatchPattern();
    ctx.font = '11px system-ui, sans-serif';
    const lastX = new Float64Array(row.track.max_depth + 2).fill(-1);
    // Slices are sorted by start: skip those that ended before the view.
    const sl = b.slices;
    let lo = 0, hi = sl.length;
    const from = v0 - (b.maxDur || 0);
    while (lo < hi) { const mid = (lo + hi) >> 1; if (sl[mid].ts < from) lo = mid + 1; else hi = mid; }
    let style = '';
    for (let i = lo; i < sl.length; i++) {
      const s = sl[i];
      if (s.ts > v1) break;
      if (s.ts + s.dur < v0) continue;
      let x = GUTTER + (s.ts - v0) * k;
      let w = s.dur * k;
      if (x < GUTTER - 2) { w -= GUTTER - 2 - x; x = GUTTER - 2; }
      if (x + w > W + 2) w = W + 2 - x;
      const depth = Math.min(s.depth, row.track.max_depth + 1);
      const y = y0 + 2 + depth * LANE;
      // Skip sub-pixel boxes hidden under the previous one on this lane.
      if (w < 1 && x < lastX[depth]) continue;
      w = Math.max(w, 1);
      lastX[depth] = x + w;
      n++;
      const c = color(s.name);
      if (s.summary) {
        const density = Math.min(1, s.covered / Math.max(1e-9, s.dur));
        ctx.globalAlpha = 0.35 + 0.55 * density;
        if (c !== style) { ctx.fillStyle = c; style = c; }
        ctx.fillRect(x, y, w, LANE - 2);
        ctx.globalAlpha = 1;
        if (w >= 3) {  // hatching only shows on boxes a few pixels wide
          ctx.fillStyle = pat;
          style = '';
          ctx.fillRect(x, y, w, LANE - 2);
        }
      } else {
        if (c !== style) { ctx.fillStyle = c; style = c; }
        ctx.fillRect(x, y, w, LANE - 2);
        if (s.incomplete) {
          ctx.fillStyle = 'rgba(255,255,255,0.6)';
          style = '';
          ctx.fillRect(x + w - Math.min(w, 6), y, Math.min(w, 6), LANE - 2);
        }
      }
      if (S.selected && S.selected.id === s.id && !s.summary && S.selected.track === s.track) {
        ctx.strokeStyle = '#111827';
        ctx.lineWidth = 2;
        ctx.strokeRect(x + 1, y + 1, w - 2, LANE - 4);
        ctx.lineWidth = 1;
        style = '';
      }
      if (w > 28) {
        const tx = Math.max(x, GUTTER) + 3;
        const avail = Math.min(x + w, W) - tx - 3;
        if (avail > 14) {
          ctx.fillStyle = s.summary ? '#1f2937' : '#111827';
          style = '';
          const label = s.summary ? `${s.name} ×${s.count}` : s.name;
          ctx.fillText(fitText(label, avail), tx, y + (LANE - 2) / 2 + 1);
        }
      }
    }
    for (const s of b.instants.concat(b.flows)) {
      if (s.ts < v0 || s.ts > v1) continue;
      const x = GUTTER + (s.ts - v0) * k;
      const y = y0 + 2 + Math.min(s.depth, row.track.max_depth) * LANE;
      n++;
      if (s.flow !== undefined) {
        ctx.fillStyle = '#6b7280';
        ctx.fillRect(x - 1, y + 5, 2, 6);
        continue;
      }
      ctx.fillStyle = s.summary ? 'rgba(190,24,93,0.45)' : 'rgba(190,24,93,0.85)';
      ctx.beginPath();
      ctx.moveTo(x, y + 9); ctx.lineTo(x - 3, y + 2); ctx.lineTo(x + 3, y + 2);
      ctx.closePath();
      ctx.fill();
    }
    return n;
  }

  const fitCache = new Map();
  function fitText(s, avail) {
    const key = s + '\u0000' + Math.floor(avail / 8);
    const c = fitCache.get(key);
    if (c !== undefined) return c;
    let out = s;
    if (ctx.measureText(s).width > avail) {
      let lo = 0, hi = s.length;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (ctx.measureText(s.slice(0, mid) + '…').width <= avail) lo = mid; else hi = mid - 1;
      }
      out = lo > 0 ? s.slice(0, lo) + '…' : '';
    }
    if (fitCache.size > 20000) fitCache.clear();
    fitCache.set(key, out);
    return out;
  }

  function drawCounter(row, b, y0, k) {
    const pts = b.counters;
    if (!pts.length) return 0;
    const W = canvas.width / S.dpr;
    // One scale per counter for the whole session, widened by every answer,
    // so zooming does not rescale the chart.
    let [lo, hi] = S.counterRange.get(row.track.id) || [Infinity, -Infinity];
    for (const p of pts) { if (p.v < lo) lo = p.v; if (p.v > hi) hi = p.v; }
    S.counterRange.set(row.track.id, [lo, hi]);
    if (lo > 0 && lo < hi * 0.25) lo = 0;
    if (hi === lo) { if (lo > 0) lo = 0; else hi = lo + 1; }
    else lo -= (hi - lo) * 0.05;
    const hh = row.h - 8;
    const yOf = (v) => y0 + 4 + hh - (v - lo) / (hi - lo) * hh;
    const c = color(row.track.name + row.track.series);
    // Per pixel column: min and max of the samples, and the value carried in.
    const x0 = GUTTER, x1 = Math.ceil(W);
    const n = x1 - x0 + 1;
    const mins = new Float64Array(n).fill(NaN), maxs = new Float64Array(n).fill(NaN);
    let carry = NaN;
    let i = 0;
    while (i < pts.length && pts[i].ts < S.view[0]) { carry = pts[i].v; i++; }
    let cur = carry;
    let drawn = 0;
    for (let px = 0; px < n; px++) {
      const tEnd = S.view[0] + (px + 1) / k;
      let mn = cur, mx = cur;
      while (i < pts.length && pts[i].ts < tEnd) {
        const v = pts[i].v;
        mn = isNaN(mn) ? v : Math.min(mn, v);
        mx = isNaN(mx) ? v : Math.max(mx, v);
        cur = v;
        i++; drawn++;
      }
      mins[px] = mn; maxs[px] = mx;
    }
    ctx.fillStyle = c;
    ctx.globalAlpha = 0.35;
    for (let px = 0; px < n; px++) {
      if (isNaN(maxs[px])) continue;
      const y = yOf(maxs[px]);
      ctx.fillRect(x0 + px, y, 1, y0 + 4 + hh - y);
    }
    ctx.globalAlpha = 1;
    for (let px = 0; px < n; px++) {
      if (isNaN(maxs[px])) continue;
      const ya = yOf(maxs[px]), yb = yOf(mins[px]);
      ctx.fillRect(x0 + px, ya, 1, Math.max(1.5, yb - ya));
    }
    ctx.fillStyle = '#6b7280';
    ctx.font = '10px system-ui, sans-serif';
    ctx.fillText(fmtNum(hi), GUTTER + 4, y0 + 9);
    return drawn;
  }

  function anchor(it, top, k) {
    const row = S.rowByTrack.get(it.track);
    if (!row) return null;
    return { x: GUTTER + (it.ts - S.view[0]) * k, y: row.y - top + 2 + Math.min(it.depth, row.track.max_depth) * LANE + (LANE - 2) / 2 };
  }

  function drawArrows(d, top, k) {
    const W = canvas.width / S.dpr;
    const visible = [];
    for (const pair of d.arrows) {
      const [a, b] = pair;
      const ta = a.ph === 'X' ? a.ts + a.dur : a.ts;
      if (Math.max(ta, b.ts) < S.view[0] || Math.min(ta, b.ts) > S.view[1]) continue;
      visible.push(pair);
    }
    const sel = S.selected;
    const few = visible.length <= 400;
    for (const [a, b] of visible) {
      const mine = sel && !sel.summary && (sel.id === a.id || sel.id === b.id);
      if (!few && !mine) continue;
      const from = a.ph === 'X' ? { ...a, ts: a.ts + a.dur } : a;
      const p = anchor(from, top, k), q = anchor(b, top, k);
      if (!p || !q) continue;
      if (Math.max(p.x, q.x) < GUTTER || Math.min(p.x, q.x) > W) continue;
      ctx.strokeStyle = mine ? 'rgba(17,24,39,0.95)' : 'rgba(55,65,81,0.35)';
      ctx.fillStyle = mine ? 'rgba(17,24,39,0.95)' : 'rgba(55,65,81,0.5)';
      ctx.lineWidth = mine ? 1.5 : 1;
      ctx.beginPath();
      ctx.moveTo(p.x, p.y);
      const mx = (p.x + q.x) / 2;
      ctx.bezierCurveTo(mx, p.y, mx, q.y, q.x, q.y);
      ctx.stroke();
      ctx.beginPath();
      ctx.moveTo(q.x, q.y); ctx.lineTo(q.x - 6, q.y - 3); ctx.lineTo(q.x - 6, q.y + 3); ctx.closePath();
      ctx.fill();
    }
    ctx.lineWidth = 1;
  }

  // ---- hit testing, selection, details ---------------------------------------

  function hit(mx, my) {
    const y = my + scroller.scrollTop;
    const row = S.rows.find((r) => y >= r.y && y < r.y + r.h);
    if (!row) return null;
    if (row.kind === 'process' || mx < GUTTER) return { row };
    const b = S.data && S.data.byTrack.get(row.track.id);
    if (!b) return { row };
    const t = tOf(mx);
    const slop = 3 * (S.view[1] - S.view[0]) / plotWidth();
    if (row.track.kind === 'counter') {
      let best = null;
      for (const p of b.counters) { if (p.ts <= t + slop) best = p; else break; }
      return best ? { row, counter: best } : { row };
    }
    const depth = Math.floor((y - row.y - 2) / LANE);
    for (const s of b.instants) {
      if (Math.abs(s.ts - t) <= slop * 1.5 && Math.min(s.depth, row.track.max_depth) === depth) return { row, item: s };
    }
    let best = null;
    for (const s of b.slices) {
      if (s.ts > t + slop) break;
      if (s.depth !== depth) continue;
      if (s.ts + s.dur >= t - slop && (!best || Math.abs(s.ts + s.dur / 2 - t) < Math.abs(best.ts + best.dur / 2 - t))) {
        if (s.ts <= t && s.ts + s.dur >= t) { best = s; break; }
        best = s;
      }
    }
    return best ? { row, item: best } : { row };
  }

  function trackLabel(id) {
    const info = S.trackInfo.get(id);
    if (!info) return String(id);
    return `${info.process.name || 'pid ' + info.process.pid} › ${info.track.name || info.track.tid} (pid ${info.process.pid}, tid ${info.track.tid})`;
  }

  function select(it) {
    S.selected = it;
    tt.selected = it ? { id: it.id, name: it.name, summary: it.summary } : null;
    showTab('details');
    const el = $('details');
    if (!it) { el.innerHTML = '<p class="muted">Click an event to see it here.</p>'; requestDraw(); return; }
    const rows = [
      ['name', esc(it.name)],
      ['category', esc(it.summary ? 'tracetable.summary' : (it.cat || '—'))],
      ['start', `${fmtDur(it.ts - S.origin)} <span class="muted">(${absUs(it.ts)} µs)</span>`],
      ['duration', it.ph === 'X' || it.summary ? fmtDur(it.dur) : '— (instant)'],
      ['track', esc(trackLabel(it.track))],
      ['depth', String(it.depth)],
    ];
    if (it.summary) {
      rows.push(['events', String(it.count)], ['busy', `${fmtDur(it.covered)} (${Math.round(100 * it.covered / Math.max(1e-12, it.dur))}%)`],
        ['longest', fmtDur(it.longest)]);
    } else {
      rows.push(['id', String(it.id)]);
    }
    el.innerHTML = `<h3><span class="swatch" style="background:${color(it.name)}"></span>${esc(it.name)}</h3>` +
      `<table class="kv">${rows.map(([k, v]) => `<tr><td>${k}</td><td>${v}</td></tr>`).join('')}</table>` +
      (it.summary ? '<p class="muted">A summary of events shorter than the resolution; zoom in (f) to see them.</p>'
        : '<h3 style="margin-top:12px">arguments</h3><pre class="args" id="args">loading…</pre>');
    if (!it.summary) {
      const id = it.id;
      getText(`/api/tables/${encodeURIComponent(S.table.name)}/event?id=${id}`).then((text) => {
        if (!S.selected || S.selected.id !== id) return;
        const j = JSON.parse(text);
        $('args').textContent = JSON.stringify(j.args, null, 2);
        tt.argsShown++;
      }).catch((e) => {
        if (!S.selected || S.selected.id !== id) return;
        $('args').textContent = e.status === 404 ? '(no arguments)' : 'error: ' + e.message;
        tt.argsShown++;
      });
    }
    requestDraw();
  }

  // ---- navigation --------------------------------------------------------------

  function setView(a, b) {
    const minSpan = 1e-3;  // 1 ns
    const full = S.full[1] - S.full[0];
    let span = Math.max(minSpan, Math.min(b - a, full * 1.2));
    const pad = full * 0.1;
    let s = a + (b - a - span) / 2;
    s = Math.max(S.full[0] - pad, Math.min(s, S.full[1] + pad - span));
    S.view = [s, s + span];
    requestDraw();
  }
  function zoom(factor, atX) {
    const t = atX === undefined ? (S.view[0] + S.view[1]) / 2 : tOf(atX);
    setView(t - (t - S.view[0]) * factor, t + (S.view[1] - t) * factor);
  }
  function pan(frac) {
    const d = (S.view[1] - S.view[0]) * frac;
    setView(S.view[0] + d, S.view[1] + d);
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
  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    if (e.shiftKey) { scroller.scrollTop += e.deltaY; return; }
    if (Math.abs(e.deltaX) > Math.abs(e.deltaY)) { pan(e.deltaX / plotWidth()); return; }
    const r = canvas.getBoundingClientRect();
    const dy = e.deltaMode === 1 ? e.deltaY * 20 : e.deltaY;
    zoom(Math.pow(1.0015, Math.max(-300, Math.min(300, dy))), Math.max(GUTTER, e.clientX - r.left));
  }, { passive: false });
  canvas.addEventListener('mousedown', (e) => {
    const r = canvas.getBoundingClientRect();
    drag = { x: e.clientX, y: e.clientY, view: S.view.slice(), top: scroller.scrollTop, moved: false,
      range: e.shiftKey && e.clientX - r.left >= GUTTER, t0: tOf(e.clientX - r.left) };
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
        const t1 = tOf(mouse.x);
        S.range = [Math.min(drag.t0, t1), Math.max(drag.t0, t1)];
        requestDraw();
      } else {
        const dt = dx / plotWidth() * (drag.view[1] - drag.view[0]);
        S.view = [drag.view[0] - dt, drag.view[1] - dt];
        scroller.scrollTop = drag.top - dy;
        requestDraw();
      }
      tooltip.hidden = true;
      return;
    }
    if (e.target === canvas) showTooltip(e); else tooltip.hidden = true;
  });
  window.addEventListener('mouseup', (e) => {
    if (!drag) return;
    canvas.classList.remove('dragging');
    const d = drag;
    drag = null;
    if (d.moved) return;
    const r = canvas.getBoundingClientRect();
    const h = hit(e.clientX - r.left, e.clientY - r.top);
    if (h && h.row && h.row.kind === 'process') {
      const id = h.row.process.id;
      if (S.collapsed.has(id)) S.collapsed.delete(id); else S.collapsed.add(id);
      layout();
      return;
    }
    S.range = null;
    select(h && h.item ? h.item : null);
  });
  canvas.addEventListener('mouseleave', () => { tooltip.hidden = true; });

  function showTooltip(e) {
    const h = hit(mouse.x, mouse.y);
    if (!h || (!h.item && !h.counter)) { tooltip.hidden = true; return; }
    let text;
    if (h.counter) {
      text = `${h.row.track.name}${h.row.track.series ? ' · ' + h.row.track.series : ''}\n${h.counter.v} (${fmtNum(h.counter.v)})  at ${fmtDur(h.counter.ts - S.origin)}`;
    } else {
      const it = h.item;
      text = it.summary
        ? `${it.count.toLocaleString()} events (${it.kind}), e.g. ${it.name}\n${fmtDur(it.dur)} span · busy ${fmtDur(it.covered)} · longest ${fmtDur(it.longest)}`
        : `${it.name}\n${it.ph === 'X' ? fmtDur(it.dur) + ' · ' : ''}at ${fmtDur(it.ts - S.origin)}${it.cat ? ' · ' + it.cat : ''}`;
    }
    tooltip.textContent = text;
    tooltip.hidden = false;
    const tl = $('timeline').getBoundingClientRect();
    const x = e.clientX - tl.left + 14, y = e.clientY - tl.top + 14;
    tooltip.style.left = Math.min(x, tl.width - 300) + 'px';
    tooltip.style.top = y + 'px';
  }

  window.addEventListener('keydown', (e) => {
    if (e.target && (e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT')) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const atX = mouse.x >= GUTTER && mouse.x <= canvas.width / S.dpr && mouse.y >= 0 ? mouse.x : undefined;
    switch (e.key) {
      case 'w': case 'W': zoom(0.5, atX); break;
      case 's': case 'S': zoom(2, atX); break;
      case 'a': case 'A': pan(-0.25); break;
      case 'd': case 'D': pan(0.25); break;
      case '0': setView(S.full[0], S.full[1]); break;
      case 'f': case 'F':
        if (S.range) { zoomTo(S.range[0], S.range[1], 0); S.range = null; }
        else if (S.selected) zoomTo(S.selected.ts, S.selected.ts + (S.selected.dur || 0));
        break;
      case 'Escape': S.range = null; select(null); break;
      case '?': $('help').hidden = !$('help').hidden; break;
      default: return;
    }
    e.preventDefault();
  });

  scroller.addEventListener('scroll', () => requestDraw());
  window.addEventListener('resize', () => resize());

  // ---- search -------------------------------------------------------------------

  async function searchMore() {
    const s = S.search;
    if (s.busy) return false;
    s.busy = true;
    $('search-count').textContent = 'searching…';
    try {
      const params = new URLSearchParams({ q: s.q, limit: '200' });
      if (s.cursor) params.set('cursor', s.cursor);
      if (S.host) params.set('host', S.host);
      const j = parseRebased(await getText(`/api/tables/${encodeURIComponent(S.table.name)}/search?${params}`));
      for (const m of j.matches) s.matches.push(m);
      s.cursor = j.next_cursor;
      return j.matches.length > 0;
    } catch (e) {
      $('search-count').textContent = 'error: ' + e.message;
      return false;
    } finally {
      s.busy = false;
    }
  }

  async function searchStep(dir) {
    const q = $('search').value.trim();
    if (!q || !S.table) return;
    const s = S.search;
    if (q !== s.q || s.host !== S.host) {
      S.search = { q, host: S.host, matches: [], index: -1, cursor: null, busy: false };
      await searchMore();
    }
    const t = S.search;
    let i = t.index + dir;
    while (i >= t.matches.length && t.cursor) {
      if (!(await searchMore())) break;
    }
    if (!t.matches.length) { $('search-count').textContent = 'no match'; return; }
    if (i >= t.matches.length) i = 0;
    if (i < 0) i = t.matches.length - 1;
    t.index = i;
    $('search-count').textContent = `${i + 1} / ${t.matches.length}${t.cursor ? '+' : ''}`;
    const m = t.matches[i];
    const id = S.trackByKey.get(`t|${m.pid}|${m.tid}`);
    const dur = Number(m.dur);
    const it = { ph: 'X', ts: m.ts, dur, name: m.name, cat: m.cat, depth: m.depth, id: m.id, track: id, summary: false };
    if (S.host) {
      const info = S.trackInfo.get(id);
      if (info && info.process.host !== S.host) { S.host = ''; $('host').value = ''; layout(); }
    }
    const span = Math.max(dur * 4, (S.full[1] - S.full[0]) * 1e-6, 0.02);
    setView(m.ts + dur / 2 - span / 2, m.ts + dur / 2 + span / 2);
    reveal(it);
    S.pendingSelect = m.id;
    select(it);
    tt.searchLanded++;
    tt.lastMatch = { id: m.id, name: m.name, ts: m.ts, index: i };
  }

  $('search-form').addEventListener('submit', (e) => { e.preventDefault(); searchStep(1); });
  $('search').addEventListener('keydown', (e) => {
    if (e.key === 'Enter') { e.preventDefault(); searchStep(e.shiftKey ? -1 : 1); }
    if (e.key === 'Escape') { e.target.blur(); }
  });
  $('search-next').addEventListener('click', () => searchStep(1));
  $('search-prev').addEventListener('click', () => searchStep(-1));

  // ---- stats --------------------------------------------------------------------

  function showTab(name) {
    for (const b of document.querySelectorAll('.tabs button')) b.classList.toggle('active', b.dataset.tab === name);
    $('details').hidden = name !== 'details';
    $('stats').hidden = name !== 'stats';
    if (name === 'stats') { S.stats.key = ''; scheduleStats(); }
  }
  for (const b of document.querySelectorAll('.tabs button')) b.addEventListener('click', () => showTab(b.dataset.tab));

  function scheduleStats() {
    if ($('stats').hidden || !S.table) return;
    const key = `${S.table.name}|${S.host}|${S.view[0]}|${S.view[1]}`;
    if (key === S.stats.key) return;
    S.stats.key = key;
    clearTimeout(S.stats.timer);
    S.stats.timer = setTimeout(loadStats, 350);
  }

  async function loadStats() {
    const seq = ++S.stats.seq;
    const a = Math.max(S.full[0], S.view[0]), b = Math.min(S.full[1], S.view[1]);
    const params = new URLSearchParams({ start_us: absUs(a), end_us: absUs(Math.max(a, b)), top: '40' });
    if (S.host) params.set('host', S.host);
    const el = $('stats');
    try {
      const j = JSON.parse(await getText(`/api/tables/${encodeURIComponent(S.table.name)}/stats?${params}`));
      if (seq !== S.stats.seq) return;
      const maxSelf = Math.max(1e-12, ...j.names.map((n) => n.self_us));
      el.innerHTML = `<p class="muted">${fmtDur(b - a)} visible · ${j.events.toLocaleString()} events` +
        `${j.truncated ? ' · <b>truncated</b> (first part only)' : ''}</p>` +
        `<table class="stats-table"><tr><th>name</th><th class="num">count</th><th class="num">self</th><th class="num">total</th></tr>` +
        j.names.map((n) => `<tr><td class="name"><span class="swatch" style="background:${color(n.name)}"></span>${esc(n.name)}` +
          `<div class="bar" style="width:${(100 * n.self_us / maxSelf).toFixed(1)}%"></div></td>` +
          `<td class="num">${n.count.toLocaleString()}</td><td class="num">${fmtDur(n.self_us)}</td><td class="num">${fmtDur(n.total_us)}</td></tr>`).join('') +
        '</table>';
      tt.statsLoaded = (tt.statsLoaded || 0) + 1;
    } catch (e) {
      if (seq === S.stats.seq) el.innerHTML = `<p class="muted">${esc(e.message)}</p>`;
    }
  }

  // ---- URL hash -----------------------------------------------------------------

  function readHash() {
    const p = new URLSearchParams(location.hash.slice(1));
    const o = {};
    for (const k of ['table', 'start', 'end', 'host']) if (p.has(k)) o[k] = p.get(k);
    return o;
  }
  let hashTimer = 0;
  function scheduleHash() {
    clearTimeout(hashTimer);
    hashTimer = setTimeout(() => {
      if (!S.table) return;
      const p = new URLSearchParams({ table: S.table.name, start: absUs(S.view[0]), end: absUs(S.view[1]) });
      if (S.host) p.set('host', S.host);
      history.replaceState(null, '', '#' + p.toString());
    }, 200);
  }
  window.addEventListener('hashchange', () => {
    const h = readHash();
    if (h.table && S.table && h.table !== S.table.name) { openTable(h.table, h); return; }
    if (h.start !== undefined && h.end !== undefined) {
      const a = relFromText(h.start), b = relFromText(h.end);
      if (b > a && (Math.abs(a - S.view[0]) > 1e-6 || Math.abs(b - S.view[1]) > 1e-6)) setView(a, b);
    }
  });

  $('table').addEventListener('change', (e) => { openTable(e.target.value, {}).catch(showError); });
  $('host').addEventListener('change', (e) => { S.host = e.target.value; layout(); });
  $('help-btn').addEventListener('click', () => { $('help').hidden = !$('help').hidden; });

  function showError(e) { statusEl.textContent = 'error: ' + e.message; }
  tt.S = S;
  tt.setView = (a, b) => setView(a, b);
  // Page coordinates of a drawn, selectable event (tests click it).
  tt.visibleEvent = (minPx = 6) => {
    if (!S.data) return null;
    const r = canvas.getBoundingClientRect();
    const k = plotWidth() / (S.view[1] - S.view[0]);
    for (const row of S.rows) {
      if (row.kind !== 'track' || row.track.kind === 'counter') continue;
      const y = row.y - scroller.scrollTop;
      if (y < 0 || y + row.h > scroller.clientHeight) continue;
      const b = S.data.byTrack.get(row.track.id);
      if (!b) continue;
      for (const s of b.slices) {
        if (s.summary) continue;
        const a = Math.max(s.ts, S.view[0]), e = Math.min(s.ts + s.dur, S.view[1]);
        if ((e - a) * k < minPx) continue;
        return { x: r.left + xOf((a + e) / 2), y: r.top + y + 2 + s.depth * LANE + LANE / 2 - 1, id: s.id, name: s.name };
      }
    }
    return null;
  };
  loadTables().catch(showError);
})();
