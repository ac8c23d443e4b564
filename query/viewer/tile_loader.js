// Tile loader (page side of tile_worker.js): one request per missing tile,
// each cancellable (the worker aborts its fetch). A cancelled request's
// answer is dropped; one that was no longer needed but not cancelled in time
// still goes into the cache (tiles never change), never onto the screen by
// itself: the renderer draws only what the frame's plan names.
// Until the worker says it is up (its start-up took ~100-160 ms on a first
// load, with the first view's tiles waiting behind it), the page makes the
// requests itself and hands each response's body stream to the worker
// (queued there until it runs), so the bytes flow meanwhile and decoding
// stays off the page's thread: rec.via says which side asked.
'use strict';

export class TileLoader {
  // onTile(key, tile, rec) / onError(key, error, rec): called on answers.
  constructor(onTile, onError) {
    this.onTile = onTile;
    this.onError = onError;
    this.pending = new Map();  // key -> {id, rec}
    this.byId = new Map();     // id -> key
    this.nextId = 1;
    this.requests = [];        // every request made, for tests and benchmarks
    this.cancelled = 0;
    this.bytes = 0;            // tile answer bytes received (uncompressed)
    // The worker index.html started early, once; else a new one.
    this.worker = window.__ttTileWorker || new Worker('tile_worker.js', { type: 'module' });
    window.__ttTileWorker = null;
    this.workerUp = false;
    this.onPage = new Map();   // id -> AbortController, requests the page itself makes
    this.worker.onmessage = (m) => { if (m.data.op === 'up') this.workerUp = true; else this.answer(m.data); };
    this.worker.onerror = (e) => { for (const key of [...this.pending.keys()]) this.fail(key, new Error(e.message || 'loader failed')); };
  }

  isPending(key) { return this.pending.has(key); }
  visiblePending() {
    let n = 0;
    for (const p of this.pending.values()) if (p.rec.visible) n++;
    return n;
  }
  get inflight() { return this.pending.size; }

  request(key, url, origin, rec) {
    if (this.pending.has(key)) return;
    const id = this.nextId++;
    rec.url = url;
    rec.status = 0;
    rec.t0 = performance.now();
    this.requests.push(rec);
    this.pending.set(key, { id, rec });
    this.byId.set(id, key);
    const href = new URL(url, location.href).href;
    rec.via = this.workerUp ? 'worker' : 'page';
    if (this.workerUp) {
      this.worker.postMessage({ op: 'get', id, url: href, origin });
      return;
    }
    const ctl = new AbortController();
    this.onPage.set(id, ctl);
    fetch(href, { signal: ctl.signal }).then((r) => {
      this.worker.postMessage({ op: 'body', id, ok: r.ok, status: r.status, body: r.body, origin }, [r.body]);
    }, (err) => {
      this.onPage.delete(id);
      this.answer({ id, ok: false, status: -1, message: String(err && err.message || err), aborted: ctl.signal.aborted });
    });
  }

  // Cancels every pending request whose key is not in `keep`.
  cancelExcept(keep) {
    for (const [key, p] of this.pending) {
      if (keep.has(key)) continue;
      const ctl = this.onPage.get(p.id);
      this.onPage.delete(p.id);
      if (ctl) ctl.abort();  // also ends the body stream the worker reads
      else this.worker.postMessage({ op: 'cancel', id: p.id });
      p.rec.status = 'cancelled';
      this.pending.delete(key);
      this.byId.delete(p.id);
      this.cancelled++;
    }
  }

  answer(d) {
    this.onPage.delete(d.id);
    const key = this.byId.get(d.id);
    if (key === undefined) return;  // cancelled: nothing waits for it
    const p = this.pending.get(key);
    this.byId.delete(d.id);
    this.pending.delete(key);
    p.rec.ms = Math.round(performance.now() - p.rec.t0);
    if (d.ok) {
      p.rec.status = 200;
      p.rec.items = d.tile.n;
      p.rec.bytes = d.bytes;
      this.bytes += d.bytes;
      this.onTile(key, d.tile, p.rec);
    } else {
      p.rec.status = d.status;
      const err = new Error(d.message);
      err.status = d.status;
      this.onError(key, err, p.rec);
    }
  }

  fail(key, err) {
    const p = this.pending.get(key);
    if (!p) return;
    this.pending.delete(key);
    this.byId.delete(p.id);
    p.rec.status = -1;
    this.onError(key, err, p.rec);
  }
}
