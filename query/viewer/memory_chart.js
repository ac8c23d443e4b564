// The memory chart under the timeline: one memory ID's in use (filled),
// reserved (line) and fragmentation (dashed, its own 0–100 % scale) over the
// main timeline's view, on the same x mapping as the tracks; the y axis
// starts at 0 and is labelled in binary byte units. Marks the peak and the
// time of the breakdown shown. Drawing only: memory_panel.js owns the data.
'use strict';

import { GUTTER } from './time_axis.js';
import { fmtBytes } from './util.js';

export const CHART_H = 150;
const PAD_TOP = 18, PAD_BOTTOM = 6;
const COLORS = { in_use: '#2563eb', reserved: '#ea580c', fragmentation: '#9333ea', peak: '#dc2626', at: '#059669' };

// About four ticks from 0 to at least `max` bytes, in 1/2/5 steps of the
// largest binary unit not above it (so labels read "2 GiB", not "2147483648").
function byteTicks(max) {
  const units = [[2 ** 40, 'TiB'], [2 ** 30, 'GiB'], [2 ** 20, 'MiB'], [2 ** 10, 'KiB'], [1, 'B']];
  const top0 = Math.max(1, max);
  const [d, name] = units.find(([u]) => top0 >= u);
  const v = top0 / d;
  const p = 10 ** Math.floor(Math.log10(v / 4));
  let step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= v / 4);
  if (d === 1) step = Math.max(1, step);
  const n = Math.ceil(v / step - 1e-9);
  const ticks = [];
  for (let i = 0; i <= n; i++) ticks.push({ bytes: i * step * d, label: i ? `${+(i * step).toPrecision(6)} ${name}` : '0' });
  return { ticks, max: n * step * d };
}

// Largest value of the samples in [a, b] (and the one in effect at a).
function maxIn(samples, a, b) {
  let m = 0;
  for (let i = 0; i < samples.length; i++) {
    const [t, v] = samples[i];
    if (t > b) break;
    if (t >= a || (i + 1 < samples.length && samples[i + 1][0] > a) || i + 1 === samples.length) m = Math.max(m, v);
  }
  return m;
}

// A step path through the samples (a counter holds its value until the next
// sample), from the first sample to `endX`.
function stepPath(ctx, samples, xOf, yOf, endX) {
  let started = false, lastY = 0;
  for (const [t, v] of samples) {
    const x = xOf(t), y = yOf(v);
    if (!started) { ctx.moveTo(x, y); started = true; } else { ctx.lineTo(x, lastY); ctx.lineTo(x, y); }
    lastY = y;
  }
  if (started) ctx.lineTo(endX, lastY);
  return started;
}

// d: {label, series: {in_use, reserved, fragmentation} (samples [[rel us, value]]),
//     end (rel us: the chart's data ends there), peak: {t, bytes} | null,
//     at: {t, bytes} | null (a breakdown away from the peak), loading}
// Returns what was drawn (for tests): {yMax, ticks}.
export function drawChart(ctx, W, dpr, axis, d) {
  const H = CHART_H;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, W, H);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, W, H);
  ctx.strokeStyle = '#d9dce1';
  ctx.beginPath(); ctx.moveTo(0, 0.5); ctx.lineTo(W, 0.5); ctx.moveTo(GUTTER - 0.5, 0); ctx.lineTo(GUTTER - 0.5, H); ctx.stroke();
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  const legend = [['in use', COLORS.in_use, d.series.in_use], ['reserved', COLORS.reserved, d.series.reserved],
    ['fragmentation (0–100 %)', COLORS.fragmentation, d.series.fragmentation]].filter((x) => x[2] && x[2].length);
  ctx.fillStyle = '#111827';
  ctx.font = '600 11px system-ui, sans-serif';
  ctx.fillText(d.label, 8, 12, GUTTER - 80);  // the top tick's label is to its right
  ctx.font = '11px system-ui, sans-serif';
  legend.forEach(([name, c], i) => {
    ctx.fillStyle = c;
    ctx.fillRect(8, 28 + i * 15 - 4, 10, 8);
    ctx.fillStyle = '#4b5563';
    ctx.fillText(name, 22, 28 + i * 15);
  });
  if (d.loading) { ctx.fillStyle = '#6b7280'; ctx.fillText('loading…', 8, H - 12); }

  const [a, b] = axis.view;
  let top = Math.max(maxIn(d.series.in_use || [], a, b), maxIn(d.series.reserved || [], a, b));
  if (d.peak && d.peak.t >= a && d.peak.t <= b) top = Math.max(top, d.peak.bytes);
  const { ticks, max } = byteTicks(top);
  const plotH = H - PAD_TOP - PAD_BOTTOM;
  const yOf = (v) => H - PAD_BOTTOM - v / max * plotH;
  const xOf = (t) => axis.xOf(t);
  // y axis: labels right-aligned in the gutter, grid lines across the plot.
  ctx.textAlign = 'right';
  ctx.fillStyle = '#4b5563';
  ctx.strokeStyle = '#eef0f3';
  ctx.beginPath();
  for (const k of ticks) {
    const y = Math.round(yOf(k.bytes)) + 0.5;
    ctx.moveTo(GUTTER, y); ctx.lineTo(W, y);
    ctx.fillText(k.label, GUTTER - 6, Math.min(H - 8, Math.max(8, y)));
  }
  ctx.stroke();
  ctx.textAlign = 'left';

  ctx.save();
  ctx.beginPath();
  ctx.rect(GUTTER, 0, W - GUTTER, H);
  ctx.clip();
  const endX = Math.min(W, xOf(d.end));
  // Strokes one series as steps; the path stays current (in use fills it).
  const strokeSeries = (samples, y, color, width, dash) => {
    if (!samples || !samples.length) return false;
    ctx.beginPath();
    if (!stepPath(ctx, samples, xOf, y, endX)) return false;
    ctx.strokeStyle = color;
    ctx.lineWidth = width;
    ctx.setLineDash(dash);
    ctx.stroke();
    ctx.setLineDash([]);
    return true;
  };
  if (strokeSeries(d.series.in_use, yOf, COLORS.in_use, 1.25, [])) {
    ctx.lineTo(endX, yOf(0));
    ctx.lineTo(xOf(d.series.in_use[0][0]), yOf(0));
    ctx.closePath();
    ctx.fillStyle = 'rgba(37,99,235,.18)';
    ctx.fill();
  }
  strokeSeries(d.series.reserved, yOf, COLORS.reserved, 1.25, []);
  strokeSeries(d.series.fragmentation, (v) => H - PAD_BOTTOM - Math.max(0, Math.min(1, v)) * plotH,
    COLORS.fragmentation, 1, [4, 3]);
  const marker = (m, c, text) => {
    const x = Math.round(xOf(m.t)) + 0.5;
    if (x < GUTTER || x > W) return;
    ctx.strokeStyle = c;
    ctx.lineWidth = 1;
    ctx.beginPath(); ctx.moveTo(x, PAD_TOP - 4); ctx.lineTo(x, H); ctx.stroke();
    ctx.fillStyle = c;
    ctx.beginPath(); ctx.arc(x, yOf(m.bytes), 3.5, 0, 2 * Math.PI); ctx.fill();
    ctx.font = '600 11px system-ui, sans-serif';
    const w = ctx.measureText(text).width;
    ctx.fillText(text, x + 5 + w > W ? x - 5 - w : x + 5, 9);
    ctx.font = '11px system-ui, sans-serif';
  };
  if (d.at) marker(d.at, COLORS.at, `breakdown ${fmtBytes(d.at.bytes)}`);
  if (d.peak) marker(d.peak, COLORS.peak, `peak ${fmtBytes(d.peak.bytes)}`);
  ctx.restore();
  return { yMax: max, ticks: ticks.map((k) => k.label) };
}
