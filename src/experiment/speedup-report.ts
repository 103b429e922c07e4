// The speedup report as files: report.json and index.html (held-out success vs training wall-clock and
// vs physics steps per mode, as inline SVG, and the table), written as one unit.
import { join } from 'node:path';
import { commitFiles } from '../store/index.ts';
import { REPLICATES, type SpeedupInterval } from './speedup-fit.ts';
import type { CurvePoint, SpeedupReport } from './speedup.ts';

const COLOURS: Record<string, string> = {
  real: '#222',
  'real-branch': '#ff7f0e',
  wmrl: '#d62728',
  mix: '#1f77b4',
  'mix+denoise': '#2ca02c',
  'mix+debias': '#9467bd',
  wm: '#8c564b',
};
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const pct = (x: number) => `${(100 * x).toFixed(1)}`;
const fmt = (x: number | null, d = 1) => (x === null ? 'not reached' : x.toFixed(d));

const interval = (f: SpeedupInterval | null, d: number) =>
  f ? `${fmt(f.estimate, d)} [${f.low.toFixed(d)}, ${f.high.toFixed(d)}] (${pct(f.reached)}%)` : '';

/** One line chart: x from `xOf`, y = held-out success, a line per (mode, seed), the base at x = 0. */
function chart(report: SpeedupReport, title: string, xLabel: string, xOf: (c: CurvePoint) => number): string {
  const W = 520,
    H = 300,
    L = 50,
    R = 110,
    T = 30,
    B = 40;
  const base = report.base.overall.success;
  const xs = report.curves.flatMap((c) => c.points.map(xOf));
  const ys = [base, ...report.curves.flatMap((c) => c.points.map((p) => p.success))];
  const xMax = Math.max(1, ...xs);
  const yMin = Math.max(0, Math.floor(10 * Math.min(...ys)) / 10 - 0.05);
  const yMax = Math.min(1, Math.ceil(10 * Math.max(...ys)) / 10 + 0.05);
  const sx = (x: number) => L + ((W - L - R) * x) / xMax;
  const sy = (y: number) => T + (H - T - B) * (1 - (y - yMin) / Math.max(1e-9, yMax - yMin));
  const lines = report.curves
    .map((c, k) => {
      const pts = [
        ...(c.points[0]?.iteration === 0 ? [] : [{ x: 0, y: base }]),
        ...c.points.map((p) => ({ x: xOf(p), y: p.success })),
      ];
      const colour = COLOURS[c.mode] ?? '#777';
      const path = pts.map((p, i) => `${i ? 'L' : 'M'}${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ');
      return (
        `<path d="${path}" fill="none" stroke="${colour}" stroke-width="2"/>` +
        `<text x="${W - R + 6}" y="${T + 14 * (k + 1)}" fill="${colour}" font-size="12">` +
        `${esc(c.mode)} s${c.seed}</text>`
      );
    })
    .join('');
  const ticks = [0, 0.25, 0.5, 0.75, 1]
    .map(
      (f) =>
        `<text x="${sx(f * xMax)}" y="${H - B + 16}" font-size="11" text-anchor="middle">` +
        `${(f * xMax).toFixed(xMax >= 100 ? 0 : 1)}</text>`,
    )
    .join('');
  const yTicks = [yMin, (yMin + yMax) / 2, yMax]
    .map((y) => `<text x="${L - 6}" y="${sy(y) + 4}" font-size="11" text-anchor="end">${pct(y)}%</text>`)
    .join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" role="img"><title>${esc(title)}</title>
<rect x="${L}" y="${T}" width="${W - L - R}" height="${H - T - B}" fill="none" stroke="#ccc"/>
<text x="${L}" y="18" font-size="13" font-weight="bold">${esc(title)}</text>${ticks}${yTicks}
<text x="${(L + W - R) / 2}" y="${H - 6}" font-size="12" text-anchor="middle">${esc(xLabel)}</text>${lines}</svg>`;
}

function table(report: SpeedupReport): string {
  const head = [
    'mode',
    'seed',
    'iterations',
    'train wall-clock (s)',
    'physics steps',
    'held-out success % [95%]',
    'vs base (points) [95%]',
    'seen pairs %',
    'reserved pairs %',
    'vs real (points) [95%]',
    'speedup wall-clock (curves)',
    'speedup physics steps (curves)',
    'fitted speedup wall-clock [95%] (reached)',
    'fitted speedup physics [95%] (reached)',
    'cost per iteration vs real',
    'ceiling (free WM)',
    'wall-clock speedup at least (final eval)',
    'physics speedup at least (final eval)',
    'equal-reward groups',
  ];
  const rows = report.runs.map((r) => [
    r.mode,
    r.seed,
    r.iterations,
    r.train_seconds.toFixed(0),
    r.physics_steps,
    `${pct(r.final.overall.success)} [${pct(r.final.overall.ci_low)}, ${pct(r.final.overall.ci_high)}]`,
    `${pct(r.final.overall.vs_base.diff)} ` +
      `[${pct(r.final.overall.vs_base.ci_low)}, ${pct(r.final.overall.vs_base.ci_high)}]`,
    `${pct(r.final.seen.success)} (n ${r.final.seen.episodes})`,
    `${pct(r.final.reserved.success)} (n ${r.final.reserved.episodes})`,
    `${pct(r.vs_real.diff)} [${pct(r.vs_real.ci_low)}, ${pct(r.vs_real.ci_high)}]`,
    fmt(r.speedup_wall, 2),
    fmt(r.speedup_physics, 1),
    interval(r.speedup_wall_fit, 2),
    interval(r.speedup_physics_fit, 1),
    fmt(r.iteration_cost_vs_real, 2),
    fmt(r.speedup_wall_ceiling, 2),
    fmt(r.speedup_wall_at_least, 2),
    fmt(r.speedup_physics_at_least, 1),
    `${pct(r.equal_reward_groups)}%`,
  ]);
  const headRow = `<tr>${head.map((h) => `<th>${h}</th>`).join('')}</tr>`;
  const bodyRows = rows.map((r) => `<tr>${r.map((c) => `<td>${esc(String(c))}</td>`).join('')}</tr>`).join('');
  return `<table>${headRow}${bodyRows}</table>`;
}

export function speedupHtml(report: SpeedupReport, command: string): string {
  const b = report.base.overall;
  return (
    '<!doctype html><html><head><meta charset="utf-8"><title>wmrl speedup experiment</title>\n' +
    '<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}' +
    'table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}' +
    'th{background:#f4f4f4}</style></head><body>\n' +
    '<h1>Speedup: WMRL vs physics-only GRPO</h1>\n' +
    `<p><code>${esc(command)}</code></p>\n` +
    `<p>Tasks ${esc(report.config.tasks.join(', '))}; base policy ${esc(report.policy)}: ` +
    `held-out success ${pct(b.success)}% [${pct(b.ci_low)}, ${pct(b.ci_high)}] (n ${b.episodes}).\n` +
    `Curves: held-out success on ${report.config.evalEpisodes} episodes per task during training ` +
    `(evaluation off the clock); table: ${report.config.finalEpisodes} held-out episodes per task after training, ` +
    'paired on the same seeds.\n' +
    "Speedup: real's final success is the mean of its last three curve points; a run reaches it at the first point " +
    "from which its curve's mean stays at or above it; speedup = real's time (or physics steps) to reach it over " +
    `the mode's. "At least": from the final evaluations alone, a run ending at or above real's final success ` +
    '(paired) got there no later than its own end. "Fitted": each curve fitted non-decreasing (isotonic), ' +
    "real's fitted final success as the target, crossings interpolated between points; the 95% interval " +
    `from ${REPLICATES} bootstrap redraws of every point's episodes (a replicate that never reaches counts ` +
    'as 0; "reached": the share that did). Cost per iteration: training seconds per iteration over real\'s.</p>\n' +
    chart(
      report,
      'held-out success vs training wall-clock',
      'seconds (physics + world model + training + refresh)',
      (c) => c.seconds,
    ) +
    '\n' +
    `${chart(report, 'held-out success vs physics steps', 'physics env steps', (c) => c.physicsSteps)}\n` +
    `${table(report)}\n` +
    '</body></html>\n'
  );
}

/** Writes report.json and index.html into `dir` as one commit. */
export function writeSpeedupReport(
  dir: string,
  report: SpeedupReport,
  command: string,
): { json: string; html: string } {
  const json = join(dir, 'report.json');
  const html = join(dir, 'index.html');
  commitFiles([
    { path: json, data: `${JSON.stringify({ command, ...report }, null, 2)}\n` },
    { path: html, data: speedupHtml(report, command) },
  ]);
  return { json, html };
}
