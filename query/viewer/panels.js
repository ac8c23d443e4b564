// Panels around the timeline: the details of the selected event (with its
// arguments from /event), the tooltip, the Stats tab (/stats of the visible
// range) and search (/search, landing on each match in turn).
//
// `app` is the viewer (viewer.js): {S, axis, tt, requestDraw(), setView(a, b),
// reveal(item), layout(), tableName(), memoryOpened()}.
'use strict';

import { $, color, esc, fmtDur, fmtNum, getText } from './util.js';

export class Panels {
  constructor(app) {
    this.app = app;
    this.stats = { timer: 0, seq: 0, key: '', byTrack: false };
    this.search = this.newSearch('', '', null);
    for (const b of document.querySelectorAll('.tabs button')) b.addEventListener('click', () => this.showTab(b.dataset.tab));
    $('search-form').addEventListener('submit', (e) => { e.preventDefault(); this.searchStep(1); });
    $('search').addEventListener('keydown', (e) => {
      // Enter runs the search and leaves the box, so that w/a/s/d navigate
      // at once; Enter again (or / to come back) steps on.
      if (e.key === 'Enter') { e.preventDefault(); e.target.blur(); this.searchStep(e.shiftKey ? -1 : 1); }
      // Esc leaves the box keeping the query (a search input would clear it).
      if (e.key === 'Escape') { e.preventDefault(); e.target.blur(); }
    });
    $('search-next').addEventListener('click', () => this.searchStep(1));
    $('search-prev').addEventListener('click', () => this.searchStep(-1));
  }

  // A new table: nothing of the previous one stays on screen.
  reset() {
    this.search = this.newSearch('', '', null);
    this.app.highlight('');
    $('search-count').textContent = '';
    this.stats.key = '';
    this.select(null);
    $('stats').innerHTML = '<p class="muted">Top names by self time in the visible range.</p>';
  }

  trackLabel(id) {
    const info = this.app.S.trackInfo.get(id);
    if (!info) return String(id);
    const pl = info.process.labels && info.process.labels.length ? ` [${info.process.labels.join(', ')}]` : '';
    return `${info.process.name || 'pid ' + info.process.pid}${pl} › ${info.track.name || info.track.tid} (pid ${info.process.pid}, tid ${info.track.tid})`;
  }

  select(it) {
    const { S, tt, axis } = this.app;
    S.selected = it;
    tt.selected = it ? { id: it.id, name: it.name, summary: it.summary } : null;
    this.showTab('details');
    const el = $('details');
    if (!it) { el.innerHTML = '<p class="muted">Click an event to see it here.</p>'; this.app.requestDraw(); return; }
    const rows = [
      ['name', esc(it.name)],
      ['category', esc(it.summary ? 'tracetable.summary' : (it.cat || '—'))],
      ['start', `${fmtDur(it.ts - axis.origin)} <span class="muted">(${axis.absUs(it.ts)} µs)</span>`],
      ['duration', it.ph === 'X' || it.summary ? fmtDur(it.dur) : '— (instant)'],
      ...(it.ph === 'X' ? [['end', `${fmtDur(it.ts + it.dur - axis.origin)} <span class="muted">(${axis.absUs(it.ts + it.dur)} µs)</span>`]] : []),
      ['track', esc(this.trackLabel(it.track))],
      ['depth', String(it.depth)],
    ];
    if (it.summary) {
      rows.push(['events', String(it.count)], ['busy', `${fmtDur(it.covered)} (${Math.round(100 * it.covered / Math.max(1e-12, it.dur))}%)`],
        ['longest', fmtDur(it.longest)]);
    } else {
      rows.push(['id', String(it.id)]);
    }
    el.innerHTML = `<h3><span class="swatch" style="background:${color(it.name)}"></span>${esc(it.name)}</h3>` +
      `<table class="kv">${rows.map(([k, v]) => `<tr><td>${k}</td><td>${v}</td></tr>`).join('')}</table>` +
      (it.summary ? '<p class="muted">A summary of events shorter than the resolution; zoom in (f) to see them.</p>'
        : '<h3 style="margin-top:12px">arguments</h3><pre class="args" id="args">loading…</pre>');
    if (!it.summary) this.listFlows(it);
    if (!it.summary && it.ph === 'X') this.relatives(it);
    if (!it.summary && it.hasArgs === false && !it.hasThreadTime) {
      // The tile says it has neither: no request (and no 404 in the console).
      $('args').textContent = '(no arguments)';
      tt.argsShown++;
    } else if (!it.summary) {
      const id = it.id;
      getText(`/api/tables/${encodeURIComponent(this.app.tableName())}/event?id=${id}`).then((text) => {
        if (!S.selected || S.selected.id !== id) return;
        const j = JSON.parse(text);
        $('args').textContent = Object.keys(j.args).length ? JSON.stringify(j.args, null, 2) : '(no arguments)';
        this.threadTime(j);
        tt.argsShown++;
      }).catch((e) => {
        if (!S.selected || S.selected.id !== id) return;
        $('args').textContent = e.status === 404 ? '(no arguments)' : 'error: ' + e.message;
        tt.argsShown++;
      });
    }
    this.app.requestDraw();
  }

  // Parent, children and self time of the selected slice, from an exact
  // (resolution 0) window over its span on its track: the tiles on screen
  // may hold its children only as summaries.
  async relatives(it) {
    const { S, axis, tt } = this.app;
    const box = document.createElement('table');
    box.className = 'kv';
    box.id = 'relatives';
    box.innerHTML = '<tr><td>self</td><td class="muted">…</td></tr>';
    $('details').querySelector('table.kv').after(box);
    const params = new URLSearchParams({ start_us: axis.absUs(it.ts), end_us: axis.absUs(it.ts + it.dur), resolution_us: '0',
      tracks: String(it.track), limit: '20000' });
    let rows;
    try {
      const j = axis.parseJson(await getText(`/api/tables/${encodeURIComponent(S.table.name)}/window?${params}`));
      const ev = j.traceEvents.filter((e) => e.ph === 'X' && e.cat !== 'tracetable.summary');
      if (j.tracetable.truncated) throw new Error('too many events inside to count');
      const end = it.ts + it.dur;
      let parent = null;
      for (const e of ev) if (e.tt_depth < it.depth && e.ts <= it.ts && e.ts + e.dur >= end && (!parent || e.tt_depth > parent.tt_depth)) parent = e;
      const kids = ev.filter((e) => e.tt_depth === it.depth + 1 && e.ts >= it.ts && e.ts <= end && e.tt_id !== it.id);
      const covered = kids.reduce((x, e) => x + Math.max(0, Math.min(e.ts + e.dur, end) - Math.max(e.ts, it.ts)), 0);
      const self = Math.max(0, it.dur - covered);
      tt.relatives = { id: it.id, parent: parent ? parent.name : null, children: kids.map((e) => e.name), self };
      rows = [['self', fmtDur(self)], ['parent', parent ? esc(parent.name) : '—'],
        ['children', kids.length ? `${kids.length}: ${kids.slice(0, 5).map((e) => esc(e.name)).join(', ')}${kids.length > 5 ? ', …' : ''}` : '—']];
    } catch (e) {
      tt.relatives = { id: it.id, error: e.message };
      rows = [['self', `<span class="muted">unknown (${esc(e.message)})</span>`]];
    }
    if (!S.selected || S.selected.id !== it.id) return;
    box.innerHTML = rows.map(([k, v]) => `<tr><td>${k}</td><td>${v}</td></tr>`).join('');
  }

  // Thread time (Chrome tts/tdur) from an /event answer: the thread's clock
  // has no origin in common with the trace's, so its start is shown as given.
  threadTime(j) {
    const { tt } = this.app;
    if (j.tts === undefined && j.tdur === undefined) return;
    const rows = [];
    if (j.tdur !== undefined) rows.push(['thread duration', esc(fmtDur(j.tdur))]);
    if (j.tts !== undefined) rows.push(['thread start', `${esc(String(j.tts))} µs <span class="muted">(thread clock)</span>`]);
    const table = $('details').querySelector('table.kv');
    for (const [k, v] of rows) table.insertAdjacentHTML('beforeend', `<tr class="thread-time"><td>${k}</td><td>${v}</td></tr>`);
    tt.threadTime = { id: j.id, tts: j.tts, tdur: j.tdur };
  }

  // After a frame: the selection's flows again if they changed (a far end
  // arrived from the server, or scrolled into the loaded tiles).
  refreshFlows(it) {
    if (it.summary) return;
    const sig = this.app.flowsOf(it.id).map((x) => `${x.dir}${x.item.id}`).join(',');
    if (sig !== this.flowSig && $('details').querySelector('table.kv')) this.listFlows(it);
  }

  // The selected slice's flows, each with a "go to" that shows and selects
  // the other end (far ends come from the server: flows.js).
  listFlows(it) {
    const { axis, tt } = this.app;
    const flows = this.app.flowsOf(it.id);
    this.flowSig = flows.map((x) => `${x.dir}${x.item.id}`).join(',');
    tt.flowList = flows.map((x) => ({ dir: x.dir, id: x.item.id, name: x.item.name, ts: x.item.ts }));
    const old = $('flows');
    if (old) old.remove();
    if (!flows.length) return;
    const box = document.createElement('div');
    box.id = 'flows';
    box.innerHTML = '<h3 style="margin-top:12px">flows</h3>' + flows.map((x, j) =>
      `<div class="flow">${x.dir === 'in' ? '← from' : '→ to'} <b>${esc(x.item.name)}</b> at ${esc(fmtDur(x.item.ts - axis.origin))} ` +
      `<button type="button" data-flow="${j}">go to</button></div>`).join('');
    $('details').insertBefore(box, $('details').querySelector('h3 + table + h3, h3 + table + p') || null);
    for (const b of box.querySelectorAll('button')) b.addEventListener('click', () => this.goTo(flows[Number(b.dataset.flow)].item));
  }

  // Shows and selects `other` (a flow's far end), keeping the zoom.
  goTo(other) {
    const { axis } = this.app;
    const span = axis.span();
    if (other.ts < axis.view[0] || other.ts > axis.view[1]) this.app.setView(other.ts - span / 2, other.ts + span / 2);
    this.app.reveal(other);
    this.select(other);
  }

  // "]" / "[": the selected slice's first outgoing / incoming flow.
  followFlow(dir) {
    const { S } = this.app;
    if (!S.selected || S.selected.summary) return;
    const x = this.app.flowsOf(S.selected.id).find((f) => f.dir === dir);
    if (x) this.goTo(x.item);
  }

  tooltip(h, e) {
    const tip = $('tooltip');
    const { axis } = this.app;
    let text;
    if (h && h.row && h.row.kind === 'track' && h.gutter) {
      text = this.trackLabel(h.row.track.id);  // long names are cut in the gutter
    } else if (!h || (!h.item && !h.counter)) {
      tip.hidden = true;
      return;
    } else if (h.counter) {
      text = `${h.row.track.name}${h.row.track.series ? ' · ' + h.row.track.series : ''}\n${h.counter.v} (${fmtNum(h.counter.v)})  at ${fmtDur(h.counter.ts - axis.origin)}`;
    } else {
      const it = h.item;
      text = it.summary
        ? `${it.count.toLocaleString()} events (${it.kind}), e.g. ${it.name}\n${fmtDur(it.dur)} span · busy ${fmtDur(it.covered)} · longest ${fmtDur(it.longest)}`
        : `${it.name}\n${it.ph === 'X' ? fmtDur(it.dur) + ' · ' : ''}at ${fmtDur(it.ts - axis.origin)}${it.cat ? ' · ' + it.cat : ''}`;
    }
    tip.textContent = text;
    tip.hidden = false;
    const tl = $('timeline').getBoundingClientRect();
    tip.style.left = Math.min(e.clientX - tl.left + 14, tl.width - 300) + 'px';
    tip.style.top = (e.clientY - tl.top + 14) + 'px';
  }

  // ---- stats ----

  showTab(name) {
    for (const b of document.querySelectorAll('.tabs button')) b.classList.toggle('active', b.dataset.tab === name);
    for (const el of document.querySelectorAll('#side .tab-body')) el.hidden = el.id !== name;
    if (name === 'stats') { this.stats.key = ''; this.scheduleStats(0); }
    if (name === 'memory') this.app.memoryOpened();
  }

  // Stats of the selected range (shift+drag) when there is one, else of the
  // visible range; computed by the server (GET stats).
  statsSpan() {
    const { S, axis } = this.app;
    const [a0, b0] = S.range || axis.view;
    const a = Math.max(axis.full[0], a0), b = Math.min(axis.full[1], b0);
    return [a, Math.max(a, b), !!S.range];
  }

  // Pans and zooms change the span many times a second: wait for the view to
  // settle. Opening the tab (also what a finished range selection does)
  // asks at once.
  scheduleStats(delay = 350) {
    const { S } = this.app;
    if ($('stats').hidden || !S.table) return;
    const [a, b] = this.statsSpan();
    const key = `${S.table.name}|${S.host}|${a}|${b}|${this.stats.byTrack}`;
    if (key === this.stats.key) return;
    this.stats.key = key;
    clearTimeout(this.stats.timer);
    this.stats.timer = setTimeout(() => this.loadStats(), delay);
  }

  async loadStats() {
    const { S, axis, tt } = this.app;
    const seq = ++this.stats.seq;
    const [a, b, isRange] = this.statsSpan();
    const params = new URLSearchParams({ start_us: axis.absUs(a), end_us: axis.absUs(b), top: '40' });
    if (S.host) params.set('host', S.host);
    const el = $('stats');
    try {
      const j = JSON.parse(await getText(`/api/tables/${encodeURIComponent(S.table.name)}/stats?${params}`));
      if (seq !== this.stats.seq) return;
      const head = `<p class="muted">${isRange ? `<b>selected range</b> ${esc(axis.fmtRel(a, 100))} – ${esc(axis.fmtRel(b, 100))} · ` : ''}` +
        `${fmtDur(b - a)}${isRange ? '' : ' visible'} · ${j.events.toLocaleString()} events` +
        `${j.truncated ? ` · <b>truncated</b>: counted up to ${esc(axis.fmtRel(axis.relFromText(String(j.covered_to_us))))}` : ''}` +
        ` · <label><input type="checkbox" id="stats-by-track"${this.stats.byTrack ? ' checked' : ''}> by track</label></p>`;
      let body;
      if (this.stats.byTrack) {
        body = `<table class="stats-table" id="stats-tracks"><tr><th>track</th><th class="num">count</th><th class="num">self</th><th class="num">total</th></tr>` +
          j.tracks.map((t) => `<tr><td class="name">${esc(this.trackLabel(t.track))}</td><td class="num">${t.count.toLocaleString()}</td>` +
            `<td class="num">${fmtDur(t.self_us)}</td><td class="num">${fmtDur(t.total_us)}</td></tr>`).join('') + '</table>';
      } else {
        const maxSelf = Math.max(1e-12, ...j.names.map((n) => n.self_us));
        body = `<table class="stats-table" id="stats-names"><tr><th>name</th><th class="num">count</th><th class="num">self</th><th class="num">total</th>` +
          `<th class="num">min</th><th class="num">avg</th><th class="num">max</th></tr>` +
          j.names.map((n) => `<tr><td class="name"><span class="swatch" style="background:${color(n.name)}"></span>${esc(n.name)}` +
            `<div class="bar" style="width:${(100 * n.self_us / maxSelf).toFixed(1)}%"></div></td>` +
            `<td class="num">${n.count.toLocaleString()}</td><td class="num">${fmtDur(n.self_us)}</td><td class="num">${fmtDur(n.total_us)}</td>` +
            (n.slices ? `<td class="num">${fmtDur(n.min_us)}</td><td class="num">${fmtDur(n.avg_us)}</td><td class="num">${fmtDur(n.max_us)}</td>`
              : '<td class="num">—</td><td class="num">—</td><td class="num">—</td>') + '</tr>').join('') +
          '</table>';
      }
      el.innerHTML = head + body;
      $('stats-by-track').addEventListener('change', (e) => { this.stats.byTrack = e.target.checked; this.scheduleStats(); });
      tt.statsLoaded = (tt.statsLoaded || 0) + 1;
      tt.stats = { range: isRange, start_us: axis.absUs(a), end_us: axis.absUs(b), names: j.names, tracks: j.tracks, byTrack: this.stats.byTrack };
    } catch (e) {
      if (seq === this.stats.seq) el.innerHTML = `<p class="muted">${esc(e.message)}</p>`;
    }
  }

  // ---- search ----

  newSearch(q, host, from) {
    return { q, host, from, matches: [], index: -1, cursor: null, busy: false, total: null };
  }

  searchParams(s) {
    const params = new URLSearchParams({ q: s.q });
    if (this.app.S.host) params.set('host', this.app.S.host);
    return params;
  }

  // Pages of matches from `from` (absolute us text; null: the trace start).
  async searchMore() {
    const { S, axis } = this.app;
    const s = this.search;
    if (s.busy) return false;
    s.busy = true;
    try {
      const params = this.searchParams(s);
      params.set('limit', '200');
      if (s.cursor) params.set('cursor', s.cursor);
      else if (s.from !== null) params.set('start_us', s.from);
      const j = axis.parseJson(await getText(`/api/tables/${encodeURIComponent(S.table.name)}/search?${params}`));
      for (const m of j.matches) s.matches.push(m);
      s.cursor = j.next_cursor;
      return j.matches.length > 0;
    } catch (e) {
      $('search-count').textContent = 'error: ' + e.message;
      return false;
    } finally {
      s.busy = false;
    }
  }

  // The exact number of matches in the whole trace (the server counts them;
  // past its time budget it says "at least"). It can take the server's whole
  // budget on a big table, so the landing never waits for it: the count line
  // is rewritten when it arrives, if the search is still the same.
  async countTotal() {
    const { S, tt } = this.app;
    const s = this.search;
    const params = this.searchParams(s);
    params.set('limit', '1');
    params.set('count', '1');
    let total;
    try {
      const j = JSON.parse(await getText(`/api/tables/${encodeURIComponent(S.table.name)}/search?${params}`));
      total = j.total_exact ? j.total.toLocaleString('en-US') : `≥ ${j.total.toLocaleString('en-US')}`;
    } catch (e) {
      total = '?';
    }
    const now = this.search;
    if (now.q !== s.q || now.host !== s.host) return;
    s.total = now.total = total;
    tt.searchTotal = total;
    $('search-count').textContent = this.countText(now);
  }

  countText(t) {
    if (!t.matches.length) return `no match · ${t.total === null ? 'counting…' : `${t.total || 0} total`}`;
    const at = t.from === null ? `match ${t.index + 1}` : `match ${t.index + 1} from the view`;
    return `${at} · ${t.total === null ? 'counting…' : `${t.total} total`}`;
  }

  // Enter: a new search starts at the view's start (not the trace start);
  // past the last match it wraps to the trace start. Every match drawn is
  // highlighted (renderer), and the view keeps its zoom when the match fits.
  async searchStep(dir) {
    const { S, axis, tt } = this.app;
    const q = $('search').value.trim();
    if (!q || !S.table) return;
    if (q !== this.search.q || this.search.host !== S.host) {
      this.search = this.newSearch(q, S.host, axis.absUs(axis.view[0]));
      this.app.highlight(q);
      $('search-count').textContent = 'searching…';
      this.countTotal();
      await this.searchMore();
    }
    let t = this.search;
    let i = t.index + dir;
    while (i >= t.matches.length && t.cursor) {
      if (!(await this.searchMore())) break;
    }
    if (i >= t.matches.length || i < 0) {
      if (t.from !== null && (t.matches.length === 0 || i < 0 || i >= t.matches.length)) {
        // Wrap to the trace start: matches before the view's start come in now.
        const total = t.total;
        this.search = t = this.newSearch(q, S.host, null);
        t.total = total;
        await this.searchMore();
        for (let n = 0; dir < 0 && t.cursor && n < 20 && (await this.searchMore()); n++);
      }
      i = dir > 0 ? 0 : t.matches.length - 1;
    }
    if (!t.matches.length) { $('search-count').textContent = this.countText(t); tt.searchTotal = t.total; return; }
    t.index = i;
    const u = t;
    $('search-count').textContent = this.countText(u);
    tt.searchTotal = u.total;
    const m = u.matches[i];
    const id = S.trackByKey.get(`t|${m.pid}|${m.tid}`);
    const dur = Number(m.dur);
    const it = { ph: 'X', ts: m.ts, dur, name: m.name, cat: m.cat, depth: m.depth, id: m.id, track: id, summary: false };
    if (S.host) {
      const info = S.trackInfo.get(id);
      if (info && info.process.host !== S.host) { S.host = ''; $('host').value = ''; this.app.layout(); }
    }
    // Keep the zoom (and so the context) when the match fits in the view:
    // only pan to it when it is not already in full view.
    const cur = axis.span();
    if (dur <= cur * 0.8) {
      if (m.ts < axis.view[0] || m.ts + dur > axis.view[1]) this.app.setView(m.ts + dur / 2 - cur / 2, m.ts + dur / 2 + cur / 2);
    } else {
      const span = dur * 1.25;
      this.app.setView(m.ts + dur / 2 - span / 2, m.ts + dur / 2 + span / 2);
    }
    this.app.reveal(it);
    this.select(it);
    tt.searchLanded++;
    tt.lastMatch = { id: m.id, name: m.name, ts: m.ts, index: i };
  }
}
