// One tile request, fetched and decoded (tile_decode.js): what the loader
// worker does for every tile, and the page itself for the first ones, asked
// before the worker is up. Both sides give the same answer object:
// {ok: true, tile, bytes} | {ok: false, status, message, aborted}, with
// `transfer` the tile's buffers (to hand them on without copying).
'use strict';

import { decodeTile } from './tile_decode.js';

export async function fetchTile(url, origin, signal) {
  try {
    const r = await fetch(url, { signal });
    const buf = await r.arrayBuffer();
    if (!r.ok) {
      let message = new TextDecoder().decode(buf);
      try { const j = JSON.parse(message); message = j.error + (j.parameter ? ` (${j.parameter})` : ''); } catch (x) { /* text */ }
      return { ok: false, status: r.status, message };
    }
    const tile = decodeTile(buf, origin);
    const transfer = [...new Set(Object.values(tile.cols).map((a) => a.buffer))];
    return { ok: true, tile, bytes: buf.byteLength, transfer };
  } catch (err) {
    return { ok: false, status: -1, message: String(err && err.message || err), aborted: signal.aborted };
  }
}
