// Held-out learning curves of a study folder (scripts/curriculum-study.sh): every run's evaluation lines
// (eval/success and eval/success/<task>, the policy before training at iteration 0), averaged per row over
// its training seeds, with the iteration from which each row's curve stops improving; as a Markdown table
// and a page of line charts.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TrainMetricsSchema } from '../core/metrics.ts';
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { mean } from '../core/stats.ts';
import { CodeVersionSchema } from '../store/index.ts';
import { chart, markdownTable, markdownTableHtml, page, type Series, writeReport } from './study-report.ts';
import { reach, isotonic } from './study-speedup.ts';

/** Held-out success at one evaluation: overall, and per task id. */
export interface CurvePoint {
  iteration: number;
  overall: number;
  tasks: Record<string, number>;
}

export interface RowCurve {
  row: string;
  /** The training seeds whose runs have evaluation lines. */
  seeds: number[];
  /** The code versions its runs were made by (setup.json's; one unless the runs mixed code), as
   *  "<commit, 7> (source <hash, 12>)". */
  code: string[];
  /** Per evaluation iteration that every seed has reached, the means over the seeds. */
  points: CurvePoint[];
  /** The first iteration from which the isotonic fit of the mean overall curve stays within
   *  PLATEAU_WITHIN of its final value (null: no points). */
  plateau: number | null;
}

/** How close to its final fitted value a curve counts as having stopped improving. */
export const PLATEAU_WITHIN = 0.02;

/** A run's held-out evaluations from its metrics.jsonl: the line's before-training values at 0, then every
 *  evaluation line. A line that is not a metrics line is an InputError naming the file and line. */
export function runCurve(runDir: string): CurvePoint[] {
  const file = join(runDir, 'metrics.jsonl');
  const points: CurvePoint[] = [];
  const text = readFileSync(file, 'utf8').trim();
  for (const [k, line] of (text ? text.split('\n') : []).entries()) {
    const parsed = TrainMetricsSchema.safeParse(JSON.parse(line));
    if (!parsed.success) throw new InputError(`${file}:${k + 1}: not a metrics line (${parsed.error.issues[0].path})`);
    const m = parsed.data as Record<string, unknown>;
    for (const [at, iteration] of [
      ['eval_initial', 0],
      ['eval', m.iteration as number],
    ] as const) {
      if (typeof m[`${at}/success`] !== 'number') continue;
      const prefix = `${at}/success/`;
      const tasks = Object.fromEntries(
        Object.entries(m)
          .filter(([key]) => key.startsWith(prefix))
          .map(([key, v]) => [key.slice(prefix.length), v as number]),
      );
      points.push({ iteration, overall: m[`${at}/success`] as number, tasks });
    }
  }
  return points;
}

/** The code version a run folder's setup.json names ("unknown" without one). */
function codeOf(runDir: string): string {
  const file = join(runDir, 'setup.json');
  if (!existsSync(file)) return 'unknown';
  const parsed = z.object({ code: CodeVersionSchema }).safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success) throw new InputError(`${file}: no code version (${parsed.error.issues[0].path.join('.')})`);
  const { commit, source, clean } = parsed.data.code;
  return `${commit?.slice(0, 7) ?? 'no git'}${clean === false ? '+changes' : ''} (source ${source.slice(0, 12)})`;
}

/** The curves of `rows` over `seeds` in a study folder (`<row>-s<seed>/metrics.jsonl`); a row without
 *  any run yet is left out. */
export function studyCurves(dir: string, rows: readonly string[], seeds: readonly number[]): RowCurve[] {
  const out: RowCurve[] = [];
  for (const row of rows) {
    const runs = seeds
      .map((seed) => ({ seed, dir: join(dir, `${row}-s${seed}`) }))
      .filter((r) => existsSync(join(r.dir, 'metrics.jsonl')))
      .map((r) => ({ seed: r.seed, curve: runCurve(r.dir) }))
      .filter((r) => r.curve.length > 0);
    if (!runs.length) continue;
    const shared = runs[0].curve
      .map((p) => p.iteration)
      .filter((it) => runs.every((r) => r.curve.some((p) => p.iteration === it)));
    const points = shared.map((iteration) => {
      const at = runs.map((r) => r.curve.find((p) => p.iteration === iteration)!);
      const ids = Object.keys(at[0].tasks);
      return {
        iteration,
        overall: mean(at.map((p) => p.overall)),
        tasks: Object.fromEntries(ids.map((id) => [id, mean(at.map((p) => p.tasks[id] ?? Number.NaN))])),
      };
    });
    const code = [...new Set(runs.map((r) => codeOf(join(dir, `${row}-s${r.seed}`))))];
    out.push({ row, seeds: runs.map((r) => r.seed), code, points, plateau: plateauOf(points) });
  }
  return out;
}

/** The first iteration from which the isotonic fit of the overall curve stays within PLATEAU_WITHIN of
 *  its final value. */
export function plateauOf(points: readonly CurvePoint[]): number | null {
  if (!points.length) return null;
  const y = points.map((p) => p.overall);
  const x = points.map((p) => p.iteration);
  const reached = reach({ x, y }, isotonic(y).at(-1)! - PLATEAU_WITHIN);
  // the reach interpolates between evaluations; the plateau is the evaluation at or after it
  return x.find((it) => reached !== null && it >= reached - 1e-9) ?? null;
}

const pct = (v: number) => (Number.isFinite(v) ? (100 * v).toFixed(1) : 'n/a');
const shortTask = (id: string) => id.split('/').at(-1)!;

const taskIds = (curves: readonly RowCurve[]) => [
  ...new Set(curves.flatMap((c) => c.points.flatMap((p) => Object.keys(p.tasks)))),
];

/** A row per evaluation iteration, a column per study row (overall held-out success, mean over seeds);
 *  then each row's seeds, plateau and final per-task values. */
export function curvesTable(curves: readonly RowCurve[]): string {
  return `${byIterationTable(curves)}\n\n${summaryTable(curves)}`;
}

function byIterationTable(curves: readonly RowCurve[]): string {
  const iterations = [...new Set(curves.flatMap((c) => c.points.map((p) => p.iteration)))].sort((a, b) => a - b);
  return markdownTable(
    ['iteration', ...curves.map((c) => `${c.row} (${c.seeds.length} seed${c.seeds.length === 1 ? '' : 's'})`)],
    iterations.map((it) => [
      it,
      ...curves.map((c) => {
        const p = c.points.find((q) => q.iteration === it);
        return p ? pct(p.overall) : '';
      }),
    ]),
  );
}

function summaryTable(curves: readonly RowCurve[]): string {
  const tasks = taskIds(curves);
  return markdownTable(
    ['row', 'seeds', 'code', 'plateau (iteration)', 'last iteration', ...tasks.map(shortTask), 'overall'],
    curves.map((c) => {
      const last = c.points.at(-1)!;
      return [
        c.row,
        c.seeds.join(' '),
        c.code.join(', '),
        c.plateau ?? 'n/a',
        last.iteration,
        ...tasks.map((t) => pct(last.tasks[t] ?? Number.NaN)),
        pct(last.overall),
      ];
    }),
  );
}

/** Writes curves.json, curves.md and curves.html (a chart overall and one per task) into `out`. */
export function writeCurvesReport(out: string, curves: readonly RowCurve[], command: string) {
  const md = curvesTable(curves);
  const plot = (title: string, value: (p: CurvePoint) => number) =>
    chart(
      title,
      curves.map(
        (c): Series => ({
          name: `${c.row} (${c.seeds.length})`,
          points: c.points.filter((p) => Number.isFinite(value(p))).map((p) => [p.iteration, value(p)] as const),
        }),
      ),
      { x: 'iteration', y: 'held-out success', yFormat: (v) => `${pct(v)}%` },
    );
  const body =
    plot('overall', (p) => p.overall) +
    taskIds(curves)
      .map((t) => plot(shortTask(t), (p) => p.tasks[t] ?? Number.NaN))
      .join('') +
    markdownTableHtml(summaryTable(curves)) +
    markdownTableHtml(byIterationTable(curves));
  const intro =
    'Held-out success during training (the evaluations every evalEvery iterations, evalEpisodes per task, the ' +
    'same seeds each time; iteration 0 is the policy before training), the mean over each row\u2019s training ' +
    `seeds at the iterations all of them reached. Plateau: the first evaluation from which the isotonic fit of ` +
    `the overall curve stays within ${100 * PLATEAU_WITHIN} points of its final value.`;
  return writeReport(
    out,
    {
      json: { plateau_within: PLATEAU_WITHIN, curves },
      md,
      html: page('Held-out learning curves', intro, command, body),
      command,
    },
    { json: 'curves.json', md: 'curves.md', html: 'curves.html' },
  );
}
