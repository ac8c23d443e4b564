// The memory panel (issue 13), over GET /api/tables/{t}/memory: the Memory
// tab — the memory-ID selector (one set per host), the summary (peak in use
// and when, peak reserved, counts) and the breakdown of the allocations live
// at the peak or at a clicked time, whose rows select their allocation's
// event on the timeline — and the chart strip under the timeline
// (memory_chart.js), which follows the main view and asks for the timeline
// at the view's resolution (breakdown=0).
//
// URL: memory=ID (and memory_host=HOST when the ID has one) while the chart
// is shown; memory_at=T (absolute µs) for a breakdown away from the peak.
//
// `app` is the viewer (viewer.js): {S, axis, tt, requestDraw(), setView(a, b),
// reveal(item), select(item), layout(), showTab(name), scheduleHash(),
// zoom(factor, x), tableName()}.
'use strict';

import { CHART_H, drawChart } from './memory_chart.js';
import { GUTTER } from './time_axis.js';
import { $, esc, fmtBytes, fmtDur, getText } from './util.js';

const ROWS = 200;          // breakdown rows asked for (the totals cover all)
const TIMELINE_WAIT_MS = 120;  // a zoom or pan settles before the timeline is asked for
const FOCUS_SPAN_US = 2000;    // at most this much in view around a selected allocation

export class MemoryPanel {
  constructor(app) {
    this.app = app;
    this.canvas = $('memory-chart');
    this.ctx = this.canvas.getContext('2d');
    this.shown = false;
    this.clear();
    this.app.tt.memory = this.debug = { ids: [], chartDraws: 0, timelineRequests: [], timelineLoads: 0, breakdownLoads: 0 };
    this.canvas.addEventListener('click', (e) => {
      const x = e.clientX - this.canvas.getBoundingClientRect().left;
      if (x < GUTTER || !this.cur || !this.cur.events) return;
      this.showBreakdown(this.app.axis.absUs(this.app.axis.tOf(x)));
    });
    // The chart zooms with the main timeline, so the wheel zooms both.
    this.canvas.addEventListener('wheel', (e) => {
      e.preventDefault();
      const x = e.clientX - this.canvas.getBoundingClientRect().left;
      const dy = e.deltaMode === 1 ? e.deltaY * 20 : e.deltaY;
      this.app.zoom(Math.pow(1.0015, Math.max(-300, Math.min(300, dy))), Math.max(GUTTER, x));
    }, { passive: false });
    this.canvas.addEventListener('mousemove', (e) => this.hover(e));
    this.canvas.addEventListener('mouseleave', () => { this.canvas.title = ''; });
  }

  clear() {
    this.ids = null;        // the table's memory IDs, once asked for
    this.idsLoading = null;
    this.cur = null;        // the selected ID (an element of ids)
    this.at = null;         // breakdown time (absolute µs text); null: the peak
    this.breakdown = null;
    this.timeline = null;   // {index, a, b, res, series}: loaded
    this.asked = null;      // {index, a, b, res}: the last one asked for
    this.timelineSeq = 0;
    this.breakdownSeq = 0;
    this.wanted = null;     // {id, host, at} from the URL, until the IDs are in
    clearTimeout(this.timer);
    this.timer = 0;
  }

  // A new table; `h` is the URL hash (memory, memory_host, memory_at). A
  // URL without memory= hides the chart; a switch from the drop-down (no
  // hash) keeps it, on the new table's IDs.
  reset(h) {
    this.clear();
    Object.assign(this.debug, { ids: [], selected: null, breakdown: null, chartReady: false });
    $('memory').innerHTML = '<p class="muted">The memory profile: memory in use over time, its peak and the allocations live then.</p>';
    if (h && h.memory) {
      this.wanted = { id: h.memory, host: h.memory_host || '', at: h.memory_at || null };
      this.setShown(true);
      this.app.showTab('memory');
    } else if (h && Object.keys(h).length) {
      this.setShown(false);
    } else if (this.shown) {
      this.ensureIds();
    }
  }

  setShown(on) {
    if (on === this.shown) return;
    this.shown = on;
    $('memory-strip').hidden = !on;
    $('timeline').classList.toggle('with-memory', on);
    if (on) this.ensureIds();
    this.app.scheduleHash();
  }

  // "u": the chart strip (and the tab with its breakdown) on and off.
  toggle() {
    this.setShown(!this.shown);
    if (this.shown) this.app.showTab('memory');
  }

  // The Memory tab was opened.
  opened() { this.ensureIds(); }

  hashParams(p) {
    if (!this.shown || !this.cur) return;
    p.set('memory', this.cur.id);
    if (this.cur.host) p.set('memory_host', this.cur.host);
    if (this.at) p.set('memory_at', this.at);
  }

  url(params) {
    return `/api/tables/${encodeURIComponent(this.app.tableName())}/memory?${params}`;
  }

  // JSON of a memory answer: sample times as relative µs (exact, from the
  // number's source text), *_us fields as their exact text.
  parse(text) {
    const axis = this.app.axis;
    return JSON.parse(text, (k, v, ctx) => {
      if (typeof v !== 'number') return v;
      const src = ctx && ctx.source;
      if (k === '0') return src ? axis.relFromText(src) : v - axis.baseNum;
      if (k.endsWith('_us')) return src || String(v);
      return v;
    });
  }

  ensureIds() {
    if (this.ids || this.idsLoading || !this.app.S.table) return this.idsLoading;
    const table = this.app.tableName();
    this.idsLoading = getText(this.url(new URLSearchParams({ timeline: '0', breakdown: '0' }))).then((text) => {
      if (this.app.tableName() !== table) return;
      this.ids = this.parse(text).ids;
      this.idsLoading = null;
      this.debug.ids = this.ids.map((m) => ({ index: m.index, id: m.id, host: m.host, peak: m.peak }));
      const w = this.wanted;
      this.wanted = null;
      const pick = (w && this.ids.find((m) => m.id === w.id && m.host === w.host)) || this.defaultId();
      if (w && w.at && pick && pick.id === w.id) this.at = w.at;
      this.choose(pick);
    }).catch((e) => {
      this.idsLoading = null;
      $('memory').innerHTML = `<p class="muted">error: ${esc(e.message)}</p>`;
    });
    return this.idsLoading;
  }

  // The IDs of the host filter (all without one).
  visibleIds() {
    const host = this.app.S.host;
    return (this.ids || []).filter((m) => !host || m.host === host);
  }

  // The ID with the highest peak: where an out-of-memory would be.
  defaultId() {
    let best = null;
    for (const m of this.visibleIds()) if (!best || (m.peak ? m.peak.in_use : -1) > (best.peak ? best.peak.in_use : -1)) best = m;
    return best;
  }

  // The host filter changed: keep the ID if it is on that host.
  hostChanged() {
    if (!this.ids) return;
    if (this.cur && this.visibleIds().includes(this.cur)) { this.renderTab(); return; }
    this.at = null;
    this.choose(this.defaultId());
  }

  choose(m) {
    this.cur = m;
    this.breakdown = null;
    this.timeline = null;
    this.asked = null;
    this.debug.selected = m ? { index: m.index, id: m.id, host: m.host } : null;
    this.debug.breakdown = null;
    this.renderTab();
    if (m && m.events) this.loadBreakdown();
    this.app.scheduleHash();
    this.app.requestDraw();
  }

  // A breakdown at a time (absolute µs text), or at the peak (null).
  showBreakdown(at) {
    this.at = at;
    this.loadBreakdown();
    this.app.scheduleHash();
    this.app.requestDraw();
    this.app.showTab('memory');
  }

  idParams() {
    const p = new URLSearchParams({ id: this.cur.id });
    if (this.cur.host) p.set('host', this.cur.host);
    return p;
  }

  // The answer's element for the selected ID (several IDs can share a name
  // and host when one table holds several inputs).
  mine(list) { return list.find((x) => x.index === this.cur.index); }

  async loadBreakdown() {
    const seq = ++this.breakdownSeq;
    const p = this.idParams();
    p.set('timeline', '0');
    p.set('limit', String(ROWS));
    if (this.at) p.set('at_us', this.at);
    const box = $('memory-breakdown');
    if (box) box.classList.add('loading');
    try {
      const b = this.mine(this.parse(await getText(this.url(p))).breakdowns);
      if (seq !== this.breakdownSeq) return;
      this.breakdown = b || null;
      this.debug.breakdownLoads++;
      this.debug.breakdown = b ? { at: b.at, ts_us: b.ts_us, in_use: b.in_use, live_count: b.live_count, rows_total: b.rows_total,
        rows: b.rows.map((r) => ({ bytes: r.bytes, event_id: r.event_id, alloc_us: r.alloc_us, shape: r.shape, data_type: r.data_type })) } : null;
    } catch (e) {
      if (seq !== this.breakdownSeq) return;
      this.breakdown = { error: e.message };
    }
    this.renderTab();
    this.app.requestDraw();
  }

  // ---- the tab ----

  renderTab() {
    const el = $('memory');
    const { S, axis } = this.app;
    if (!this.ids) return;
    const ids = this.visibleIds();
    if (!ids.length) {
      el.innerHTML = `<p class="muted">No memory events in this table${S.host ? ' on this host' : ''} (XSpace MemoryAllocation / ` +
        'MemoryDeallocation or Kineto [memory] events make a memory profile).</p>';
      return;
    }
    const m = this.cur;
    if (!m) return;
    const multiHost = new Set(this.ids.map((x) => x.host)).size > 1;
    const opts = ids.map((x) => `<option value="${x.index}"${x === m ? ' selected' : ''}>` +
      `${esc(multiHost || x.host ? `${x.host || '(no host)'} · ${x.id}` : x.id)}</option>`).join('');
    const when = (us) => `${esc(fmtDur(axis.relFromText(us) - axis.origin))} <span class="muted">(${esc(us)} µs)</span>`;
    const rows = [];
    if (m.events) {
      rows.push(['peak in use', `<b id="memory-peak-value" data-bytes="${m.peak.in_use}" data-ts="${esc(m.peak.ts_us)}">${fmtBytes(m.peak.in_use)}</b> ` +
        `<span class="muted">(${m.peak.in_use.toLocaleString('en-US')} B)</span><br>at <a href="#" id="memory-peak-time">${when(m.peak.ts_us)}</a>` +
        (m.peak.step !== undefined ? ` · step ${m.peak.step}` : '')]);
      if (m.peak_reserved) rows.push(['peak reserved', `${fmtBytes(m.peak_reserved.bytes)} at ${when(m.peak_reserved.ts_us)}`]);
    }
    const u = m.unpaired;
    rows.push(['events', `${m.events.toLocaleString('en-US')}: ${m.allocations.toLocaleString('en-US')} allocations, ` +
      `${m.deallocations.toLocaleString('en-US')} frees`]);
    const unpaired = [[u.frees_without_alloc, 'frees without allocation'], [u.allocs_never_freed, 'never freed'],
      [u.allocs_at_live_addr, 'at a live address'], [u.events_without_addr, 'without address']].filter(([n]) => n > 0);
    if (unpaired.length) rows.push(['unpaired', unpaired.map(([n, t]) => `${n.toLocaleString('en-US')} ${t}`).join(', ')]);
    rows.push(['source', esc(m.source)]);
    el.innerHTML =
      `<label class="memory-pick">memory ID <select id="memory-id">${opts}</select></label>` +
      `<table class="kv" id="memory-summary">${rows.map(([k, v]) => `<tr><td>${k}</td><td>${v}</td></tr>`).join('')}</table>` +
      `<p class="muted"><button type="button" id="memory-chart-btn" class="small">${this.shown ? 'hide' : 'show'} the chart</button> ` +
      '(u) under the timeline: click it for the breakdown at a time.</p>' +
      `<div id="memory-breakdown">${this.breakdownHtml()}</div>`;
    $('memory-id').addEventListener('change', (e) => {
      this.at = null;
      this.choose(this.ids.find((x) => x.index === Number(e.target.value)));
    });
    $('memory-chart-btn').addEventListener('click', () => { this.setShown(!this.shown); this.renderTab(); });
    const pt = $('memory-peak-time');
    if (pt) {
      pt.addEventListener('click', (e) => {
        e.preventDefault();
        const t = axis.relFromText(m.peak.ts_us), span = axis.span();
        if (t < axis.view[0] || t > axis.view[1]) this.app.setView(t - span / 2, t + span / 2);
        this.showBreakdown(null);
      });
    }
    const back = $('memory-at-peak');
    if (back) back.addEventListener('click', () => this.showBreakdown(null));
    for (const tr of el.querySelectorAll('#memory-rows tr[data-row]')) {
      tr.addEventListener('click', () => this.selectRow(this.breakdown.rows[Number(tr.dataset.row)]));
    }
  }

  breakdownHtml() {
    const b = this.breakdown;
    const { axis } = this.app;
    if (!this.cur.events) return '<p class="muted">No allocations.</p>';
    if (!b) return '<p class="muted">loading the breakdown…</p>';
    if (b.error) return `<p class="muted">error: ${esc(b.error)}</p>`;
    const t = axis.relFromText(b.ts_us);
    const head = b.at === 'peak' ? 'at the peak' : `at ${esc(fmtDur(t - axis.origin))}`;
    let html = `<h3 class="memory-head">Live allocations ${head}` +
      (b.at === 'peak' ? '' : ' <button type="button" id="memory-at-peak" class="small">at the peak</button>') + '</h3>' +
      `<p class="muted" id="memory-totals">${b.before_first_event ? 'before the first memory event · ' : ''}` +
      `in use <b>${fmtBytes(b.in_use)}</b> = ${b.live_count.toLocaleString('en-US')} live (${fmtBytes(b.live_bytes)})` +
      ` + unattributed ${fmtBytes(b.unattributed)} <span class="muted">(allocated before the trace or not shown in it)</span></p>`;
    if (!b.rows.length) return html;
    const dtype = (d) => (this.cur.source === 'xspace' ? tfDataType(d) : d);
    html += '<table class="stats-table" id="memory-rows"><tr><th class="num">size</th><th>op (or address) · shape · type · region</th><th class="num">allocated</th></tr>' +
      b.rows.map((r, i) => {
        const detail = [r.shape, r.data_type && dtype(r.data_type), r.region].filter((x) => x).map(esc).join(' · ');
        return `<tr data-row="${i}" data-event="${r.event_id}" title="${esc(r.addr)}: click to select its allocation event">` +
          `<td class="num">${fmtBytes(r.bytes)}${r.requested !== r.bytes ? `<div class="muted">asked ${fmtBytes(r.requested)}</div>` : ''}</td>` +
          `<td class="name">${r.op ? esc(r.op) : `<span class="muted">${esc(r.addr)}</span>`}${detail ? `<div class="muted">${detail}</div>` : ''}</td>` +
          `<td class="num">${esc(fmtDur(axis.relFromText(r.alloc_us) - axis.origin))}</td></tr>`;
      }).join('') + '</table>';
    if (b.truncated) html += `<p class="muted">the ${ROWS} largest of ${b.rows_total.toLocaleString('en-US')}</p>`;
    return html;
  }

  // A breakdown row: find its allocation event (an exact window at its time)
  // and select it on the timeline, zoomed in enough to see it.
  async selectRow(r) {
    const { S, axis } = this.app;
    const p = new URLSearchParams({ start_us: r.alloc_us, end_us: r.alloc_us, resolution_us: '0', limit: '500000' });
    let e;
    try {
      const j = axis.parseJson(await getText(`/api/tables/${encodeURIComponent(this.app.tableName())}/window?${p}`));
      e = j.traceEvents.find((x) => x.tt_id === r.event_id);
    } catch (err) {
      this.debug.rowError = err.message;
      return;
    }
    if (!e) { this.debug.rowError = `event ${r.event_id} not in the window at ${r.alloc_us}`; return; }
    const track = S.trackByKey.get(`t|${e.pid}|${e.tid}`);
    const it = { ph: e.ph === 'X' ? 'X' : 'i', ts: e.ts, dur: e.dur || 0, name: e.name, cat: e.cat || '', depth: e.tt_depth || 0,
      id: e.tt_id, track, summary: false, hasArgs: !!e.tt_args };
    if (S.host) {
      const info = S.trackInfo.get(track);
      if (info && info.process.host !== S.host) { S.host = ''; $('host').value = ''; this.app.layout(); }
    }
    const span = Math.min(axis.span(), Math.max(FOCUS_SPAN_US, it.dur * 1.25));
    this.app.setView(it.ts + it.dur / 2 - span / 2, it.ts + it.dur / 2 + span / 2);
    this.app.reveal(it);
    this.app.select(it);
    this.debug.rowSelected = { event_id: r.event_id, alloc_us: r.alloc_us, ts_us: axis.absUs(it.ts), id: it.id };
  }

  // ---- the chart ----

  // The view's resolution and the range asked for: half a view more on each
  // side, so that small pans draw from what is loaded.
  want() {
    const { axis } = this.app;
    const span = axis.span();
    const a = Math.max(axis.full[0], axis.view[0] - span / 2), b = Math.min(axis.full[1], axis.view[1] + span / 2);
    const res = span / axis.plotWidth();
    return { a: Math.min(a, b), b, res };
  }

  // Whether the loaded timeline covers the view at about its resolution.
  fits(tl) {
    if (!tl || tl.index !== this.cur.index) return false;
    const { axis } = this.app;
    const w = this.want();
    const v0 = Math.max(axis.view[0], axis.full[0]), v1 = Math.min(axis.view[1], axis.full[1]);
    return tl.a <= v0 + 1e-9 && tl.b >= v1 - 1e-9 && tl.res <= w.res * 1.01 && tl.res >= w.res / 2.5;
  }

  async loadTimeline() {
    this.timer = 0;
    if (!this.cur || !this.shown) return;
    const { axis } = this.app;
    const seq = ++this.timelineSeq;
    const w = this.want();
    const p = this.idParams();
    p.set('breakdown', '0');
    p.set('start_us', axis.absUs(w.a));
    p.set('end_us', axis.absUs(w.b));
    p.set('resolution_us', Math.max(w.res, 1e-6).toFixed(6));
    this.debug.timelineRequests.push({ start_us: p.get('start_us'), end_us: p.get('end_us'), resolution_us: p.get('resolution_us') });
    const index = this.cur.index;
    this.asked = { index, a: w.a, b: w.b, res: w.res };
    try {
      const tl = this.mine(this.parse(await getText(this.url(p))).timelines);
      if (seq !== this.timelineSeq || !this.cur || this.cur.index !== index) return;
      const series = {};
      for (const s of tl.series) {
        const key = { 'in use bytes': 'in_use', 'reserved bytes': 'reserved', fragmentation: 'fragmentation' }[s.name];
        if (key) series[key] = s.samples;
      }
      this.timeline = { index, a: w.a, b: w.b, res: w.res, series };
      this.debug.timelineLoads++;
    } catch (e) {
      if (seq === this.timelineSeq) this.timeline = { index, a: w.a, b: w.b, res: w.res, series: {}, error: e.message };
    }
    this.app.requestDraw();
  }

  // Every frame of the timeline: the chart at the view, from what is loaded;
  // a timeline at the view's resolution is asked for once the view settles.
  draw() {
    if (!this.shown) return;
    const { axis, S } = this.app;
    const W = $('timeline').clientWidth, dpr = S.dpr;
    if (this.canvas.width !== Math.round(W * dpr) || this.canvas.height !== Math.round(CHART_H * dpr)) {
      this.canvas.width = Math.max(1, Math.round(W * dpr));
      this.canvas.height = Math.round(CHART_H * dpr);
      this.canvas.style.width = W + 'px';
      this.canvas.style.height = CHART_H + 'px';
    }
    const m = this.cur;
    if (m && m.events && !this.fits(this.timeline) && !this.fits(this.asked)) {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.loadTimeline(), this.timeline ? TIMELINE_WAIT_MS : 0);
    }
    const tl = this.timeline && m && this.timeline.index === m.index ? this.timeline : null;
    const b = this.breakdown && !this.breakdown.error && this.breakdown.at === 'time' ? this.breakdown : null;
    const label = !this.ids ? 'memory: loading…' : !m ? 'no memory events' : `${m.host ? m.host + ' · ' : ''}${m.id}`;
    const drawn = drawChart(this.ctx, W, dpr, axis, {
      label,
      series: tl ? tl.series : {},
      end: m && m.events ? axis.relFromText(m.last_us) : axis.full[1],
      peak: m && m.events ? { t: axis.relFromText(m.peak.ts_us), bytes: m.peak.in_use } : null,
      at: b && !b.before_first_event ? { t: axis.relFromText(b.ts_us), bytes: b.in_use } : null,
      loading: m && m.events && !this.fits(tl),
    });
    this.debug.chartDraws++;
    this.debug.chartReady = !!this.ids && (!m || !m.events || (!!tl && this.fits(tl)));
    this.debug.lastChart = { view: [axis.absUs(axis.view[0]), axis.absUs(axis.view[1])], yMax: drawn.yMax, ticks: drawn.ticks,
      loaded: tl ? { start_us: axis.absUs(tl.a), end_us: axis.absUs(tl.b), res: tl.res, samples: tl.series.in_use ? tl.series.in_use.length : 0 } : null };
  }

  // Hovering the chart: the memory in use at that time.
  hover(e) {
    const x = e.clientX - this.canvas.getBoundingClientRect().left;
    const tl = this.timeline;
    if (x < GUTTER || !tl || !tl.series.in_use || !this.cur) { this.canvas.title = ''; return; }
    const { axis } = this.app;
    const t = axis.tOf(x);
    const at = (s) => { let v = null; for (const [ts, val] of s || []) { if (ts > t) break; v = val; } return v; };
    const parts = [`${fmtDur(t - axis.origin)}`];
    const u = at(tl.series.in_use), r = at(tl.series.reserved), f = at(tl.series.fragmentation);
    if (u !== null) parts.push(`in use ${fmtBytes(u)}`);
    if (r !== null) parts.push(`reserved ${fmtBytes(r)}`);
    if (f !== null) parts.push(`fragmentation ${(100 * f).toFixed(1)} %`);
    this.canvas.title = parts.join('\n') + '\nclick: the allocations live then';
  }
}

// TensorFlow's DataType numbers (types.proto), which XSpace allocation
// events carry as `data_type`.
const TF_TYPES = ['invalid', 'float', 'double', 'int32', 'uint8', 'int16', 'int8', 'string', 'complex64', 'int64', 'bool',
  'qint8', 'quint8', 'qint32', 'bfloat16', 'qint16', 'quint16', 'uint16', 'complex128', 'half', 'resource', 'variant',
  'uint32', 'uint64'];
function tfDataType(d) {
  return /^\d+$/.test(d) && Number(d) < TF_TYPES.length ? TF_TYPES[Number(d)] : d;
}
