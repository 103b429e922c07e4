// The speedup report through the study report writer: report.json, table.md and index.html (held-out
// success vs training wall-clock and vs physics steps per run, and the table).
import type { SpeedupReport } from './speedup.ts';
import type { CurvePoint } from './study-child.ts';
import { chart, esc, markdownTable, markdownTableHtml, NA, page, type Series, writeReport } from './study-report.ts';
import { REPLICATES, type SpeedupInterval } from './study-speedup.ts';

const COLOURS: Record<string, string> = {
  real: '#222',
  'real-branch': '#ff7f0e',
  wmrl: '#d62728',
  mix: '#1f77b4',
  'mix+denoise': '#2ca02c',
  'mix+debias': '#9467bd',
  wm: '#8c564b',
};
const pct = (x: number) => (100 * x).toFixed(1);
const fmt = (x: number | null, d: number) => (x === null ? NA : x.toFixed(d));
const diff = (d: { diff: number; ci_low: number; ci_high: number }) =>
  `${pct(d.diff)} [${pct(d.ci_low)}, ${pct(d.ci_high)}]`;
const interval = (f: SpeedupInterval | null, d: number) =>
  f
    ? `${f.estimate === null ? 'not reached' : f.estimate.toFixed(d)} [${f.low.toFixed(d)}, ${f.high.toFixed(d)}] (${pct(f.reached)}%)`
    : '';

/** One line per run. */
export function speedupTable(report: SpeedupReport): string {
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
    'speedup wall-clock [95%] (reached)',
    'speedup physics steps [95%] (reached)',
    'ceiling (free WM)',
    "real's cost over this run's (wall / physics)",
    'cost per iteration vs real',
    'equal-reward groups',
  ];
  const rows = report.runs.map((r) => {
    const f = r.final;
    return [
      r.mode,
      r.seed,
      r.iterations,
      r.train_seconds.toFixed(0),
      r.physics_steps,
      `${pct(f.overall.success)} [${pct(f.overall.ci_low)}, ${pct(f.overall.ci_high)}]`,
      diff(f.overall.vs_base),
      `${pct(f.seen.success)} (n ${f.seen.episodes})`,
      `${pct(f.reserved.success)} (n ${f.reserved.episodes})`,
      r.mode === 'real' ? '' : diff(r.vs_real),
      interval(r.speedup_wall, 2),
      interval(r.speedup_physics, 1),
      r.mode === 'real' ? '' : fmt(r.speedup_wall_ceiling, 2),
      r.mode === 'real' ? '' : `${fmt(r.cost_vs_real.wall, 2)} / ${fmt(r.cost_vs_real.physics, 1)}`,
      fmt(r.iteration_cost_vs_real, 2),
      r.equal_reward_groups === null ? NA : `${pct(r.equal_reward_groups)}%`,
    ];
  });
  return markdownTable(head, rows);
}

/** Held-out success against a cost, a line per (mode, seed), from the base at 0. */
function curves(report: SpeedupReport, title: string, x: string, cost: (c: CurvePoint) => number): string {
  const base = report.base.overall.success;
  const series: Series[] = report.curves.map((c) => ({
    name: `${c.mode} s${c.seed}`,
    colour: COLOURS[c.mode] ?? '#777',
    points: [
      ...(c.points[0]?.iteration === 0 ? [] : [[0, base] as const]),
      ...c.points.map((p) => [cost(p), p.success] as const),
    ],
  }));
  return chart(title, series, { x, y: 'held-out success', yFormat: (v) => `${pct(v)}%` });
}

const INTRO = (r: SpeedupReport) => {
  const b = r.base.overall;
  return (
    `Tasks ${esc(r.config.tasks.join(', '))}; base policy ${esc(r.policy)}: held-out success ${pct(b.success)}% ` +
    `[${pct(b.ci_low)}, ${pct(b.ci_high)}] (n ${b.episodes}). Curves: held-out success on ${r.config.evalEpisodes} ` +
    `episodes per task during training (evaluation off the clock); table: ${r.config.finalEpisodes} held-out ` +
    'episodes per task after training, paired on the same seeds. Speedup: each curve fitted non-decreasing ' +
    "(isotonic); real's fitted final success is the target; a run reaches it at the first cost from which its " +
    "fit stays at or above it (interpolated); speedup = real's cost to reach it over the run's. The 95% interval " +
    `from ${REPLICATES} bootstrap redraws of every point's episodes (a replicate that never reaches counts as 0; ` +
    '"reached": the share that did). Ceiling: the wall-clock speedup were world-model steps free. Real\'s cost ' +
    "over this run's: at both runs' ends (with vs real at or above 0, the run got to real's final success at " +
    "least that much sooner). Cost per iteration: training seconds per iteration over real's."
  );
};

/** Writes report.json, table.md and index.html into `dir` as one commit. */
export function writeSpeedupReport(dir: string, report: SpeedupReport, command: string) {
  const md = speedupTable(report);
  const body =
    curves(
      report,
      'held-out success vs training wall-clock',
      'seconds (physics + world model + training + refresh)',
      (c) => c.seconds,
    ) +
    curves(report, 'held-out success vs physics steps', 'physics env steps', (c) => c.physicsSteps) +
    markdownTableHtml(md);
  const html = page('Speedup: WMRL vs physics-only GRPO', INTRO(report), command, body);
  return writeReport(dir, { json: report, md, html, command });
}
