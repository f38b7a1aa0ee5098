// A small hand-written SVG line chart: a few series over the same x (time) axis, y from 0 to max (or a fixed max).

import { esc } from './format.js';

const W = 600;
const H = 140;
const PAD = { l: 64, r: 8, t: 8, b: 18 };

/**
 * @param series [{name, color, points: [[tMs, value], ...]}]
 * @param opts {yMax?: number, yFormat: (v) => string, label: string}
 */
export function lineChart(series, opts) {
  const all = series.flatMap((s) => s.points);
  if (all.length < 2) {
    return `<div class="muted">${esc(opts.label)}: collecting samples…</div>`;
  }
  const t0 = Math.min(...all.map((p) => p[0]));
  const t1 = Math.max(...all.map((p) => p[0]));
  const yMax = opts.yMax ?? Math.max(1e-9, ...all.map((p) => p[1]));
  const x = (t) => PAD.l + ((t - t0) / Math.max(1, t1 - t0)) * (W - PAD.l - PAD.r);
  const y = (v) => H - PAD.b - (v / yMax) * (H - PAD.t - PAD.b);
  const lines = series
    .filter((s) => s.points.length > 1)
    .map((s) => {
      const d = s.points.map((p, i) => `${i ? 'L' : 'M'}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join('');
      return `<path d="${d}" fill="none" stroke="${esc(s.color)}" stroke-width="2"/>`;
    })
    .join('');
  const minutes = Math.round((t1 - t0) / 60000);
  const span = minutes >= 1 ? `${minutes} min` : `${Math.round((t1 - t0) / 1000)} s`;
  const legend = series
    .map((s) => `<span><i style="background:${esc(s.color)}"></i>${esc(s.name)}</span>`)
    .join('');
  return `<svg class="chart" viewBox="0 0 ${W} ${H}" preserveAspectRatio="none" role="img" aria-label="${esc(opts.label)}">
    <line class="axis" x1="${PAD.l}" y1="${y(0)}" x2="${W - PAD.r}" y2="${y(0)}"/>
    <line class="axis" x1="${PAD.l}" y1="${y(yMax)}" x2="${W - PAD.r}" y2="${y(yMax)}"/>
    <text x="${PAD.l - 4}" y="${y(yMax) + 8}" text-anchor="end">${esc(opts.yFormat(yMax))}</text>
    <text x="${PAD.l - 4}" y="${y(0)}" text-anchor="end">${esc(opts.yFormat(0))}</text>
    <text x="${PAD.l}" y="${H - 4}">−${esc(span)}</text>
    <text x="${W - PAD.r}" y="${H - 4}" text-anchor="end">now</text>
    ${lines}
  </svg><div class="legend">${legend}</div>`;
}

/** Per-interval values from cumulative samples: f(previous, current, seconds) for each consecutive pair. */
export function deltas(samples, f) {
  const out = [];
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1];
    const b = samples[i];
    const secs = Math.max(0.001, (b.t_ms - a.t_ms) / 1000);
    const v = f(a, b, secs);
    if (v != null && Number.isFinite(v)) out.push([b.t_ms, v]);
  }
  return out;
}
