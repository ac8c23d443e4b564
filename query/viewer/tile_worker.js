// Loader worker: fetches tiles (GET /api/tables/{t}/tile, binary layout in
// docs/api.md), maps the answer onto typed arrays and hands them to the page
// without copying (transferred buffers). Requests are cancelled with an
// AbortController when the page says the view no longer needs them. It says
// {op: 'up'} once its modules are loaded: until then the page makes the
// requests itself and sends each response's body stream here ('body';
// cancelled on the page).
//
// in:  {op: 'get', id, url, origin}  (origin: the table start in the page's us)  |  {op: 'cancel', id}
//      | {op: 'body', id, ok, status, body (a transferred ReadableStream), origin}
// out: {op: 'up'} | {id, ok: true, tile, bytes} | {id, ok: false, status, message, aborted}
'use strict';

import { answerOf, fetchTile } from './tile_fetch.js';
// Named here too so both modules are asked for at once: reached only through
// tile_fetch.js, tile_decode.js was a third round trip before the worker ran.
import './tile_decode.js';

const pending = new Map();  // id -> AbortController

self.onmessage = async (e) => {
  const msg = e.data;
  if (msg.op === 'cancel') {
    const c = pending.get(msg.id);
    if (c) c.abort();
    return;
  }
  if (msg.op === 'body') {
    const { transfer, ...answer } = await answerOf(msg.ok, msg.status, msg.body, msg.origin);
    self.postMessage({ id: msg.id, ...answer }, transfer || []);
    return;
  }
  const ctl = new AbortController();
  pending.set(msg.id, ctl);
  const { transfer, ...answer } = await fetchTile(msg.url, msg.origin, ctl.signal);
  pending.delete(msg.id);
  self.postMessage({ id: msg.id, ...answer }, transfer || []);
};
self.postMessage({ op: 'up' });
