// The corrections study (docs/trainer.md, "What the world model and each correction add"), a
// configuration of the study core: named rows (a mode and trainer fields) trained on several seeds as
// `wmrl train` children, each run evaluated on the held-out split right after it trains; a table of
// between-seed means with 95% intervals and per-seed paired differences against other rows. Resumable:
// finished runs and evaluations are kept and reused, and the report covers every finished run of the
// study's rows. A metric a run wrote as null (or left out) stays missing: never averaged, counted.
import { join } from 'node:path';
import { z } from 'zod';
import { trainSeconds } from '../core/metrics.ts';
import { mean } from '../core/stats.ts';
import type { PolicyResult } from '../eval/index.ts';
import type { Scene } from '../scene/index.ts';
import { SpeedupConfigSchema } from './speedup.ts';
import { type MetricLine, meanMetric, metric, sumMetric } from './study-cache.ts';
import {
  type ChildPaths,
  type CurvePoint,
  childRunner,
  curveOf,
  evalCached,
  finishedMetrics,
  type InputHashes,
  inputHashes,
  readEval,
  type TabletopRun,
  tabletopRun,
} from './study-child.ts';
import { across, bySeed, meanCurve, paired, ratio, valueAt, versusSeeds } from './study-stats.ts';
import { checkRows, type StudyRow, StudyRowSchema, stampStudy } from './study.ts';

export { checkRows, StudyRowSchema, type StudyRow } from './study.ts';

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

export const correctionRun = (h: InputHashes, s: CorrectionStudy, row: StudyRow, seed: number): TabletopRun =>
  tabletopRun(
    h,
    {
      name: `${row.name}-s${seed}`,
      row: row.name,
      mode: row.mode,
      seed,
      iterations: s.iterations,
      fields: { evalEvery: 0, ...s.config, ...row.config },
    },
    s,
  );
const evalPath = (p: ChildPaths, run: TabletopRun) => join(p.runs, run.name, 'final-eval.json');
const policyPath = (p: ChildPaths, run: TabletopRun) => join(p.runs, run.name, 'policy.onnx');

/** Trains and evaluates every (row, seed) of `only` (row names; default all) on `seeds` (default the
 *  study's), seed by seed (`train: false`: none), then reports every finished run of the study. */
export async function runCorrectionStudy(
  scene: Scene,
  s: CorrectionStudy,
  p: ChildPaths,
  o: { only?: string[]; seeds?: number[]; train?: boolean; log?: (line: string) => void } = {},
) {
  const log = o.log ?? (() => {});
  const h = inputHashes(p, scene);
  const { seeds: _s, rows: _r, ...shared } = s;
  stampStudy(p.runs, { ...shared, policy: h.policy, world_model: h.worldModel, scene: h.sceneHash }, s.rows);
  const rows = o.train === false ? [] : s.rows.filter((r) => !o.only || o.only.includes(r.name));
  const base = await evalCached(h, s, p.policy, join(p.runs, 'base-eval.json'));
  const runner = childRunner(p);
  for (const seed of o.seeds ?? s.seeds)
    for (const row of rows) {
      const run = correctionRun(h, s, row, seed);
      await runner.train(run, log);
      const final = await evalCached(h, s, policyPath(p, run), evalPath(p, run));
      log(`${run.name}: held-out ${(100 * overall(final)).toFixed(1)}% on ${s.finalEpisodes} episodes per task`);
    }
  return studyReport(s, p, h, base);
}

const outcomes = (r: PolicyResult, tasks: readonly string[]) => tasks.flatMap((t) => r.outcomes[t]);
const overall = (r: PolicyResult) => mean(Object.values(r.outcomes).flat());

/** A finished, evaluated run as the report reads it. */
interface Finished {
  seed: number;
  metrics: MetricLine[];
  final: PolicyResult;
}

/** The row's runs whose stamp matches, that ran every iteration and whose evaluation is cached. */
function finishedRuns(s: CorrectionStudy, p: ChildPaths, h: InputHashes, row: StudyRow): Finished[] {
  return s.seeds.flatMap((seed) => {
    const run = correctionRun(h, s, row, seed);
    const metrics = finishedMetrics(p, run);
    const final = metrics && readEval(h, s, policyPath(p, run), evalPath(p, run));
    return metrics && final ? [{ seed, metrics, final }] : [];
  });
}

/** The study's table: each row's finished runs, between seeds, against the base and the rows it is paired with. */
export function studyReport(s: CorrectionStudy, p: ChildPaths, h: InputHashes, base: PolicyResult) {
  const runs = new Map(s.rows.map((r) => [r.name, finishedRuns(s, p, h, r)]));
  const rows = s.rows.map((row) => {
    const mine = runs.get(row.name)!;
    const last = (r: Finished) => r.metrics.at(-1)!;
    const wmShare = (
      r: Finished,
      key: 'groups/debias_changed' | 'groups/wm_three_valued' | 'groups/zero_variance_wm',
    ) => ratio(sumMetric(r.metrics, key), sumMetric(r.metrics, 'groups/wm'));
    const vsBase = (r: Finished) =>
      paired(outcomes(r.final, s.tasks), outcomes(base, s.tasks), `${row.name}-s${r.seed} vs the base`);
    return {
      name: row.name,
      mode: row.mode,
      config: row.config,
      seeds: mine.map((r) => r.seed),
      success: across(mine.map((r) => overall(r.final))),
      per_task: Object.fromEntries(s.tasks.map((t) => [t, across(mine.map((r) => mean(r.final.outcomes[t])))])),
      vs_base: across(mine.map((r) => vsBase(r).diff)),
      versus: row.versus.map((name) => versus(s, name, mine, runs.get(name)!)),
      physics_steps: across(mine.map((r) => last(r)['steps/physics'])),
      world_model_steps: across(mine.map((r) => last(r)['steps/world_model'])),
      train_seconds: across(mine.map((r) => r.metrics.reduce((a, m) => a + trainSeconds(m), 0))),
      // per run, the share of world-model groups in which the debias map changed an advantage, with >= 3
      // distinct rewards, with equal rewards; the denoiser's w; the debias map's bias at the end
      corrections: {
        debias_changed: across(mine.map((r) => wmShare(r, 'groups/debias_changed'))),
        three_valued: across(mine.map((r) => wmShare(r, 'groups/wm_three_valued'))),
        equal_reward: across(mine.map((r) => wmShare(r, 'groups/zero_variance_wm'))),
        w_mean: across(mine.map((r) => meanMetric(r.metrics, 'denoise/w'))),
        w_final: across(mine.map((r) => metric(last(r), 'denoise/w'))),
        bias_before: across(mine.map((r) => metric(last(r), 'debias/bias_before'))),
        bias_after: across(mine.map((r) => metric(last(r), 'debias/bias_after'))),
      },
      // per iteration, mean over seeds: the denoiser's w
      w_curve: meanCurve(mine.map((r) => r.metrics.map((m) => metric(m, 'denoise/w')))),
      curves: mine.map((r) => ({ seed: r.seed, points: curveOf(r.metrics) })).filter((c) => c.points.length > 1),
    };
  });
  return {
    format: 'wmrl-corrections/2',
    config: s,
    policy: p.policy,
    world_model: p.worldModel,
    base: { success: overall(base), episodes: outcomes(base, s.tasks).length },
    rows,
  };
}
export type CorrectionReport = ReturnType<typeof studyReport>;

/** A row's runs against another row's, seed by seed (same held-out episodes), and where both evaluate
 *  during training, the same at equal physics steps and seconds. */
function versus(s: CorrectionStudy, name: string, mine: Finished[], theirs: Finished[]) {
  const pairs = bySeed(mine, theirs);
  return {
    ...versusSeeds(name, pairs, (r) => outcomes(r.final, s.tasks)),
    at_equal_cost: atEqualCost(pairs),
  };
}

/** Each seed's final curve point against the other row's curve (same seed) interpolated at the same
 *  physics steps and at the same training seconds; null unless both rows evaluate during training. */
function atEqualCost(pairs: [Finished, Finished][]) {
  const curves = pairs.map(([a, b]) => [curveOf(a.metrics), curveOf(b.metrics)]);
  if (!curves.length || curves.some(([a, b]) => a.length < 2 || b.length < 2)) return null;
  const diffs = (cost: (c: CurvePoint) => number) => {
    const d = curves.map(([a, b]) => {
      const ref = valueAt(b, cost, cost(a.at(-1)!));
      return ref === null ? null : a.at(-1)!.success - ref;
    });
    return d.some((x) => x === null) ? null : across(d);
  };
  return { physics_steps: diffs((c) => c.physicsSteps), seconds: diffs((c) => c.seconds) };
}
