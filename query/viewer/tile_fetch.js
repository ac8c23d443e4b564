// One tile answer, fetched and decoded (tile_decode.js), the same way for
// every request: {ok: true, tile, bytes} | {ok: false, status, message,
// aborted}, with `transfer` the tile's buffers (to hand them on without
// copying). fetchTile makes the request; answerOf reads a response whose
// request the page made before the worker was up (its body stream
// transferred here).
'use strict';

import { decodeTile } from './tile_decode.js';

export async function answerOf(ok, status, body, origin, signal) {
  try {
    const buf = await new Response(body).arrayBuffer();
    if (!ok) {
      let message = new TextDecoder().decode(buf);
      try { const j = JSON.parse(message); message = j.error + (j.parameter ? ` (${j.parameter})` : ''); } catch (x) { /* text */ }
      return { ok: false, status, message };
    }
    const tile = decodeTile(buf, origin);
    const transfer = [...new Set(Object.values(tile.cols).map((a) => a.buffer))];
    return { ok: true, tile, bytes: buf.byteLength, transfer };
  } catch (err) {
    return { ok: false, status: -1, message: String(err && err.message || err), aborted: !!(signal && signal.aborted) };
  }
}

export async function fetchTile(url, origin, signal) {
  let r;
  try {
    r = await fetch(url, { signal });
  } catch (err) {
    return { ok: false, status: -1, message: String(err && err.message || err), aborted: signal.aborted };
  }
  return answerOf(r.ok, r.status, r.body, origin, signal);
}
