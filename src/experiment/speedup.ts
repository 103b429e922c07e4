// The speedup experiment (docs/speedup.md), a configuration of the study core: `real`, `wmrl` and the
// ablations trained on the same seeds (one row per mode), each run a `wmrl train` child (at most `jobs`
// at once), then held-out evaluation in physics, paired against the base policy and against `real`,
// split into seen and reserved object-target pairs, and each run's speedup over `real` of its seed
// (study-speedup.ts). Finished runs and evaluations are kept in the runs folder and reused.
import { z } from 'zod';
import { join } from 'node:path';
import { InputError } from '../core/errors.ts';
import { type FidelityKey, trainSeconds } from '../core/metrics.ts';
import { wilson } from '../core/stats.ts';
import { type PolicyResult, comparePolicies } from '../eval/index.ts';
import type { Scene } from '../scene/index.ts';
import { sampleTask, splitSeed, usesReservedPair } from '../task/index.ts';
import { MODES, type Mode } from '../trainer/index.ts';
import { meanMetric, type MetricLine, sumMetric } from './study-cache.ts';
import {
  type ChildPaths,
  type CurvePoint,
  curveOf,
  evalCached,
  finishedMetrics,
  inputHashes,
  secondsOf,
  tabletopRun,
  trainRuns,
} from './study-child.ts';
import { binomialRedraw, speedupInterval } from './study-speedup.ts';
import { paired, ratio } from './study-stats.ts';
import { stampStudy } from './study.ts';

export { type CurvePoint, curveOf, WMRL_BIN } from './study-child.ts';
export type SpeedupPaths = ChildPaths;

const ModeSchema = z.enum(MODES);
export const SpeedupConfigSchema = z
  .object({
    tasks: z
      .array(z.string())
      .min(1)
      .default(['tabletop/pick-place', 'tabletop/put-in-bin'])
      .describe('task ids trained and evaluated'),
    seeds: z.array(z.number().int().min(0)).min(1).default([0]).describe('run seeds; every mode runs on each'),
    modes: z
      .array(ModeSchema)
      .min(1)
      .default(['real', 'wmrl', 'mix', 'mix+denoise', 'mix+debias'])
      .describe('modes compared (real is the reference)'),
    iterations: z
      .object({ real: z.number().int().positive(), model: z.number().int().positive() })
      .default({ real: 160, model: 320 })
      .describe('policy updates of real and of every mode with world-model groups'),
    evalEvery: z
      .object({ real: z.number().int().positive(), model: z.number().int().positive() })
      .default({ real: 16, model: 32 })
      .describe('held-out evaluation during training (the curves) every this many iterations'),
    evalEpisodes: z
      .number()
      .int()
      .positive()
      .default(100)
      .describe('held-out episodes per task at each curve point (and before training)'),
    finalEpisodes: z
      .number()
      .int()
      .positive()
      .default(100)
      .describe('held-out episodes per task of the final paired evaluation'),
    jobs: z.number().int().positive().default(2).describe('training runs at once (each uses about one core)'),
    preset: z.string().default('default').describe('trainer preset of every run (smoke: what tests use)'),
  })
  .strict();
export type SpeedupConfig = z.output<typeof SpeedupConfigSchema>;

export const runName = (mode: Mode, seed: number) => `${mode.replace('+', '-')}-seed${seed}`;

/** Success and paired difference to the base, overall and on seen / reserved object-target pairs. */
function splitResults(scene: Scene, cfg: SpeedupConfig, run: PolicyResult, base: PolicyResult) {
  const reserved = cfg.tasks.flatMap((t) =>
    Array.from({ length: cfg.finalEpisodes }, (_, k) =>
      usesReservedPair(scene, sampleTask(scene, t, splitSeed(scene, 'heldout', k))),
    ),
  );
  const a = cfg.tasks.flatMap((t) => run.outcomes[t]);
  const b = cfg.tasks.flatMap((t) => base.outcomes[t]);
  const part = (name: string, keep: (k: number) => boolean) => {
    const xa = a.filter((_, k) => keep(k));
    const w = wilson(
      xa.reduce((s: number, x) => s + x, 0),
      xa.length,
    );
    const vsBase = paired(
      xa,
      b.filter((_, k) => keep(k)),
      `${run.policy} vs the base (${name})`,
    );
    return { success: w.rate, ci_low: w.low, ci_high: w.high, episodes: xa.length, vs_base: vsBase };
  };
  return {
    overall: part('overall', () => true),
    seen: part('seen pairs', (k) => !reserved[k]),
    reserved: part('reserved pairs', (k) => reserved[k]),
    per_task: comparePolicies(run, base),
  };
}

export async function runSpeedup(
  scene: Scene,
  cfg: SpeedupConfig,
  p: ChildPaths,
  log: (line: string) => void = () => {},
) {
  if (!cfg.modes.includes('real'))
    throw new InputError('--modes: must include real (the reference the speedup is measured against)');
  const h = inputHashes(p, scene);
  const { jobs: _j, modes: _m, seeds: _s, ...shared } = cfg;
  stampStudy(
    p.runs,
    { ...shared, policy: h.policy, world_model: h.worldModel, scene: h.sceneHash },
    cfg.modes.map((m) => ({ name: m, mode: m })),
  );
  const model = (mode: Mode) => (mode === 'real' ? 'real' : 'model');
  // real first on each seed, so the reference is never the one left unfinished
  const runs = cfg.seeds.flatMap((seed) =>
    cfg.modes.map((mode) => {
      const fields = { evalEvery: cfg.evalEvery[model(mode)], evalEpisodes: cfg.evalEpisodes };
      const r = { name: runName(mode, seed), row: mode, mode, seed, iterations: cfg.iterations[model(mode)], fields };
      return tabletopRun(h, r, cfg);
    }),
  );
  await trainRuns(p, runs, cfg.jobs, log);

  log(`evaluating the base and ${runs.length} trained policies on ${cfg.finalEpisodes} held-out episodes per task`);
  const base = await evalCached(h, cfg, p.policy, join(p.runs, 'base-eval.json'));
  const finished: FinishedRun[] = [];
  for (const run of runs) {
    const dir = join(p.runs, run.name);
    const metrics = finishedMetrics(p, run);
    if (!metrics) throw new Error(`${dir}: trained, but not finished`);
    const final = await evalCached(h, cfg, join(dir, 'policy.onnx'), join(dir, 'final-eval.json'));
    finished.push({ mode: run.mode, seed: run.seed, metrics, final, curve: curveOf(metrics) });
  }
  const rows = finished.map((r) => speedupRow(scene, cfg, base, finished, r));
  const curves = finished.map((r) => ({ mode: r.mode, seed: r.seed, points: r.curve }));
  return {
    format: 'wmrl-speedup/2',
    config: cfg,
    policy: p.policy,
    world_model: p.worldModel,
    base: splitResults(scene, cfg, base, base),
    runs: withFits(rows, curves, cfg.evalEpisodes * cfg.tasks.length),
    curves,
  };
}
export type SpeedupReport = Awaited<ReturnType<typeof runSpeedup>>;

/** A finished (mode, seed) run: its metrics, its final evaluation, its curve. */
interface FinishedRun {
  mode: Mode;
  seed: number;
  metrics: MetricLine[];
  final: PolicyResult;
  curve: CurvePoint[];
}

/** The report's row of run r without its speedup (withFits adds it): cost, time, final results, the
 *  paired difference to real of its seed, and real's cost over r's at their ends. */
function speedupRow(
  scene: Scene,
  cfg: SpeedupConfig,
  base: PolicyResult,
  runs: readonly FinishedRun[],
  r: FinishedRun,
) {
  const real = runs.find((x) => x.mode === 'real' && x.seed === r.seed)!;
  const last = (x: FinishedRun) => x.metrics.at(-1)!;
  const seconds = (x: FinishedRun) => x.metrics.reduce((s, m) => s + trainSeconds(m), 0);
  const outcomes = (x: FinishedRun) => cfg.tasks.flatMap((t) => x.final.outcomes[t]);
  const groups = (sumMetric(r.metrics, 'groups/anchor') ?? 0) + (sumMetric(r.metrics, 'groups/wm') ?? 0);
  return {
    mode: r.mode,
    seed: r.seed,
    iterations: r.metrics.length,
    train_seconds: seconds(r),
    physics_steps: last(r)['steps/physics'],
    world_model_steps: last(r)['steps/world_model'],
    time: secondsOf(r.metrics),
    final: splitResults(scene, cfg, r.final, base),
    vs_real: paired(outcomes(r), outcomes(real), `${r.mode} seed ${r.seed} vs real`),
    cost_vs_real: {
      wall: ratio(seconds(real), seconds(r)),
      physics: ratio(last(real)['steps/physics'], last(r)['steps/physics']),
    },
    equal_reward_groups: ratio(sumMetric(r.metrics, 'groups/zero_variance'), groups),
    fidelity: fidelitySummary(r.metrics),
  };
}

type Row = {
  mode: string;
  seed: number;
  iterations: number;
  train_seconds: number;
  time: { world_model: number | null };
};

/** Each run's speedups over real of its seed (wall-clock and physics steps, study-speedup.ts) with their
 *  intervals over redraws of every curve point's `episodes`, the wall-clock speedup were world-model
 *  steps free (the ceiling), and its cost per iteration relative to real's; real's own rows get none. */
export function withFits<R extends Row>(
  runs: readonly R[],
  curves: readonly { mode: string; seed: number; points: CurvePoint[] }[],
  episodes: number,
) {
  const trained = (x: { mode: string; seed: number }) =>
    (curves.find((c) => c.mode === x.mode && c.seed === x.seed)?.points ?? []).filter((p) => p.iteration > 0);
  const redraw = { real: binomialRedraw(episodes), run: binomialRedraw(episodes) };
  return runs.map((r) => {
    const real = runs.find((x) => x.mode === 'real' && x.seed === r.seed);
    const on = (axis: 'seconds' | 'physicsSteps') => {
      if (!real || r === real) return null;
      const curve = (c: CurvePoint[]) => ({ x: c.map((p) => p[axis]), y: c.map((p) => p.success) });
      return speedupInterval(curve(trained(real)), curve(trained(r)), redraw, [r.seed, axis === 'seconds' ? 0 : 1]);
    };
    const wall = on('seconds');
    const modelShare = (r.time.world_model ?? 0) / Math.max(1e-9, r.train_seconds);
    const perIteration = (x: R) => x.train_seconds / Math.max(1, x.iterations);
    return {
      ...r,
      speedup_wall: wall,
      speedup_physics: on('physicsSteps'),
      speedup_wall_ceiling: wall?.run_at != null ? wall.real_at / Math.max(1e-9, wall.run_at * (1 - modelShare)) : null,
      iteration_cost_vs_real: real ? perIteration(r) / perIteration(real) : null,
    };
  });
}

/** Mean fidelity per horizon over a run's measurements (lines where it is missing or null left out). */
export function fidelitySummary(metrics: readonly MetricLine[]) {
  const horizons = new Set(
    metrics.flatMap((m) => Object.keys(m)).flatMap((k) => /^fidelity\/(h\d+|whole)\/rank_corr$/.exec(k)?.[1] ?? []),
  );
  return Object.fromEntries(
    [...horizons].map((h) => {
      const key = (s: string) => `fidelity/${h}/${s}` as FidelityKey;
      const measured = metrics.filter((m) => (m as Record<string, unknown>)[key('rank_corr')] != null).length;
      const avg = (s: string) => meanMetric(metrics, key(s));
      return [
        h,
        {
          rank_corr: avg('rank_corr'),
          gain_rank_corr: avg('gain_rank_corr'),
          bias: avg('bias'),
          measurements: measured,
        },
      ];
    }),
  );
}
