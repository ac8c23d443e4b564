// Renderer: draws the track rows from decoded tiles (tile_worker.js) onto the
// canvas, and answers "what is under this pixel" from the same tiles.
//
// A frame's plan gives, per group of tracks, the tiles to draw: each with the
// time range [a, b) it is responsible for. Tiles at the view's level are
// drawn whole; an item that began in an earlier tile of the plan at the same
// level is drawn by that tile (tiles repeat the events that span them). A
// stand-in (a cached coarser or finer tile drawn while the right one loads)
// is clipped to its range.
'use strict';

import { GUTTER } from './time_axis.js';
import { color, colorRgb, fmtDur, fmtNum } from './util.js';

export const LANE = 18;       // px per nesting level
export const PROC_H = 22;     // process header row
export const COUNTER_H = 44;

const KIND_SLICE = 0, KIND_INSTANT = 1, KIND_COUNTER = 2, KIND_FLOW_START = 3, KIND_FLOW_END = 5;
const BUNDLE_AT = 60;   // arrows in view from which those between two tracks are bundled
const BUNDLE_COLUMNS = 8;  // bundles per pair of tracks: one per eighth of the view
const MAX_LONE = 60;    // lone arrows drawn beside bundles (an even sample)
const FETCH_LONE = 24;  // flows missing an end fetched when not the selection's (more would be bundled)
const SUMMARY = 128;
const FLAG_INCOMPLETE = 1, FLAG_HAS_ARGS = 64, FLAG_HAS_THREAD_TIME = 128, FLOW_OUT = 65536, FLOW_IN = 131072;
// Summaries are drawn in one neutral hatched grey, so that they never pass
// for events (their name is only an example of what they hold).
const SUMMARY_RGB = [107, 114, 128], SUMMARY_COLOR = 'rgb(107,114,128)';
const NARROW = 3;  // px: narrower boxes are written as pixels (no hatching, no label)

// The item at index i of a tile as a plain object (for selection, tooltips,
// tests).
export function itemAt(tile, i, track, strings) {
  const c = tile.cols;
  const kb = c.kind[i];
  const summary = (kb & SUMMARY) !== 0, kind = kb & 127;
  const it = {
    ts: c.ts[i], dur: c.dur[i], name: strings.get(c.name[i]) || '', cat: strings.get(c.cat[i]) || '',
    depth: c.lane[i], id: c.id[i], track, summary, value: c.value[i],
    ph: summary ? 'X' : kind === KIND_SLICE ? 'X' : kind === KIND_INSTANT ? 'i' : kind === KIND_COUNTER ? 'C' : 'f',
  };
  if (summary) {
    it.count = c.count[i];
    it.covered = c.covered[i];
    it.longest = c.longest[i];
    it.kind = kind === KIND_SLICE ? 'slice' : kind === KIND_INSTANT ? 'instant' : 'flow';
  }
  if (c.flags[i] & FLAG_INCOMPLETE) it.incomplete = true;
  if (!summary) {
    it.hasArgs = (c.flags[i] & FLAG_HAS_ARGS) !== 0;
    it.hasThreadTime = (c.flags[i] & FLAG_HAS_THREAD_TIME) !== 0;
  }
  return it;
}

// Calls fn(tile, i, entry) for every item of `track` the plan draws, each
// once, in plan order (time order for the tiles at one level).
export function forEachItem(entries, track, fn) {
  for (const e of entries) {
    const t = e.tile;
    const r = t.tracks.find((x) => x.id === track);
    if (!r) continue;
    const ts = t.cols.ts;
    for (let i = r.from; i < r.to; i++) {
      if (e.exact) {
        // Began in an earlier tile the plan also draws: drawn there.
        if (ts[i] < e.a && e.owns(ts[i])) continue;
      } else if (ts[i] >= e.b || ts[i] + t.cols.dur[i] < e.a) {
        continue;
      }
      fn(t, i, e);
    }
  }
}

// A track row's label. Instant tracks are named by their scope ("Global
// instants", "Process instants"): their synthetic tid means nothing; the
// global one names its host when there are several.
export function trackLabel(row) {
  const tr = row.track;
  if (tr.kind === 'counter') return `${tr.name}${tr.series && tr.series !== tr.name ? ' · ' + tr.series : ''}`;
  if (tr.kind === 'instants') return `${tr.name}${row.process.global && row.process.host ? ' · ' + row.process.host : ''}`;
  return `${tr.kind === 'async' ? 'async: ' : ''}${tr.name || 'thread'} ${tr.tid !== null ? '(' + tr.tid + ')' : ''}`;
}

let hatch = null;
function hatchPattern(ctx) {
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

const fitCache = new Map();
function fitText(ctx, s, avail) {
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

export class Renderer {
  constructor(canvas) {
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d');
    this.colorById = new Map();     // string id -> colour (ids are per table)
    this.rgbById = new Map();       // string id -> [r, g, b]
    // Boxes under NARROW px are written as pixels into a row-sized buffer and
    // drawn in one drawImage: zoomed out, tens of thousands of 1-2 px boxes
    // cost far less that way than one fillRect each.
    this.off = document.createElement('canvas');
    this.octx = this.off.getContext('2d');
    this.img = null;
    this.counterRange = new Map();  // counter track id -> [min, max] seen
    this.log = null;                // per-track record of what was drawn (tests)
  }

  // f: {axis, rows, top, W, H, dpr, plan: Map(groupKey -> entries),
  //     groupOf: Map(track -> groupKey), strings, selected, range, marks, highlight, logTrack}
  draw(f) {
    const ctx = this.ctx;
    const { axis, W, H, top } = f;
    ctx.setTransform(f.dpr, 0, 0, f.dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, W, H);
    axis.drawGrid(ctx, H);
    this.log = f.logTrack !== undefined ? { track: f.logTrack, items: [], depths: [] } : null;
    this.labels = [];  // the rows' labels as drawn, top to bottom (for tests)
    this.hitIds = [];  // search matches drawn in this frame
    let drawn = 0;
    ctx.textBaseline = 'middle';
    for (const row of f.rows) {
      const y = row.y - top;
      if (y + row.h < 0 || y > H) continue;
      if (row.kind === 'process') {
        ctx.fillStyle = '#eef1f6';
        ctx.fillRect(0, y, W, row.h);
        ctx.fillStyle = '#1f2937';
        ctx.font = '600 12px system-ui, sans-serif';
        const p = row.process;
        // Process labels (Kineto "GPU 1") as Perfetto shows them.
        const labels = p.labels && p.labels.length ? ` [${p.labels.join(', ')}]` : '';
        const label = `${row.collapsed ? '▸' : '▾'} ${p.name || (labels ? '' : 'process')}${labels}  (pid ${p.pid})${p.host ? ' · ' + p.host : ''}`;
        ctx.fillText(label, 6, y + row.h / 2, W - 12);
        this.labels.push(label);
        continue;
      }
      ctx.strokeStyle = '#eceef1';
      ctx.beginPath(); ctx.moveTo(0, y + row.h + 0.5); ctx.lineTo(W, y + row.h + 0.5); ctx.stroke();
      const entries = f.plan.get(f.groupOf.get(row.track.id)) || [];
      ctx.save();
      ctx.beginPath();
      ctx.rect(GUTTER, y, W - GUTTER, row.h);
      ctx.clip();
      drawn += row.track.kind === 'counter' ? this.counter(f, row, entries, y) : this.slices(f, row, entries, y);
      ctx.restore();
      ctx.fillStyle = '#fff';
      ctx.fillRect(0, y, GUTTER - 1, Math.min(row.h, LANE + 2));
      ctx.fillStyle = '#374151';
      ctx.font = '12px system-ui, sans-serif';
      const tr = row.track;
      const label = trackLabel(row);
      ctx.fillText(row.pinned ? `pinned · ${label}` : label, 14, y + LANE / 2 + 1, GUTTER - 20);
      this.labels.push(row.pinned ? `pinned · ${label}` : label);
    }
    ctx.strokeStyle = '#d9dce1';
    ctx.beginPath(); ctx.moveTo(GUTTER - 0.5, 0); ctx.lineTo(GUTTER - 0.5, H); ctx.stroke();
    this.arrows(f);
    for (const m of f.marks || []) this.drawMark(f.axis, m, H);
    if (f.range) {
      const a = axis.xOf(f.range[0]), bx = axis.xOf(f.range[1]);
      ctx.fillStyle = 'rgba(37,99,235,0.10)';
      ctx.fillRect(Math.max(GUTTER, a), 0, bx - Math.max(GUTTER, a), H);
      ctx.strokeStyle = 'rgba(37,99,235,0.6)';
      ctx.strokeRect(a + 0.5, -1, bx - a, H + 2);
      ctx.fillStyle = '#1e40af';
      ctx.font = '600 11px system-ui, sans-serif';
      ctx.fillText(fmtDur(f.range[1] - f.range[0]), Math.max(GUTTER + 4, a + 4), 10);
    }
    return drawn;
  }

  // Whether a name (string id) contains the lower-case query; cached per
  // query, as strings arrive with tiles.
  matches(id, q, strings) {
    if (this.matchQ !== q) { this.matchQ = q; this.matchById = new Map(); }
    let m = this.matchById.get(id);
    if (m === undefined) {
      const name = strings.get(id);
      if (name === undefined) return false;
      m = name.toLowerCase().includes(q);
      this.matchById.set(id, m);
    }
    return m;
  }

  // A marked span: a vertical line with a flag at each end.
  drawMark(axis, m, H) {
    const ctx = this.ctx;
    ctx.fillStyle = 'rgba(220,38,38,0.08)';
    const a = axis.xOf(m[0]), b = axis.xOf(m[1]);
    if (b > a) ctx.fillRect(Math.max(GUTTER, a), 0, b - Math.max(GUTTER, a), H);
    for (const x of [a, b]) {
      if (x < GUTTER) continue;
      ctx.strokeStyle = '#dc2626';
      ctx.beginPath(); ctx.moveTo(x + 0.5, 0); ctx.lineTo(x + 0.5, H); ctx.stroke();
      ctx.fillStyle = '#dc2626';
      ctx.beginPath(); ctx.moveTo(x + 1, 0); ctx.lineTo(x + 9, 4); ctx.lineTo(x + 1, 8); ctx.fill();
    }
  }

  slices(f, row, entries, y0) {
    const ctx = this.ctx;
    const { axis, W } = f;
    const v0 = axis.view[0], v1 = axis.view[1];
    const k = axis.plotWidth() / axis.span();
    const pat = hatchPattern(ctx);
    const maxDepth = row.track.max_depth;
    const lastX = new Float64Array(maxDepth + 2).fill(-1);
    const log = this.log && this.log.track === row.track.id ? this.log.items : null;
    const sel = f.selected;
    ctx.font = '11px system-ui, sans-serif';
    let n = 0, style = '';
    const marks = [], hatched = [], labels = [], hits = [];
    const hq = f.highlight || '';
    // The row's pixel buffer for narrow boxes (device pixels, plot area).
    const dpr = f.dpr;
    const bw = Math.max(1, Math.round((W - GUTTER) * dpr)), bh = Math.max(1, Math.round(row.h * dpr));
    if (!this.img || this.img.width < bw || this.img.height < bh) {
      this.img = this.octx.createImageData(Math.max(bw, this.img ? this.img.width : 0), Math.max(bh, this.img ? this.img.height : 0));
      this.pix = new Uint32Array(this.img.data.buffer);
      this.off.width = this.img.width;
      this.off.height = this.img.height;
    }
    const pix = this.pix, stride = this.img.width;
    for (let r = 0; r < bh; r++) pix.fill(0, r * stride, r * stride + bw);
    let narrow = 0, minX = bw, maxX = 0;
    const packed = this.packed || (this.packed = new Map());  // (string id, alpha step) -> pixel
    const put = (x, y, w, id, a) => {
      const X0 = Math.max(0, Math.floor((x - GUTTER) * dpr)), X1 = Math.min(bw, Math.max(X0 + 1, Math.round((x + w - GUTTER) * dpr)));
      const Y0 = Math.max(0, Math.round((y - y0) * dpr)), Y1 = Math.min(bh, Math.round((y + LANE - 2 - y0) * dpr));
      if (X1 <= X0) return;
      const q = Math.round(a * 32), key = id * 64 + q;
      let v = packed.get(key);
      if (v === undefined) {
        let rgb = id < 0 ? SUMMARY_RGB : this.rgbById.get(id);
        if (rgb === undefined) { rgb = colorRgb(f.strings.get(id) || ''); this.rgbById.set(id, rgb); }
        const al = q / 32, mix = (c) => Math.round(c * al + 255 * (1 - al));
        v = (255 << 24 | mix(rgb[2]) << 16 | mix(rgb[1]) << 8 | mix(rgb[0])) >>> 0;
        packed.set(key, v);
      }
      for (let yy = Y0; yy < Y1; yy++) {
        const o = yy * stride;
        for (let xx = X0; xx < X1; xx++) pix[o + xx] = v;
      }
      if (X0 < minX) minX = X0;
      if (X1 > maxX) maxX = X1;
      narrow++;
    };
    forEachItem(entries, row.track.id, (t, i, e) => {
      const c = t.cols;
      const ts = c.ts[i], dur = c.dur[i];
      if (ts > v1 || ts + dur < v0) return;
      const kb = c.kind[i], kind = kb & 127, summary = (kb & SUMMARY) !== 0;
      if (!(kind === KIND_SLICE)) { marks.push([t, i]); return; }
      let x = GUTTER + (ts - v0) * k;
      let w = dur * k;
      if (!e.exact) {  // a stand-in draws only its own range
        const xa = GUTTER + (e.a - v0) * k, xb = GUTTER + (e.b - v0) * k;
        if (x < xa) { w -= xa - x; x = xa; }
        if (x + w > xb) w = xb - x;
        if (w <= 0) return;
      }
      if (x < GUTTER - 2) { w -= GUTTER - 2 - x; x = GUTTER - 2; }
      if (x + w > W + 2) w = W + 2 - x;
      const depth = Math.min(c.lane[i], maxDepth + 1);
      const y = y0 + 2 + depth * LANE;
      if (log) {
        log.push(summary ? `s:${ts}:${depth}:${c.count[i]}` : `e:${c.id[i]}`);
        if (!summary) this.log.depths.push([c.id[i], depth]);
      }
      // Search matches are outlined even when hidden under a neighbour.
      if (hq && !summary && this.matches(c.name[i], hq, f.strings)) { hits.push(x, y, Math.max(w, 1)); this.hitIds.push(c.id[i]); }
      // Sub-pixel boxes hidden under the previous one on this lane.
      if (w < 1 && x < lastX[depth]) return;
      w = Math.max(w, 1);
      lastX[depth] = x + w;
      n++;
      const selected = sel && !summary && sel.id === c.id[i] && sel.track === row.track.id;
      if (w < NARROW && !selected) {
        if (summary) put(x, y, w, -1, 0.25 + 0.5 * Math.min(1, c.covered[i] / Math.max(1e-9, dur)));
        else put(x, y, w, c.name[i], (c.flags[i] & FLAG_INCOMPLETE) ? 0.4 : 1);
        return;
      }
      let col = this.colorById.get(c.name[i]);
      if (col === undefined) { col = color(f.strings.get(c.name[i]) || ''); this.colorById.set(c.name[i], col); }
      if (summary) {
        const density = Math.min(1, c.covered[i] / Math.max(1e-9, dur));
        ctx.globalAlpha = 0.25 + 0.5 * density;
        if (style !== SUMMARY_COLOR) { ctx.fillStyle = SUMMARY_COLOR; style = SUMMARY_COLOR; }
        ctx.fillRect(x, y, w, LANE - 2);
        ctx.globalAlpha = 1;
        if (w >= 3) hatched.push(x, y, w);  // one pattern fill for all, after
      } else {
        if (col !== style) { ctx.fillStyle = col; style = col; }
        ctx.fillRect(x, y, w, LANE - 2);
        if (c.flags[i] & FLAG_INCOMPLETE) {
          ctx.fillStyle = 'rgba(255,255,255,0.6)';
          style = '';
          ctx.fillRect(x + w - Math.min(w, 6), y, Math.min(w, 6), LANE - 2);
        }
        if (selected) {
          // A box of a pixel or two (a zero-length allocation event) gets
          // an outline wide enough to be seen.
          const ow = Math.max(w, 8), ox = x + w / 2 - ow / 2;
          ctx.strokeStyle = '#111827';
          ctx.lineWidth = 2;
          ctx.strokeRect(ox + 1, y + 1, ow - 2, LANE - 4);
          ctx.lineWidth = 1;
          style = '';
        }
      }
      if (w > 28) {
        const tx = Math.max(x, GUTTER) + 3;
        const avail = Math.min(x + w, W) - tx - 3;
        if (avail > 14) {
          const name = f.strings.get(c.name[i]) || '';
          labels.push(summary ? `${c.count[i]} events · e.g. ${name}` : name, avail, tx, y + (LANE - 2) / 2 + 1);
        }
      }
    });
    if (narrow) {
      this.octx.clearRect(0, 0, bw, bh);
      this.octx.putImageData(this.img, 0, 0, minX, 0, maxX - minX, bh);
      ctx.drawImage(this.off, minX, 0, maxX - minX, bh, GUTTER + minX / dpr, y0, (maxX - minX) / dpr, bh / dpr);
    }
    if (hatched.length) {
      ctx.fillStyle = pat;
      ctx.beginPath();
      for (let j = 0; j < hatched.length; j += 3) ctx.rect(hatched[j], hatched[j + 1], hatched[j + 2], LANE - 2);
      ctx.fill();
    }
    ctx.fillStyle = '#111827';
    for (let j = 0; j < labels.length; j += 4) ctx.fillText(fitText(ctx, labels[j], labels[j + 1]), labels[j + 2], labels[j + 3]);
    if (hits.length) {
      ctx.strokeStyle = '#f59e0b';
      ctx.lineWidth = 2;
      ctx.beginPath();
      for (let j = 0; j < hits.length; j += 3) {
        const w = Math.max(3, hits[j + 2]);
        ctx.rect(hits[j] + hits[j + 2] / 2 - w / 2, hits[j + 1], w, LANE - 2);
      }
      ctx.stroke();
      ctx.lineWidth = 1;
    }
    for (const [t, i] of marks) {
      const c = t.cols;
      const ts = c.ts[i];
      if (ts < v0 || ts > v1) continue;
      const x = GUTTER + (ts - v0) * k;
      const y = y0 + 2 + Math.min(c.lane[i], maxDepth) * LANE;
      const kind = c.kind[i] & 127, summary = (c.kind[i] & SUMMARY) !== 0;
      if (log) log.push(summary ? `s:${ts}:${c.lane[i]}:${c.count[i]}` : `e:${c.id[i]}`);
      n++;
      if (kind >= KIND_FLOW_START && kind <= KIND_FLOW_END) {
        ctx.fillStyle = '#6b7280';
        ctx.fillRect(x - 1, y + 5, 2, 6);
        continue;
      }
      ctx.fillStyle = summary ? 'rgba(190,24,93,0.45)' : 'rgba(190,24,93,0.85)';
      ctx.beginPath();
      ctx.moveTo(x, y + 9); ctx.lineTo(x - 3, y + 2); ctx.lineTo(x + 3, y + 2);
      ctx.closePath();
      ctx.fill();
      if (sel && !summary && sel.id === c.id[i] && sel.track === row.track.id) {
        ctx.strokeStyle = '#111827';
        ctx.lineWidth = 2;
        ctx.strokeRect(x - 5, y, 10, LANE - 4);
        ctx.lineWidth = 1;
      }
    }
    return n;
  }

  // Samples of a counter track in time order, from every tile of the plan.
  static counterPoints(entries, track) {
    const pts = [];
    forEachItem(entries, track, (t, i) => { pts.push({ ts: t.cols.ts[i], v: t.cols.value[i], id: t.cols.id[i] }); });
    pts.sort((a, b) => a.ts - b.ts || a.id - b.id);
    return pts;
  }

  counter(f, row, entries, y0) {
    const ctx = this.ctx;
    const { axis, W } = f;
    const pts = Renderer.counterPoints(entries, row.track.id);
    if (!pts.length) return 0;
    const log = this.log && this.log.track === row.track.id ? this.log.items : null;
    // One scale per counter for the session, widened by every tile drawn, so
    // zooming does not rescale the chart.
    let [lo, hi] = this.counterRange.get(row.track.id) || [Infinity, -Infinity];
    for (const p of pts) { if (p.v < lo) lo = p.v; if (p.v > hi) hi = p.v; }
    this.counterRange.set(row.track.id, [lo, hi]);
    if (lo > 0 && lo < hi * 0.25) lo = 0;
    if (hi === lo) { if (lo > 0) lo = 0; else hi = lo + 1; } else lo -= (hi - lo) * 0.05;
    const hh = row.h - 8;
    const yOf = (v) => y0 + 4 + hh - (v - lo) / (hi - lo) * hh;
    const k = axis.plotWidth() / axis.span();
    const x0 = GUTTER, n = Math.ceil(W) - x0 + 1;
    const mins = new Float64Array(n).fill(NaN), maxs = new Float64Array(n).fill(NaN);
    let i = 0, cur = NaN, drawn = 0;
    while (i < pts.length && pts[i].ts < axis.view[0]) { cur = pts[i].v; i++; }
    if (log && i > 0) log.push(`c:${pts[i - 1].id}`);
    for (let px = 0; px < n; px++) {
      const tEnd = axis.view[0] + (px + 1) / k;
      let mn = cur, mx = cur;
      while (i < pts.length && pts[i].ts < tEnd) {
        const v = pts[i].v;
        if (log) log.push(`c:${pts[i].id}`);
        mn = isNaN(mn) ? v : Math.min(mn, v);
        mx = isNaN(mx) ? v : Math.max(mx, v);
        cur = v;
        i++; drawn++;
      }
      mins[px] = mn; maxs[px] = mx;
    }
    ctx.fillStyle = color(row.track.name + row.track.series);
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
    return Math.max(drawn, 1);
  }

  // Flow arrows. Each end is anchored on its slice at the slice's lane: a
  // slice's flow_in at its start and flow_out at its end (a slice with both,
  // the middle of a chain bound by one id, gives both ends); a flow event
  // (s/t/f) on the deepest loaded slice of its track enclosing it. Within a
  // flow id, each incoming end is joined to the latest outgoing end before
  // it, so a chain A→B→C draws A→B and B→C. A flow with an end that has no
  // partner among the loaded tiles is completed from the server (f.farEnds,
  // flows.js): the far end is drawn on its slice, or the arrow runs to the
  // screen's edge towards it; `this.flowWants` lists the flows still to ask
  // for, the selection's first. From BUNDLE_AT arrows in view, the arrows
  // between one pair of tracks that start in one eighth of the view are
  // drawn as one bundle with their count (no
  // curtain of lines at coarse zooms), and lone arrows are thinned to
  // MAX_LONE; the selected slice's arrows are always drawn, highlighted.
  // `this.flowInfo` says what was drawn.
  arrows(f) {
    const ctx = this.ctx;
    const { axis, top, W, H } = f;
    const byFlow = new Map();
    const rowOf = new Map();
    for (const row of f.rows) if (row.kind === 'track') rowOf.set(row.track.id, row);
    const laneY = (row, lane) => row.y - top + 2 + Math.min(lane, row.track.max_depth) * LANE + (LANE - 2) / 2;
    for (const row of f.rows) {
      if (row.kind !== 'track' || row.track.kind === 'counter') continue;
      if (row.y - top + row.h < 0 || row.y - top > f.H) continue;
      const entries = f.plan.get(f.groupOf.get(row.track.id)) || [];
      let slices = null;  // this row's loaded slices, for anchoring flow events
      const enclosing = (ts) => {
        if (!slices) {
          slices = [];
          forEachItem(entries, row.track.id, (t, i) => {
            const c = t.cols;
            if (!(c.kind[i] & SUMMARY) && (c.kind[i] & 127) === KIND_SLICE) slices.push({ t, i, ts: c.ts[i], end: c.ts[i] + c.dur[i], lane: c.lane[i] });
          });
        }
        let best = null;
        for (const sl of slices) if (sl.ts <= ts && ts <= sl.end && (!best || sl.lane > best.lane)) best = sl;
        return best;
      };
      forEachItem(entries, row.track.id, (t, i) => {
        const c = t.cols;
        const kb = c.kind[i];
        if (kb & SUMMARY || !c.flow[i]) return;
        const kind = kb & 127;
        const isFlow = kind >= KIND_FLOW_START && kind <= KIND_FLOW_END;
        if (!isFlow && !(c.flags[i] & (FLOW_OUT | FLOW_IN))) return;
        const key = (isFlow ? 'f' : 'b') + c.flow[i];
        let l = byFlow.get(key);
        if (!l) { l = []; byFlow.set(key, l); }
        const track = row.track.id;
        if (isFlow) {
          const sl = enclosing(c.ts[i]);
          // `ev`: the flow event itself, so that selecting it (drawn over
          // its slice) lists the flow too.
          const end = { ts: c.ts[i], y: laneY(row, sl ? sl.lane : c.lane[i]), id: sl ? sl.t.cols.id[sl.i] : c.id[i],
            ev: c.id[i], tile: sl ? sl.t : t, i: sl ? sl.i : i, track };
          if (kind !== KIND_FLOW_START) l.push({ ...end, dir: 0 });      // in (f, t)
          if (kind !== KIND_FLOW_END) l.push({ ...end, dir: 1 });        // out (s, t)
        } else {
          const base = { y: laneY(row, c.lane[i]), id: c.id[i], tile: t, i, track };
          if (c.flags[i] & FLOW_IN) l.push({ ...base, ts: c.ts[i], dir: 0 });
          if (c.flags[i] & FLOW_OUT) l.push({ ...base, ts: c.ts[i] + c.dur[i], dir: 1 });
        }
      });
    }
    const sel = f.selected && !f.selected.summary ? f.selected : null;
    const pairsOf = (l) => {
      l.sort((a, b) => a.ts - b.ts || a.dir - b.dir);
      const out = [];
      let from = null;
      for (const p of l) {
        if (p.dir === 1) { from = p; continue; }
        if (from && from.id !== p.id) out.push([from, p]);
      }
      return out;
    };
    const pairs = [];
    const wants = [], later = [];
    let far = 0;
    for (const [key, l] of byFlow) {
      let ps = pairsOf(l);
      const joined = new Set();
      for (const [a, b] of ps) { joined.add(a); joined.add(b); }
      if (l.every((p) => joined.has(p))) { pairs.push(...ps); continue; }
      // An end without its partner here: the rest of the flow is elsewhere.
      const known = f.farEnds ? f.farEnds(key) : undefined;
      if (known) {
        // Loaded ends by track, time (ns) and direction: a loaded flow event
        // may be anchored on a shallower slice than the server's when the
        // deepest one is inside a summary, and is still the same end.
        const at = (track, ts, dir) => `${track}:${Math.round(ts * 1000)}:${dir}`;
        const have = new Set(l.map((p) => at(p.track, p.ts, p.dir)));
        for (const e of known) {
          if (have.has(at(e.item.track, e.at, e.dir))) continue;
          const row = rowOf.get(e.item.track);
          const y = row ? laneY(row, e.item.depth) : H - 2;  // its process is folded
          l.push({ ts: e.at, y: Math.max(0, Math.min(H, y)), id: e.item.id, track: e.item.track, dir: e.dir, item: e.item, far: true });
          far++;
        }
        ps = pairsOf(l);
      } else {
        (sel && l.some((p) => p.id === sel.id || p.ev === sel.id) ? wants : later).push(key);
      }
      pairs.push(...ps);
    }
    this.flowWants = later.length <= FETCH_LONE ? wants.concat(later) : wants;
    this.flowPairs = pairs;
    const x0 = GUTTER, x1 = W;
    const clampX = (x) => Math.max(x0, Math.min(x1, x));
    const mine = [], others = [];
    for (const pr of pairs) {
      const [a, b] = pr;
      const px = axis.xOf(a.ts), qx = axis.xOf(b.ts);
      if (Math.max(px, qx) < x0 || Math.min(px, qx) > x1) continue;
      (sel && [a.id, a.ev, b.id, b.ev].includes(sel.id) ? mine : others).push(pr);
    }
    const drawn = [];
    const arrow = ([a, b], style, width) => {
      const px = clampX(axis.xOf(a.ts)), qx = clampX(axis.xOf(b.ts));
      drawn.push({ from: a.id, to: b.id, x0: px, y0: a.y, x1: qx, y1: b.y, mine: style === 'mine', far: !!(a.far || b.far) });
      ctx.strokeStyle = style === 'mine' ? 'rgba(234,88,12,0.95)' : 'rgba(55,65,81,0.35)';
      ctx.fillStyle = style === 'mine' ? 'rgba(234,88,12,0.95)' : 'rgba(55,65,81,0.5)';
      ctx.lineWidth = width;
      ctx.beginPath();
      ctx.moveTo(px, a.y);
      const mx = (px + qx) / 2;
      ctx.bezierCurveTo(mx, a.y, mx, b.y, qx, b.y);
      ctx.stroke();
      ctx.beginPath();
      ctx.moveTo(qx, b.y); ctx.lineTo(qx - 6, b.y - 3); ctx.lineTo(qx - 6, b.y + 3); ctx.closePath();
      ctx.fill();
    };
    const bundles = [];
    let thinned = false;
    if (others.length + mine.length < BUNDLE_AT) {
      for (const pr of others) arrow(pr, 'plain', 1);
    } else {
      const groups = new Map();
      for (const pr of others) {
        // Per pair of tracks and eighth of the view, so bundles keep where
        // in time the flows are.
        const col = Math.floor(BUNDLE_COLUMNS * (clampX(axis.xOf(pr[0].ts)) - x0) / Math.max(1, x1 - x0));
        const k = pr[0].track + '>' + pr[1].track + '@' + Math.min(col, BUNDLE_COLUMNS - 1);
        let g = groups.get(k);
        if (!g) { g = []; groups.set(k, g); }
        g.push(pr);
      }
      const lone = [];
      for (const g of groups.values()) if (g.length === 1) lone.push(g[0]); else bundles.push(this.bundle(f, g, clampX));
      const stride = Math.max(1, Math.ceil(lone.length / MAX_LONE));
      thinned = stride > 1;
      for (let j = 0; j < lone.length; j += stride) arrow(lone[j], 'plain', 1);
    }
    for (const pr of mine) arrow(pr, 'mine', 2);
    ctx.lineWidth = 1;
    this.flowInfo = { total: pairs.length, inView: others.length + mine.length, drawn: drawn.length, thinned, far,
      bundles: bundles.map((b) => ({ from: b.from, to: b.to, count: b.count, x0: b.x0, y0: b.y0, x1: b.x1, y1: b.y1 })), arrows: drawn };
  }

  // One bundle: arrows between one pair of tracks as a single band from
  // their mean start to their mean end, as wide as their count warrants and
  // labelled with it.
  bundle(f, g, clampX) {
    const ctx = this.ctx;
    let xa = 0, ya = 0, xb = 0, yb = 0;
    for (const [a, b] of g) { xa += clampX(f.axis.xOf(a.ts)); ya += a.y; xb += clampX(f.axis.xOf(b.ts)); yb += b.y; }
    const n = g.length;
    const b = { from: g[0][0].track, to: g[0][1].track, count: n, x0: xa / n, y0: ya / n, x1: xb / n, y1: yb / n };
    ctx.strokeStyle = 'rgba(37,99,235,0.55)';
    ctx.fillStyle = 'rgba(37,99,235,0.8)';
    ctx.lineWidth = Math.min(8, 1.5 + Math.log2(n));
    ctx.beginPath();
    ctx.moveTo(b.x0, b.y0);
    const mx = (b.x0 + b.x1) / 2;
    ctx.bezierCurveTo(mx, b.y0, mx, b.y1, b.x1, b.y1);
    ctx.stroke();
    ctx.beginPath();
    ctx.moveTo(b.x1, b.y1); ctx.lineTo(b.x1 - 8, b.y1 - 4); ctx.lineTo(b.x1 - 8, b.y1 + 4); ctx.closePath();
    ctx.fill();
    const label = String(n);
    ctx.font = '10px system-ui, sans-serif';
    const w = ctx.measureText(label).width + 6, lx = mx - w / 2, ly = (b.y0 + b.y1) / 2 - 7;
    ctx.fillStyle = 'rgba(255,255,255,0.9)';
    ctx.fillRect(lx, ly, w, 14);
    ctx.fillStyle = 'rgb(30,64,175)';
    ctx.fillText(label, lx + 3, ly + 10);
    return b;
  }

  // The flows of a slice (or of a flow event) in the last frame:
  // [{dir: 'in'|'out', other}], other an end from the tiles ({tile, i,
  // track, ts}) or from the server ({item}).
  flowsOf(id) {
    const out = [];
    for (const [a, b] of this.flowPairs || []) {
      if (a.id === id || a.ev === id) out.push({ dir: 'out', other: b });
      else if (b.id === id || b.ev === id) out.push({ dir: 'in', other: a });
    }
    return out;
  }

  // What is at (mx, y) (y in content coordinates): {row, item} / {row, counter}.
  hit(f, mx, y) {
    const row = f.rows.find((r) => y >= r.y && y < r.y + r.h);
    if (!row) return null;
    if (row.kind === 'process' || mx < GUTTER) return { row, gutter: mx < GUTTER };
    const entries = f.plan.get(f.groupOf.get(row.track.id)) || [];
    const t = f.axis.tOf(mx);
    const slop = 3 * f.axis.span() / f.axis.plotWidth();
    if (row.track.kind === 'counter') {
      let best = null;
      for (const p of Renderer.counterPoints(entries, row.track.id)) { if (p.ts <= t + slop) best = p; else break; }
      return best ? { row, counter: best } : { row };
    }
    const depth = Math.floor((y - row.y - 2) / LANE);
    let best = null, bestD = Infinity, inside = false;
    forEachItem(entries, row.track.id, (tile, i) => {
      if (inside) return;
      const c = tile.cols;
      if (Math.min(c.lane[i], row.track.max_depth) !== depth) return;
      const ts = c.ts[i], dur = c.dur[i];
      const kind = c.kind[i] & 127;
      if (kind !== KIND_SLICE) {
        if (Math.abs(ts - t) <= slop * 1.5) { best = [tile, i]; inside = true; }
        return;
      }
      if (ts <= t && ts + dur >= t) { best = [tile, i]; inside = true; return; }
      if (ts > t + slop || ts + dur < t - slop) return;
      const d = Math.abs(ts + dur / 2 - t);
      if (d < bestD) { bestD = d; best = [tile, i]; }
    });
    return best ? { row, item: itemAt(best[0], best[1], row.track.id, f.strings) } : { row };
  }
}
