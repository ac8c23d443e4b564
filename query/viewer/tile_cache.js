// Tile cache: decoded tiles by key, least recently used first out once the
// bytes they hold pass a bound. Tiles never change (the server says so with
// an ETag), so a cached tile is always good for its key.
'use strict';

export function tileKey(table, groupKey, level, k) { return `${table}|${groupKey}|${level}|${k}`; }

// Bytes a decoded tile keeps alive: every distinct buffer its columns view.
export function tileBytes(tile) {
  const seen = new Set();
  let n = 0;
  for (const a of Object.values(tile.cols)) {
    if (!seen.has(a.buffer)) { seen.add(a.buffer); n += a.buffer.byteLength; }
  }
  return n + 64 * tile.tracks.length;
}

export class TileCache {
  constructor(maxBytes) {
    this.maxBytes = maxBytes;
    this.bytes = 0;
    this.map = new Map();  // key -> {tile, bytes}; Map order is recency
    this.evicted = 0;
  }

  // The tile, marked as just used; undefined if not cached.
  get(key) {
    const e = this.map.get(key);
    if (!e) return undefined;
    this.map.delete(key);
    this.map.set(key, e);
    return e.tile;
  }

  // Looks without changing the order (for "is it there" questions).
  has(key) { return this.map.has(key); }

  put(key, tile, pinned) {
    const old = this.map.get(key);
    if (old) { this.bytes -= old.bytes; this.map.delete(key); }
    const bytes = tileBytes(tile);
    this.map.set(key, { tile, bytes });
    this.bytes += bytes;
    // Oldest first; tiles the current view draws (pinned) stay.
    for (const [k, e] of this.map) {
      if (this.bytes <= this.maxBytes) break;
      if (k === key || (pinned && pinned.has(k))) continue;
      this.map.delete(k);
      this.bytes -= e.bytes;
      this.evicted++;
    }
  }

  clear() { this.map.clear(); this.bytes = 0; }
}
