// Panels around the timeline: the details of the selected event (with its
// arguments from /event), the tooltip, the Stats tab (/stats of the visible
// range) and search (/search, landing on each match in turn).
//
// `app` is the viewer (viewer.js): {S, axis, tt, requestDraw(), setView(a, b),
// reveal(item), layout(), tableName()}.
'use strict';

import { $, color, esc, fmtDur, fmtNum, getText } from './util.js';

export class Panels {
  constructor(app) {
    this.app = app;
    this.stats = { timer: 0, seq: 0, key: '' };
    this.search = { q: '', host: '', matches: [], index: -1, cursor: null, busy: false };
    for (const b of document.querySelectorAll('.tabs button')) b.addEventListener('click', () => this.showTab(b.dataset.tab));
    $('search-form').addEventListener('submit', (e) => { e.preventDefault(); this.searchStep(1); });
    $('search').addEventListener('keydown', (e) => {
      if (e.key === 'Enter') { e.preventDefault(); this.searchStep(e.shiftKey ? -1 : 1); }
      if (e.key === 'Escape') e.target.blur();
    });
    $('search-next').addEventListener('click', () => this.searchStep(1));
    $('search-prev').addEventListener('click', () => this.searchStep(-1));
  }

  reset() {
    this.search = { q: '', host: '', matches: [], index: -1, cursor: null, busy: false };
    $('search-count').textContent = '';
    this.stats.key = '';
  }

  trackLabel(id) {
    const info = this.app.S.trackInfo.get(id);
    if (!info) return String(id);
    return `${info.process.name || 'pid ' + info.process.pid} › ${info.track.name || info.track.tid} (pid ${info.process.pid}, tid ${info.track.tid})`;
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
    if (!it.summary) {
      const id = it.id;
      getText(`/api/tables/${encodeURIComponent(this.app.tableName())}/event?id=${id}`).then((text) => {
        if (!S.selected || S.selected.id !== id) return;
        $('args').textContent = JSON.stringify(JSON.parse(text).args, null, 2);
        tt.argsShown++;
      }).catch((e) => {
        if (!S.selected || S.selected.id !== id) return;
        $('args').textContent = e.status === 404 ? '(no arguments)' : 'error: ' + e.message;
        tt.argsShown++;
      });
    }
    this.app.requestDraw();
  }

  tooltip(h, e) {
    const tip = $('tooltip');
    if (!h || (!h.item && !h.counter)) { tip.hidden = true; return; }
    const { axis } = this.app;
    let text;
    if (h.counter) {
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
    $('details').hidden = name !== 'details';
    $('stats').hidden = name !== 'stats';
    if (name === 'stats') { this.stats.key = ''; this.scheduleStats(); }
  }

  scheduleStats() {
    const { S, axis } = this.app;
    if ($('stats').hidden || !S.table) return;
    const key = `${S.table.name}|${S.host}|${axis.view[0]}|${axis.view[1]}`;
    if (key === this.stats.key) return;
    this.stats.key = key;
    clearTimeout(this.stats.timer);
    this.stats.timer = setTimeout(() => this.loadStats(), 350);
  }

  async loadStats() {
    const { S, axis, tt } = this.app;
    const seq = ++this.stats.seq;
    const a = Math.max(axis.full[0], axis.view[0]), b = Math.min(axis.full[1], axis.view[1]);
    const params = new URLSearchParams({ start_us: axis.absUs(a), end_us: axis.absUs(Math.max(a, b)), top: '40' });
    if (S.host) params.set('host', S.host);
    const el = $('stats');
    try {
      const j = JSON.parse(await getText(`/api/tables/${encodeURIComponent(S.table.name)}/stats?${params}`));
      if (seq !== this.stats.seq) return;
      const maxSelf = Math.max(1e-12, ...j.names.map((n) => n.self_us));
      el.innerHTML = `<p class="muted">${fmtDur(b - a)} visible · ${j.events.toLocaleString()} events` +
        `${j.truncated ? ' · <b>truncated</b> (first part only)' : ''}</p>` +
        `<table class="stats-table"><tr><th>name</th><th class="num">count</th><th class="num">self</th><th class="num">total</th></tr>` +
        j.names.map((n) => `<tr><td class="name"><span class="swatch" style="background:${color(n.name)}"></span>${esc(n.name)}` +
          `<div class="bar" style="width:${(100 * n.self_us / maxSelf).toFixed(1)}%"></div></td>` +
          `<td class="num">${n.count.toLocaleString()}</td><td class="num">${fmtDur(n.self_us)}</td><td class="num">${fmtDur(n.total_us)}</td></tr>`).join('') +
        '</table>';
      tt.statsLoaded = (tt.statsLoaded || 0) + 1;
    } catch (e) {
      if (seq === this.stats.seq) el.innerHTML = `<p class="muted">${esc(e.message)}</p>`;
    }
  }

  // ---- search ----

  async searchMore() {
    const { S, axis } = this.app;
    const s = this.search;
    if (s.busy) return false;
    s.busy = true;
    $('search-count').textContent = 'searching…';
    try {
      const params = new URLSearchParams({ q: s.q, limit: '200' });
      if (s.cursor) params.set('cursor', s.cursor);
      if (S.host) params.set('host', S.host);
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

  async searchStep(dir) {
    const { S, axis, tt } = this.app;
    const q = $('search').value.trim();
    if (!q || !S.table) return;
    if (q !== this.search.q || this.search.host !== S.host) {
      this.search = { q, host: S.host, matches: [], index: -1, cursor: null, busy: false };
      await this.searchMore();
    }
    const t = this.search;
    let i = t.index + dir;
    while (i >= t.matches.length && t.cursor) {
      if (!(await this.searchMore())) break;
    }
    if (!t.matches.length) { $('search-count').textContent = 'no match'; return; }
    if (i >= t.matches.length) i = 0;
    if (i < 0) i = t.matches.length - 1;
    t.index = i;
    $('search-count').textContent = `${i + 1} / ${t.matches.length}${t.cursor ? '+' : ''}`;
    const m = t.matches[i];
    const id = S.trackByKey.get(`t|${m.pid}|${m.tid}`);
    const dur = Number(m.dur);
    const it = { ph: 'X', ts: m.ts, dur, name: m.name, cat: m.cat, depth: m.depth, id: m.id, track: id, summary: false };
    if (S.host) {
      const info = S.trackInfo.get(id);
      if (info && info.process.host !== S.host) { S.host = ''; $('host').value = ''; this.app.layout(); }
    }
    const span = Math.max(dur * 4, (axis.full[1] - axis.full[0]) * 1e-6, 0.02);
    this.app.setView(m.ts + dur / 2 - span / 2, m.ts + dur / 2 + span / 2);
    this.app.reveal(it);
    this.select(it);
    tt.searchLanded++;
    tt.lastMatch = { id: m.id, name: m.name, ts: m.ts, index: i };
  }
}
