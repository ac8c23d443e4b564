// Loader worker: fetches tiles (GET /api/tables/{t}/tile, binary layout in
// docs/api.md), maps the answer onto typed arrays and hands them to the page
// without copying (transferred buffers). Requests are cancelled with an
// AbortController when the page says the view no longer needs them.
//
// in:  {op: 'get', id, url, origin}  (origin: the table start in the page's us)  |  {op: 'cancel', id}
// out: {id, ok: true, tile, bytes} | {id, ok: false, status, message, aborted}
'use strict';

const MAGIC = 0x31425454;  // "TTB1"
const pending = new Map();  // id -> AbortController

function pad8(n) { return (n + 7) & ~7; }

// Decodes one tile answer. Times come out as float64 microseconds on the
// page's clock: origin + ps from the table start / 1e6.
// Throws on any size the counts do not imply: a damaged answer is an error.
function decodeTile(buf, origin) {
  const dv = new DataView(buf);
  if (buf.byteLength < 64 || dv.getUint32(0, true) !== MAGIC) throw new Error('not a tile answer');
  if (dv.getUint32(4, true) !== 1) throw new Error('tile version ' + dv.getUint32(4, true));
  const startPs = dv.getBigInt64(8, true), widthPs = dv.getBigInt64(16, true);
  const resPs = dv.getBigInt64(24, true);
  const level = dv.getUint32(40, true), T = dv.getUint32(44, true), n = dv.getUint32(48, true);
  const m = dv.getUint32(52, true), sbytes = dv.getUint32(56, true);
  const need = 64 + pad8(8 * T) + 48 * n + pad8(25 * n) + pad8(8 * m + sbytes);
  if (need !== buf.byteLength) throw new Error(`damaged tile: ${buf.byteLength} bytes, counts say ${need}`);
  let off = 64;
  const trackIds = new Uint32Array(buf, off, T); off += 4 * T;
  const trackCounts = new Uint32Array(buf, off, T); off = pad8(off + 4 * T);
  // 64-bit columns as 32-bit halves: hi * 2^32 + lo is exact below 2^53
  // and much faster than BigInt.
  const i64 = () => { const a = new Int32Array(buf, off, 2 * n); off += 8 * n; return a; };
  const f64 = () => { const a = new Float64Array(buf, off, n); off += 8 * n; return a; };
  const u32 = () => { const a = new Uint32Array(buf, off, n); off += 4 * n; return a; };
  const startOff = i64(), durPs = i64(), idRaw = i64(), value = f64(), coveredPs = i64(), longestPs = i64();
  const name = u32(), cat = u32(), lane = u32(), count = u32(), flags = u32(), flow = u32();
  const kind = new Uint8Array(buf, off, n); off = pad8(off + n);
  const sids = new Uint32Array(buf, off, m); off += 4 * m;
  const slens = new Uint32Array(buf, off, m); off += 4 * m;
  const dec = new TextDecoder();
  const strings = [];
  let total = 0;
  for (let i = 0; i < m; i++) {
    strings.push([sids[i], dec.decode(new Uint8Array(buf, off + total, slens[i]))]);
    total += slens[i];
  }
  if (total !== sbytes) throw new Error('damaged tile: string lengths');
  // BigInt columns -> float64 microseconds (what the page draws with).
  const start = Number(startPs);
  const ts = new Float64Array(n), dur = new Float64Array(n), id = new Float64Array(n);
  const covered = new Float64Array(n), longest = new Float64Array(n);
  const num = (a, i) => a[2 * i + 1] * 4294967296 + (a[2 * i] >>> 0);
  for (let i = 0; i < n; i++) {
    ts[i] = origin + (start + num(startOff, i)) / 1e6;
    dur[i] = num(durPs, i) / 1e6;
    id[i] = num(idRaw, i);
    covered[i] = num(coveredPs, i) / 1e6;
    longest[i] = num(longestPs, i) / 1e6;
  }
  const tracks = [];
  let from = 0;
  for (let t = 0; t < T; t++) {
    tracks.push({ id: trackIds[t], from, to: from + trackCounts[t] });
    from += trackCounts[t];
  }
  // The other columns stay views on the answer's buffer: transferred with
  // it, never copied.
  const cols = { ts, dur, id, covered, longest, value, name, cat, lane, count, flags, flow, kind };
  return {
    level, start: origin + start / 1e6, width: Number(widthPs) / 1e6, res: Number(resPs) / 1e6,
    n, tracks, cols, strings,
  };
}

self.onmessage = async (e) => {
  const msg = e.data;
  if (msg.op === 'cancel') {
    const c = pending.get(msg.id);
    if (c) c.abort();
    return;
  }
  const ctl = new AbortController();
  pending.set(msg.id, ctl);
  try {
    const r = await fetch(msg.url, { signal: ctl.signal });
    const buf = await r.arrayBuffer();
    if (!r.ok) {
      let message = new TextDecoder().decode(buf);
      try { const j = JSON.parse(message); message = j.error + (j.parameter ? ` (${j.parameter})` : ''); } catch (x) { /* text */ }
      self.postMessage({ id: msg.id, ok: false, status: r.status, message });
      return;
    }
    const tile = decodeTile(buf, msg.origin);
    const transfer = [...new Set(Object.values(tile.cols).map((a) => a.buffer))];
    self.postMessage({ id: msg.id, ok: true, tile, bytes: buf.byteLength }, transfer);
  } catch (err) {
    self.postMessage({ id: msg.id, ok: false, status: -1, message: String(err && err.message || err),
      aborted: ctl.signal.aborted });
  } finally {
    pending.delete(msg.id);
  }
};
