// Time: the visible range and its mapping to pixels, the axis above the
// tracks, exact time text for the API, and the tile grid (query/tiles.h) a
// view is cut into. Times in the viewer are microseconds relative to `base`
// (the integer part of the table start when it is epoch-sized), so doubles
// keep sub-nanosecond precision.
'use strict';

export const GUTTER = 220;  // label column, px
export const TILE_BINS = 512;
export const MAX_TILE_LEVEL = 52;

export class TimeAxis {
  constructor() {
    this.base = 0n;      // BigInt us subtracted from every absolute time
    this.baseNum = 0;
    this.full = [0, 1];  // table span, relative us
    this.view = [0, 1];
    this.width = 100;    // canvas css px
  }

  // From the text of GET /api/tables/{t} (start/end as exact decimals).
  setTable(startText, endText) {
    const m = /^(-?\d+)/.exec(startText);
    const startInt = m ? BigInt(m[1]) : 0n;
    this.base = (startInt > 1000000000n || startInt < -1000000000n) ? startInt : 0n;
    this.baseNum = Number(this.base);
    this.full = [this.relFromText(startText), this.relFromText(endText)];
    if (this.full[1] <= this.full[0]) this.full[1] = this.full[0] + 1;
    this.view = this.full.slice();
  }

  get origin() { return this.full[0]; }
  plotWidth() { return Math.max(50, this.width - GUTTER); }
  span() { return this.view[1] - this.view[0]; }
  xOf(t) { return GUTTER + (t - this.view[0]) / this.span() * this.plotWidth(); }
  tOf(x) { return this.view[0] + (x - GUTTER) / this.plotWidth() * this.span(); }

  // Relative us -> absolute microsecond text for the API (exact to 1 ps).
  absUs(rel) {
    let ps = BigInt(Math.round(rel * 1e6)) + this.base * 1000000n;
    const neg = ps < 0n;
    if (neg) ps = -ps;
    const ip = ps / 1000000n, fp = (ps % 1000000n).toString().padStart(6, '0').replace(/0+$/, '');
    return (neg ? '-' : '') + ip.toString() + (fp ? '.' + fp : '');
  }
  // "1680000000000.123" -> relative us
  relFromText(t) {
    const m = /^(-?\d+)(\.\d+)?$/.exec(String(t));
    if (!m) return Number(t) - this.baseNum;
    return Number(BigInt(m[1]) - this.base) + (m[2] ? Number(m[2]) * (m[1].startsWith('-') ? -1 : 1) : 0);
  }
  // JSON.parse whose "ts" fields keep every digit (the reviver sees the
  // number's source text), without touching the text itself.
  parseJson(text) {
    return JSON.parse(text, (k, v, ctx) => {
      if (k !== 'ts' || typeof v !== 'number') return v;
      return ctx && ctx.source ? this.relFromText(ctx.source) : v - this.baseNum;
    });
  }

  // ---- the tile grid ----

  // The level whose bins are 1 to 2 pixels wide (bins of 2^z ns): as the
  // window API's resolution, never finer than a pixel, so a step reads and
  // sends no more than the screen can show.
  tileLevel() {
    const psPerPx = this.span() * 1e6 / this.plotWidth();
    const z = Math.ceil(Math.log2(Math.max(1, psPerPx / 1000)) - 1e-9);
    return Math.max(0, Math.min(MAX_TILE_LEVEL, z));
  }
  static tileWidthUs(level) { return TILE_BINS * 2 ** level / 1000; }
  // The last tile index of `level` (the table's span, query/tiles.h).
  lastTile(level) { return Math.floor(Math.round((this.full[1] - this.full[0]) * 1e6) / (TILE_BINS * 1000 * 2 ** level)); }
  // Indices of the tiles of `level` covering [a, b] (relative us).
  tilesFor(level, a, b) {
    const wps = TILE_BINS * 1000 * 2 ** level;
    const last = this.lastTile(level);
    const k0 = Math.max(0, Math.floor((a - this.full[0]) * 1e6 / wps));
    const k1 = Math.min(last, Math.floor((b - this.full[0]) * 1e6 / wps));
    const out = [];
    for (let k = k0; k <= k1; k++) out.push(k);
    return out;
  }

  // ---- the axis ----

  static niceStep(span, px) {
    const raw = span / Math.max(1, px / 90);
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }

  drawAxis(actx, w, dpr, fmtDur) {
    actx.setTransform(dpr, 0, 0, dpr, 0, 0);
    actx.clearRect(0, 0, w, 28);
    actx.fillStyle = '#fff';
    actx.fillRect(0, 0, w, 28);
    const span = this.span();
    const step = TimeAxis.niceStep(span, this.plotWidth());
    actx.font = '11px system-ui, sans-serif';
    actx.fillStyle = '#4b5563';
    actx.strokeStyle = '#c4c8cf';
    actx.textBaseline = 'middle';
    const first = Math.ceil((this.view[0] - this.origin) / step) * step + this.origin;
    actx.beginPath();
    for (let t = first; t <= this.view[1]; t += step) {
      const x = Math.round(this.xOf(t)) + 0.5;
      if (x < GUTTER) continue;
      actx.moveTo(x, 16); actx.lineTo(x, 28);
      actx.fillText(fmtDur(t - this.origin), x + 3, 10);
    }
    actx.stroke();
    actx.fillStyle = '#111827';
    actx.font = '600 11px system-ui, sans-serif';
    actx.fillText(`${fmtDur(span)} visible`, 8, 14);
  }

  // Grid lines under the tracks.
  drawGrid(ctx, H) {
    const step = TimeAxis.niceStep(this.span(), this.plotWidth());
    ctx.strokeStyle = '#f0f1f4';
    ctx.beginPath();
    for (let t = Math.ceil((this.view[0] - this.origin) / step) * step + this.origin; t <= this.view[1]; t += step) {
      const x = Math.round(this.xOf(t)) + 0.5;
      ctx.moveTo(x, 0); ctx.lineTo(x, H);
    }
    ctx.stroke();
  }
}
