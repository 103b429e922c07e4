// The AutoResearch speedup report through the study report writer: report-seedS.json, seedS.md (the
// tables and how they were made) and seedS.html (the tables and the curves).
import type { PairedDiff } from '../eval/index.ts';
import type { ResearchCurvePoint, ResearchModeRun, ResearchSpeedupReport } from './research-speedup.ts';
import { chart, esc, markdownTable, markdownTableHtml, page, writeReport } from './study-report.ts';
import type { SpeedupInterval } from './study-speedup.ts';

const f3 = (x: number) => x.toFixed(3);
const position = (p: { position: number; ciLow: number; ciHigh: number }) =>
  `${f3(p.position)} [${f3(p.ciLow)}, ${f3(p.ciHigh)}]`;
const pairText = (p: PairedDiff) => `${p.diff >= 0 ? '+' : ''}${f3(p.diff)} [${f3(p.ci_low)}, ${f3(p.ci_high)}]`;
const interval = (s: SpeedupInterval, d: number) => {
  const ci = `[${s.low.toFixed(d)}, ${s.high.toFixed(d)}] (reached in ${Math.round(100 * s.reached)}% of redraws)`;
  return s.estimate === null ? `not reached (target ${f3(s.target)}) ${ci}` : `${s.estimate.toFixed(d)}x ${ci}`;
};

/** The agents at their last curve point. */
export function researchSpeedupTable(r: ResearchSpeedupReport): string {
  const row = (name: string, it: number, s: number, ex: number, p: ResearchCurvePoint) => [
    name,
    it,
    s.toFixed(0),
    ex,
    position(p),
    p.perTask.map((t) => `${t.task} ${f3(t.testPosition)}`).join(', '),
  ];
  const head = [
    'agent',
    'iterations',
    'training wall-clock (s)',
    'executions',
    'held-out test position [95%]',
    'per task',
  ];
  return markdownTable(head, [
    row('base', 0, 0, 0, r.base),
    ...r.runs.map((m) => row(m.mode, m.iterations, m.seconds, m.executions, m.curve.at(-1)!)),
  ]);
}

function finalTable(r: ResearchSpeedupReport): string {
  return markdownTable(
    ['agent', 'held-out test position [95%]', 'vs base [95%]', 'vs real [95%]'],
    r.final.map((f) => [
      f.agent,
      position(f),
      f.agent === 'base' ? '0' : pairText(f.vsBase),
      f.vsReal ? pairText(f.vsReal) : '0',
    ]),
  );
}

const curveTable = (runs: ResearchModeRun[]) =>
  markdownTable(
    ['mode', 'iteration', 'training wall-clock (s)', 'executions', 'held-out test position [95%]'],
    runs.flatMap((m) => m.curve.map((p) => [m.mode, p.iteration, p.seconds.toFixed(0), p.executions, position(p)])),
  );

const intro = (r: ResearchSpeedupReport) =>
  `Held-out tasks: ${r.heldout.join(', ')}; ${r.config.episodes} evaluation episodes per task and point, seeds ` +
  "disjoint from training. Position: the test-score leaderboard position of each episode's submitted run (its best " +
  'validation position), mean over episodes, 95% normal interval. Wall-clock: training only (evaluation excluded). ' +
  "Speedup: each curve fitted non-decreasing (isotonic); real's fitted final position is the target; a curve " +
  "reaches it at the first cost from which its fit stays at or above it (interpolated); speedup = real's cost to " +
  "reach it over wmrl's; 95% interval from redraws of every point's position (normal, from its interval; a " +
  'redraw that never reaches counts as 0).';

/** report-seedS.json, seedS.md and seedS.html in `dir`, as one commit. */
export function writeResearchReport(dir: string, r: ResearchSpeedupReport, command: string) {
  const s = r.config.seed;
  const speedup =
    `wmrl reaches real's fitted final held-out position: ${interval(r.speedup.wall, 2)} in training wall-clock, ` +
    `${interval(r.speedup.executions, 2)} in executions.`;
  const finals = `Final paired evaluation (${r.config.finalEpisodes} episodes per held-out task, the same seeds for every agent):`;
  const md = [
    '# AutoResearch: real-execution GRPO vs WMRL',
    '',
    `Made by \`${command}\` (seed ${s}). ${intro(r)}`,
    '',
    researchSpeedupTable(r),
    '',
    finals,
    '',
    finalTable(r),
    '',
    speedup,
    '',
    '## Curves',
    '',
    curveTable(r.runs),
  ].join('\n');
  const series = r.runs.map((m) => ({
    name: m.mode,
    points: [[0, r.base.position] as const, ...m.curve.map((p) => [p.seconds, p.position] as const)],
  }));
  const body =
    markdownTableHtml(researchSpeedupTable(r)) +
    `<p>${esc(finals)}</p>${markdownTableHtml(finalTable(r))}<p>${esc(speedup)}</p>` +
    chart('held-out test position vs training wall-clock', series, { x: 'seconds', y: 'test position' }) +
    markdownTableHtml(curveTable(r.runs));
  const html = page('AutoResearch: real-execution GRPO vs WMRL', esc(intro(r)), command, body);
  const names = { json: `report-seed${s}.json`, md: `seed${s}.md`, html: `seed${s}.html` };
  return writeReport(dir, { json: r, md, html, command }, names);
}
