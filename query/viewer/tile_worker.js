// Loader worker: fetches tiles (GET /api/tables/{t}/tile, binary layout in
// docs/api.md), maps the answer onto typed arrays and hands them to the page
// without copying (transferred buffers). Requests are cancelled with an
// AbortController when the page says the view no longer needs them.
//
// in:  {op: 'get', id, url, origin}  (origin: the table start in the page's us)  |  {op: 'cancel', id}
// out: {id, ok: true, tile, bytes} | {id, ok: false, status, message, aborted}
'use strict';

import { decodeTile } from './tile_decode.js';

const pending = new Map();  // id -> AbortController

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
