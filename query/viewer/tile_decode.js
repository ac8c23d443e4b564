// Tile answer decoding (GET /api/tables/{t}/tile, docs/api.md "Layout"):
// both layout versions, 1 (aligned columns) and 2 (compact varint columns,
// query/tile_pack.h), into the same typed arrays, so what is drawn does not
// depend on the layout. Times come out as float64 microseconds on the page's
// clock: origin + ps from the table start / 1e6. Any size or value the
// counts do not imply throws: a damaged answer is an error, never rows.
'use strict';

const MAGIC = 0x31425454;  // "TTB1"
const HAS_ID = 0x10, HAS_VALUE = 0x20, HAS_COVERED = 0x40;  // version-2 kind bits
const PACK_BITS = HAS_ID | HAS_VALUE | HAS_COVERED;
function pad(n, to) { return Math.ceil(n / to) * to; }
function pad8(n) { return pad(n, 8); }

export function decodeTile(buf, origin) {
  const dv = new DataView(buf);
  if (buf.byteLength < 64 || dv.getUint32(0, true) !== MAGIC) throw new Error('not a tile answer');
  const version = dv.getUint32(4, true);
  if (version !== 1 && version !== 2) throw new Error('tile version ' + version);
  const h = {
    start: Number(dv.getBigInt64(8, true)), width: Number(dv.getBigInt64(16, true)),
    res: Number(dv.getBigInt64(24, true)), level: dv.getUint32(40, true),
    T: dv.getUint32(44, true), n: dv.getUint32(48, true), m: dv.getUint32(52, true),
    sbytes: dv.getUint32(56, true), unit: dv.getUint32(60, true),
  };
  const trackIds = new Uint32Array(buf, 64, h.T);
  const trackCounts = new Uint32Array(buf, 64 + 4 * h.T, h.T);
  let total = 0;
  for (let t = 0; t < h.T; t++) total += trackCounts[t];
  if (total !== h.n) throw new Error('damaged tile: track counts');
  const heads = new Uint8Array(h.n);
  for (let t = 0, at = 0; t < h.T; at += trackCounts[t++]) if (at < h.n) heads[at] = 1;
  const { cols, stringsAt } = version === 1 ? alignedColumns(buf, h, heads) : compactColumns(buf, h, heads);
  const strings = readStrings(buf, h, stringsAt);
  for (let i = 0; i < h.n; i++) cols.ts[i] = origin + (h.start + cols.ts[i]) / 1e6;
  const tracks = [];
  for (let t = 0, from = 0; t < h.T; from += trackCounts[t++]) {
    tracks.push({ id: trackIds[t], from, to: from + trackCounts[t] });
  }
  return {
    level: h.level, start: origin + h.start / 1e6, width: h.width / 1e6, res: h.res / 1e6,
    n: h.n, tracks, cols, strings,
  };
}

// Version 1: every column maps onto the answer's buffer; the 64-bit time
// and id columns are converted (ts stays in ps from the tile start here).
function alignedColumns(buf, h, heads) {
  const { T, n, m, sbytes } = h;
  const need = 64 + pad8(8 * T) + 48 * n + pad8(25 * n) + pad8(8 * m + sbytes);
  if (need !== buf.byteLength) throw new Error(`damaged tile: ${buf.byteLength} bytes, counts say ${need}`);
  let off = 64 + pad8(8 * T);
  // 64-bit columns as 32-bit halves: hi * 2^32 + lo is exact below 2^53
  // and much faster than BigInt.
  const i64 = () => { const a = new Int32Array(buf, off, 2 * n); off += 8 * n; return a; };
  const f64 = () => { const a = new Float64Array(buf, off, n); off += 8 * n; return a; };
  const u32 = () => { const a = new Uint32Array(buf, off, n); off += 4 * n; return a; };
  const startOff = i64(), durPs = i64(), idRaw = i64(), value = f64(), coveredPs = i64(), longestPs = i64();
  const name = u32(), cat = u32(), lane = u32(), count = u32(), flags = u32(), flow = u32();
  const kind = new Uint8Array(buf, off, n); off = pad8(off + n);
  const ts = new Float64Array(n), dur = new Float64Array(n), id = new Float64Array(n);
  const covered = new Float64Array(n), longest = new Float64Array(n);
  const num = (a, i) => a[2 * i + 1] * 4294967296 + (a[2 * i] >>> 0);
  for (let i = 0; i < n; i++) {
    ts[i] = num(startOff, i);
    dur[i] = num(durPs, i) / 1e6;
    id[i] = num(idRaw, i);
    covered[i] = num(coveredPs, i) / 1e6;
    longest[i] = num(longestPs, i) / 1e6;
  }
  return { cols: { ts, dur, id, covered, longest, value, name, cat, lane, count, flags, flow, kind }, stringsAt: off };
}

// Version 2: kind bytes, then LEB128 varint columns (zigzag for signed
// ones) in units of `h.unit` ps: start deltas within a track, durations,
// id deltas between a track's events (HAS_ID), raw f64 values (HAS_VALUE),
// covered/longest pairs (HAS_COVERED; else both equal the duration), then
// name, cat, lane, count, flags, flow.
function compactColumns(buf, h, heads) {
  const { T, n, unit } = h;
  if (!unit) throw new Error('damaged tile: time unit 0');
  const bytes = new Uint8Array(buf);
  const dv = new DataView(buf);
  let off = 64 + 8 * T;
  if (off + n > bytes.length) throw new Error('damaged tile: short');
  const kind = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const k = bytes[off + i];
    if ((k & 0x0f) > 5) throw new Error('damaged tile: kind');
    kind[i] = k;
  }
  off += n;
  // Below 2^53 (every time, id and count of a trace) a Number is exact.
  const next = () => {
    let v = 0, mul = 1;
    for (;;) {
      if (off >= bytes.length || mul > 2 ** 63) throw new Error('damaged tile: varint');
      const c = bytes[off++];
      v += (c & 0x7f) * mul;
      if (c < 0x80) return v;
      mul *= 128;
    }
  };
  const signed = () => { const v = next(); return v % 2 ? -(v + 1) / 2 : v / 2; };
  const ts = new Float64Array(n), dur = new Float64Array(n), id = new Float64Array(n);
  const covered = new Float64Array(n), longest = new Float64Array(n), value = new Float64Array(n);
  for (let i = 0, prev = 0; i < n; i++) {
    if (heads[i]) prev = 0;
    prev += signed();
    ts[i] = prev * unit;
  }
  for (let i = 0; i < n; i++) dur[i] = signed() * unit / 1e6;
  for (let i = 0, prev = 0; i < n; i++) {
    if (heads[i]) prev = 0;
    if (kind[i] & HAS_ID) { prev += signed(); id[i] = prev; }
  }
  for (let i = 0; i < n; i++) {
    if (!(kind[i] & HAS_VALUE)) continue;
    if (off + 8 > bytes.length) throw new Error('damaged tile: value column');
    value[i] = dv.getFloat64(off, true);
    off += 8;
  }
  for (let i = 0; i < n; i++) {
    if (kind[i] & HAS_COVERED) {
      covered[i] = signed() * unit / 1e6;
      longest[i] = signed() * unit / 1e6;
    } else {
      covered[i] = longest[i] = dur[i];
    }
  }
  const words = () => {
    const a = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      const v = next();
      if (v > 0xffffffff) throw new Error('damaged tile: word column');
      a[i] = v;
    }
    return a;
  };
  const name = words(), cat = words(), lane = words(), count = words(), flags = words(), flow = words();
  for (let i = 0; i < n; i++) kind[i] &= ~PACK_BITS;
  const stringsAt = pad(off, 4);
  if (pad8(stringsAt + 8 * h.m + h.sbytes) !== buf.byteLength) throw new Error('damaged tile: size');
  return { cols: { ts, dur, id, covered, longest, value, name, cat, lane, count, flags, flow, kind }, stringsAt };
}

function readStrings(buf, h, at) {
  const { m, sbytes } = h;
  if (at % 4 || at + 8 * m + sbytes > buf.byteLength) throw new Error('damaged tile: strings');
  const sids = new Uint32Array(buf, at, m);
  const slens = new Uint32Array(buf, at + 4 * m, m);
  const dec = new TextDecoder();
  const strings = [];
  let off = at + 8 * m, total = 0;
  for (let i = 0; i < m; i++) {
    if (total + slens[i] > sbytes) throw new Error('damaged tile: string lengths');
    strings.push([sids[i], dec.decode(new Uint8Array(buf, off + total, slens[i]))]);
    total += slens[i];
  }
  if (total !== sbytes) throw new Error('damaged tile: string lengths');
  return strings;
}
