// Far ends of flows, from the server: an arrow whose other end lies outside
// the loaded tiles is completed with GET /api/tables/{t}/flow?sid=, which
// answers every end of a flow id from the table's flow index (a few tile
// reads whatever the table's size). The renderer says which flows it could
// not complete (`want`), the selection's first; answers are kept per table
// and flow, and each one redraws.
//
// Ends are plain items (as renderer.itemAt gives), in the page's clock, plus
// `at` (where the arrow attaches), `dir` (0 in, 1 out: a flow event "t" and a
// chain's middle slice give one of each) and `key` (`f` + string id for flow
// events, `b` + string id for bind ids, the renderer's flow keys).
'use strict';

import { getText } from './util.js';

const INFLIGHT = 4;        // requests at a time
const KEEP = 4096;         // answers kept (oldest dropped first)

export class FarEnds {
  constructor(onLoad) {
    this.onLoad = onLoad;
    this.answers = new Map();  // table \0 key -> ends[] | null (asked, not answered)
    this.queue = [];
    this.inflight = 0;
    this.fetched = 0;          // answers received (tests)
    this.noIndex = new Set();  // tables written before the flow index (409): asked once
  }

  // The ends of flow `key` of `table`, or undefined while unknown.
  get(table, key) {
    const a = this.answers.get(table + '\0' + key);
    return a || undefined;
  }

  // Asks for the flows `keys` (most wanted first) not asked for yet.
  want(table, origin, keys) {
    if (this.noIndex.has(table)) return;
    for (const key of keys) {
      const k = table + '\0' + key;
      if (this.answers.has(k)) continue;
      this.answers.set(k, null);
      this.queue.push({ table, origin, key, k });
    }
    while (this.answers.size > KEEP) this.answers.delete(this.answers.keys().next().value);
    this.pump();
  }

  pump() {
    while (this.inflight < INFLIGHT && this.queue.length) {
      const q = this.queue.shift();
      this.inflight++;
      getText(`/api/tables/${encodeURIComponent(q.table)}/flow?sid=${q.key.slice(1)}`).then((text) => {
        const via = q.key[0] === 'f' ? 'event' : 'bind';
        this.answers.set(q.k, JSON.parse(text).ends.filter((e) => e.via === via).flatMap((e) => endsOf(e, q.origin, q.key)));
      }).catch((e) => {
        this.answers.set(q.k, []);  // draw what is loaded
        if (e.status === 409) this.noIndex.add(q.table);
      }).finally(() => {
        this.inflight--;
        this.fetched++;
        this.pump();
        this.onLoad();
      });
    }
  }
}

// An answer's end as items: one per direction it attaches in.
function endsOf(e, origin, key) {
  const item = {
    ts: origin + e.ts_ps / 1e6, dur: Number(e.dur), name: e.name, cat: e.cat, depth: e.depth, id: e.id,
    track: e.track, summary: false, ph: e.via === 'event' && e.id === e.flow_event ? 'f' : 'X',
    hasArgs: (e.flags & 64) !== 0, hasThreadTime: (e.flags & 128) !== 0,
  };
  const at = origin + e.at_ps / 1e6;
  const dirs = e.dir === 'step' ? [0, 1] : e.dir === 'out' ? [1] : [0];
  return dirs.map((dir) => ({ item, at, dir, key }));
}
