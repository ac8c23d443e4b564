// Small helpers shared by the viewer's modules: element lookup, colours,
// number, byte and duration text, HTML escaping, and fetching text with the API's
// JSON errors turned into exceptions.
'use strict';

export const $ = (id) => document.getElementById(id);

function hashColor(name) {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) { h ^= name.charCodeAt(i); h = Math.imul(h, 16777619); }
  h >>>= 0;
  const hue = h % 360, sat = 45 + (h >> 9) % 25, lum = 58 + (h >> 17) % 10;
  return `hsl(${hue} ${sat}% ${lum}%)`;
}
const colorCache = new Map();
export function color(name) {
  let c = colorCache.get(name);
  if (!c) { c = hashColor(name); colorCache.set(name, c); }
  return c;
}

// The same colour as [r, g, b] (0..255), for pixels written directly.
export function colorRgb(name) {
  const m = /hsl\((\d+) (\d+)% (\d+)%\)/.exec(color(name));
  const h = Number(m[1]) / 360, s = Number(m[2]) / 100, l = Number(m[3]) / 100;
  const q = l < 0.5 ? l * (1 + s) : l + s - l * s, p = 2 * l - q;
  const f = (t) => {
    if (t < 0) t += 1;
    if (t > 1) t -= 1;
    if (t < 1 / 6) return p + (q - p) * 6 * t;
    if (t < 1 / 2) return q;
    if (t < 2 / 3) return p + (q - p) * (2 / 3 - t) * 6;
    return p;
  };
  return [f(h + 1 / 3), f(h), f(h - 1 / 3)].map((v) => Math.round(v * 255));
}

export function fmtDur(us) {
  const a = Math.abs(us);
  if (a === 0) return '0';
  if (a >= 1e6) return (us / 1e6).toFixed(a >= 1e7 ? 2 : 3) + ' s';
  if (a >= 1e3) return (us / 1e3).toFixed(a >= 1e4 ? 2 : 3) + ' ms';
  if (a >= 1) return us.toFixed(a >= 10 ? 2 : 3) + ' µs';
  return (us * 1e3).toFixed(a >= 0.01 ? 1 : 3) + ' ns';
}

export function fmtNum(v) {
  const a = Math.abs(v);
  for (const [d, u] of [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']]) {
    if (a >= d) return +(v / d).toPrecision(4) + ' ' + u;
  }
  return String(+v.toPrecision(4));
}

export function esc(s) {
  return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
}

export async function getText(url) {
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

// Bytes in binary units (1 KiB = 1024 B), as memory tools show them.
export function fmtBytes(b) {
  const a = Math.abs(b);
  for (const [d, u] of [[2 ** 40, 'TiB'], [2 ** 30, 'GiB'], [2 ** 20, 'MiB'], [2 ** 10, 'KiB']]) {
    if (a >= d) return `${+(b / d).toPrecision(4)} ${u}`;
  }
  return `${b} B`;
}
