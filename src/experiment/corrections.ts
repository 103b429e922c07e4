// The corrections study (docs/trainer.md, "What the world model and each correction add"): named rows
// (a mode and trainer fields, such as the horizon or a correction's switch) trained on several seeds,
// each run evaluated on the held-out split right after it trains, and a table of between-seed means with
// 95% intervals and per-seed paired differences against other rows. Resumable: finished runs and
// evaluations are kept and skipped, and the report covers every finished run of the study's rows.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { readInputJson } from '../core/input-file.ts';
import { type TrainMetrics, trainSeconds } from '../core/metrics.ts';
import { canonicalJson } from '../core/spec.ts';
import { mean, tInterval } from '../core/stats.ts';
import { type PolicyResult, pairedDifference } from '../eval/index.ts';
import type { Scene } from '../scene/index.ts';
import { commitFiles } from '../store/index.ts';
import { MODES } from '../trainer/index.ts';
import { SpeedupConfigSchema, type SpeedupPaths } from './speedup.ts';
import { type CurvePoint, curveOf, evalCached, metricsOf, type RunSpec, trainRun } from './speedup-runs.ts';

export const StudyRowSchema = z
  .object({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9+._-]*$/, 'lower-case letters, digits and + . _ - (it names run folders)')
      .describe('the row, and the prefix of its run folders'),
    mode: z.enum(MODES).describe('trainer mode'),
    config: z
      .record(z.string(), z.unknown())
      .default({})
      .describe('trainer config fields over the preset (horizon, branchShare, modelReward, debias, ...)'),
    versus: z.array(z.string()).default([]).describe('the rows it is paired against, seed by seed'),
  })
  .strict();
export type StudyRow = z.output<typeof StudyRowSchema>;

export const CorrectionStudySchema = z
  .object({
    tasks: SpeedupConfigSchema.shape.tasks,
    seeds: z.array(z.number().int().min(0)).min(1).default([0, 1, 2, 3, 4]).describe('training seeds'),
    iterations: z.number().int().positive().default(48).describe('policy updates of every run'),
    finalEpisodes: z.number().int().positive().default(200).describe('held-out episodes per task of each run'),
    preset: z.string().default('default').describe('trainer preset of every run'),
    config: z
      .record(z.string(), z.unknown())
      .default({})
      .describe("trainer config fields of every run (a row's own fields go over them)"),
    rows: z.array(StudyRowSchema).min(1).describe('the rows of the table'),
  })
  .strict()
  .superRefine(checkRows);
export type CorrectionStudy = z.output<typeof CorrectionStudySchema>;

/** A study's rows: names unique, and every row a row is paired against exists. */
export function checkRows(c: { rows: { name: string; versus: string[] }[] }, ctx: z.RefinementCtx): void {
  const names = c.rows.map((r) => r.name);
  c.rows.forEach((r, k) => {
    if (names.indexOf(r.name) !== k)
      ctx.addIssue({ code: 'custom', path: ['rows', k, 'name'], message: `"${r.name}" twice` });
    r.versus.forEach((v, m) => {
      if (!names.includes(v))
        ctx.addIssue({ code: 'custom', path: ['rows', k, 'versus', m], message: `no row "${v}"` });
    });
  });
}

const runOf = (s: CorrectionStudy, row: StudyRow, seed: number): RunSpec => ({
  name: `${row.name}-s${seed}`,
  mode: row.mode,
  seed,
  iterations: s.iterations,
  fields: { evalEvery: 0, ...s.config, ...row.config },
  tasks: s.tasks,
  preset: s.preset,
});

/** Trains and evaluates every (row, seed) of `only` (row names; default all) on `seeds` (default the
 *  study's), seed by seed (`train: false`: none), then reports every finished run of the study. */
export async function runCorrectionStudy(
  scene: Scene,
  s: CorrectionStudy,
  p: SpeedupPaths,
  o: { only?: string[]; seeds?: number[]; train?: boolean; log?: (line: string) => void } = {},
) {
  const log = o.log ?? (() => {});
  stampStudy(p.runs, s, { policy: p.policy, worldModel: p.worldModel });
  const rows = o.train === false ? [] : s.rows.filter((r) => !o.only || o.only.includes(r.name));
  const base = await evalCached(scene, s, p.policy, join(p.runs, 'base-eval.json'));
  for (const seed of o.seeds ?? s.seeds)
    for (const row of rows) {
      const run = runOf(s, row, seed);
      await trainRun(p, run, log);
      const final = await evalCached(scene, s, join(p.runs, run.name, 'policy.onnx'), evalPath(p, run));
      log(`${run.name}: held-out ${(100 * overall(final)).toFixed(1)}% on ${s.finalEpisodes} episodes per task`);
    }
  return studyReport(s, p, base);
}

const evalPath = (p: SpeedupPaths, run: RunSpec) => join(p.runs, run.name, 'final-eval.json');
const outcomes = (r: PolicyResult, tasks: readonly string[]) => tasks.flatMap((t) => r.outcomes[t]);
const overall = (r: PolicyResult) => mean(Object.values(r.outcomes).flat());

/** A finished, evaluated run as the report reads it. */
interface Finished {
  seed: number;
  metrics: TrainMetrics[];
  final: PolicyResult;
}

function finishedRuns(s: CorrectionStudy, p: SpeedupPaths, row: StudyRow): Finished[] {
  return s.seeds.flatMap((seed) => {
    const run = runOf(s, row, seed);
    const metrics = metricsOf(join(p.runs, run.name));
    const cache = evalPath(p, run);
    if (metrics.length < s.iterations || !existsSync(cache)) return [];
    const final = readInputJson(cache, z.object({ result: z.unknown() }), 'evaluation cache').result as PolicyResult;
    return [{ seed, metrics, final }];
  });
}

/** Between-seed mean of `xs` with its 95% t interval (null bounds with fewer than 2 seeds). */
export const across = (xs: number[]) => {
  const t = tInterval(xs);
  return { mean: t.mean, low: xs.length > 1 ? t.low : null, high: xs.length > 1 ? t.high : null, values: xs };
};
const sum = (ms: readonly TrainMetrics[], key: keyof TrainMetrics) => ms.reduce((a, m) => a + Number(m[key] ?? 0), 0);

/** The study's table: each row's finished runs, between seeds, against the base and the rows it is paired with. */
export function studyReport(s: CorrectionStudy, p: SpeedupPaths, base: PolicyResult) {
  const runs = new Map(s.rows.map((r) => [r.name, finishedRuns(s, p, r)]));
  const rows = s.rows.map((row) => {
    const mine = runs.get(row.name)!;
    const last = (r: Finished) => r.metrics.at(-1)!;
    return {
      name: row.name,
      mode: row.mode,
      config: row.config,
      seeds: mine.map((r) => r.seed),
      success: across(mine.map((r) => overall(r.final))),
      per_task: Object.fromEntries(s.tasks.map((t) => [t, across(mine.map((r) => mean(r.final.outcomes[t])))])),
      vs_base: across(mine.map((r) => pairedDifference(outcomes(r.final, s.tasks), outcomes(base, s.tasks)).diff)),
      versus: row.versus.map((name) => versus(s, name, mine, runs.get(name)!)),
      physics_steps: across(mine.map((r) => last(r)['steps/physics'])),
      world_model_steps: across(mine.map((r) => last(r)['steps/world_model'])),
      train_seconds: across(mine.map((r) => r.metrics.reduce((a, m) => a + trainSeconds(m), 0))),
      corrections: {
        // share of world-model groups in which the debias map changed an advantage, and with >= 3 rewards
        debias_changed: across(mine.map((r) => sum(r.metrics, 'groups/debias_changed') / wmGroups(r))),
        three_valued: across(mine.map((r) => sum(r.metrics, 'groups/wm_three_valued') / wmGroups(r))),
        equal_reward: across(mine.map((r) => sum(r.metrics, 'groups/zero_variance_wm') / wmGroups(r))),
        w_mean: across(mine.map((r) => sum(r.metrics, 'denoise/w') / r.metrics.length)),
        w_final: across(mine.map((r) => last(r)['denoise/w'])),
        bias_before: across(mine.map((r) => last(r)['debias/bias_before'])),
        bias_after: across(mine.map((r) => last(r)['debias/bias_after'])),
      },
      // per iteration, mean over seeds: the denoiser's w
      w_curve: meanCurve(mine.map((r) => r.metrics.map((m) => m['denoise/w']))),
      curves: mine.map((r) => ({ seed: r.seed, points: curveOf(r.metrics) })).filter((c) => c.points.length > 1),
    };
  });
  return {
    format: 'wmrl-corrections/1',
    config: s,
    policy: p.policy,
    world_model: p.worldModel,
    base: { success: overall(base), episodes: outcomes(base, s.tasks).length },
    rows,
  };
}
export type CorrectionReport = ReturnType<typeof studyReport>;

/** A row's runs against another row's, seed by seed (the seeds both have, on the same held-out
 *  episodes): the mean of per-seed paired differences with its t interval over seeds, the pooled paired
 *  difference, and where both evaluate during training, the same at equal physics steps and seconds. */
function versus(s: CorrectionStudy, name: string, mine: Finished[], theirs: Finished[]) {
  const pairs = mine.flatMap((a) => {
    const b = theirs.find((x) => x.seed === a.seed);
    return b
      ? [{ a: outcomes(a.final, s.tasks), b: outcomes(b.final, s.tasks), runs: [a, b] as [Finished, Finished] }]
      : [];
  });
  return {
    row: name,
    seeds: pairs.length,
    per_seed: across(pairs.map(({ a, b }) => pairedDifference(a, b).diff)),
    pooled: pairedDifference(
      pairs.flatMap((x) => x.a),
      pairs.flatMap((x) => x.b),
    ),
    at_equal_cost: atEqualCost(pairs.map((x) => x.runs)),
  };
}

/** Where both rows evaluate during training: each seed's final curve point against the reference's
 *  curve (same seed) interpolated at the same physics steps and at the same training seconds. */
function atEqualCost(pairs: [Finished, Finished][]) {
  const curves = pairs.map(([a, b]) => [curveOf(a.metrics), curveOf(b.metrics)]);
  if (!curves.length || curves.some(([a, b]) => a.length < 2 || b.length < 2)) return null;
  const at = (c: CurvePoint[], key: 'physicsSteps' | 'seconds', x: number) => {
    const k = c.findIndex((p) => p[key] >= x);
    if (k < 0) return null; // beyond the reference's end
    if (k === 0) return c[0].success;
    const [p, q] = [c[k - 1], c[k]];
    return p.success + ((q.success - p.success) * (x - p[key])) / Math.max(1e-9, q[key] - p[key]);
  };
  const diffs = (key: 'physicsSteps' | 'seconds') => {
    const d = curves.map(([a, b]) => {
      const ref = at(b, key, a.at(-1)![key]);
      return ref === null ? null : a.at(-1)!.success - ref;
    });
    return d.some((x) => x === null) ? null : across(d as number[]);
  };
  return { physics_steps: diffs('physicsSteps'), seconds: diffs('seconds') };
}

const wmGroups = (r: Finished) => Math.max(1, sum(r.metrics, 'groups/wm'));

/** Per index, the mean over curves (as long as the shortest). */
export function meanCurve(curves: number[][]): number[] {
  const n = Math.min(...curves.map((c) => c.length));
  return curves.length ? Array.from({ length: n }, (_, i) => mean(curves.map((c) => c[i]))) : [];
}

/** The runs folder's stamp (study.json): the settings every run shares (the study without its seeds and
 *  rows, and `inputs`), and each row's definition. Rows and seeds may be added later; a row that changed
 *  must get a new name (the rows it is paired against may change). */
export function stampStudy<R extends { name: string; versus: string[] }>(
  runs: string,
  s: { rows: R[] },
  inputs: Record<string, string>,
): void {
  const stamp = join(runs, 'study.json');
  const shared = (c: object, inp: Record<string, unknown>) => canonicalJson({ ...c, seeds: null, rows: null, ...inp });
  const trained = ({ versus: _, ...r }: { name: string; versus?: unknown }) => canonicalJson(r);
  let rows: z.infer<typeof StampRowSchema>[] = [];
  if (existsSync(stamp)) {
    const { study, ...prev } = readInputJson(stamp, StampSchema, 'study stamp');
    if (shared(study, prev) !== shared(s, inputs))
      throw new InputError(`${stamp}: the runs there share other settings; use another --runs folder or delete it`);
    for (const r of s.rows) {
      const old = study.rows.find((x) => x.name === r.name);
      if (old && trained(old) !== trained(r))
        throw new InputError(`${stamp}: row "${r.name}" was trained with other settings; rename it`);
    }
    rows = study.rows.filter((x) => !s.rows.some((r) => r.name === x.name));
  }
  const study = { ...s, rows: [...rows, ...s.rows] };
  commitFiles([{ path: stamp, data: `${JSON.stringify({ study, ...inputs }, null, 2)}\n` }]);
}

const StampRowSchema = z.looseObject({ name: z.string() });
const StampSchema = z.looseObject({ study: z.looseObject({ rows: z.array(StampRowSchema) }) });
