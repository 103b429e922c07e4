// The speedup experiment (docs/speedup.md): `real`, `wmrl` and the ablations trained on the same seeds, each run
// a `wmrl train` child process (resumable, at most `jobs` at once), then held-out evaluation in physics,
// paired against the base policy, split into seen and reserved object-target pairs. Finished runs and
// evaluations are kept in the runs folder and skipped when the experiment is run again.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { readInputJson } from '../core/input-file.ts';
import { type FidelityKey, type TrainMetrics, trainSeconds } from '../core/metrics.ts';
import { canonicalJson } from '../core/spec.ts';
import { wilson } from '../core/stats.ts';
import { type PolicyResult, comparePolicies, pairedDifference } from '../eval/index.ts';
import type { Scene } from '../scene/index.ts';
import { commitFiles } from '../store/index.ts';
import { sampleTask, splitSeed, usesReservedPair } from '../task/index.ts';
import { MODES, type Mode } from '../trainer/index.ts';
import {
  type CurvePoint,
  type TimeKey,
  TIME,
  curveOf,
  evalCached,
  metricsOf,
  pool,
  runName,
  secondsOf,
  speedupRun,
  trainRun,
} from './speedup-runs.ts';
import { withFits } from './speedup-fit.ts';

export { type CurvePoint, curveOf } from './speedup-runs.ts';

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

export interface SpeedupPaths {
  runs: string;
  report: string;
  policy: string;
  worldModel: string;
  scene?: string;
  bin: string;
  /** Extra flags of every `wmrl train` child (--progress-every). */
  trainArgs?: string[];
}

/** Success and paired difference to the base, overall and on seen / reserved object-target pairs. */
function splitResults(scene: Scene, cfg: SpeedupConfig, run: PolicyResult, base: PolicyResult) {
  const reserved = cfg.tasks.flatMap((t) =>
    Array.from({ length: cfg.finalEpisodes }, (_, k) =>
      usesReservedPair(scene, sampleTask(scene, t, splitSeed(scene, 'heldout', k))),
    ),
  );
  const a = cfg.tasks.flatMap((t) => run.outcomes[t]);
  const b = cfg.tasks.flatMap((t) => base.outcomes[t]);
  const part = (keep: (k: number) => boolean) => {
    const xa = a.filter((_, k) => keep(k));
    const xb = b.filter((_, k) => keep(k));
    const w = wilson(
      xa.reduce((s: number, x) => s + x, 0),
      xa.length,
    );
    return { success: w.rate, ci_low: w.low, ci_high: w.high, episodes: xa.length, vs_base: pairedDifference(xa, xb) };
  };
  return {
    overall: part(() => true),
    seen: part((k) => !reserved[k]),
    reserved: part((k) => reserved[k]),
    per_task: comparePolicies(run, base),
  };
}

/** The first curve point from which on the curve's mean success stays at or above `target` (a noisy
 *  early spike that the curve falls back from does not count), or null. */
export function reach(curve: readonly CurvePoint[], target: number): CurvePoint | null {
  for (let i = 0; i < curve.length; i++) {
    const rest = curve.slice(i);
    if (rest.reduce((s, c) => s + c.success, 0) / rest.length >= target) return curve[i];
  }
  return null;
}

export async function runSpeedup(
  scene: Scene,
  cfg: SpeedupConfig,
  p: SpeedupPaths,
  log: (line: string) => void = () => {},
) {
  if (!cfg.modes.includes('real'))
    throw new InputError('--modes: must include real (the reference the speedup is measured against)');
  stampRuns(cfg, p);

  // 1. every (mode, seed) run, real first so the reference is never the one left unfinished
  const plan = cfg.seeds.flatMap((seed) => cfg.modes.map((mode) => ({ mode, seed })));
  await pool(
    cfg.jobs,
    plan.map(
      ({ mode, seed }) =>
        () =>
          trainRun(p, speedupRun(cfg, mode, seed), log),
    ),
  );

  // 2. final held-out evaluation (paired against the base on the same seeds)
  log(`evaluating the base and ${plan.length} trained policies on ${cfg.finalEpisodes} held-out episodes per task`);
  const base = await evalCached(scene, cfg, p.policy, join(p.runs, 'base-eval.json'));
  const runs: FinishedRun[] = [];
  for (const { mode, seed } of plan) {
    const dir = join(p.runs, runName(mode, seed));
    const metrics = metricsOf(dir);
    const final = await evalCached(scene, cfg, join(dir, 'policy.onnx'), join(dir, 'final-eval.json'));
    runs.push({
      mode,
      seed,
      dir,
      metrics,
      final,
      curve: curveOf(metrics),
      seconds: secondsOf(metrics),
      results: splitResults(scene, cfg, final, base),
    });
  }

  // 3. speedup: each run against real's final success (speedupRow), and fitted with its interval (withFits)
  const table = withFits(
    runs.map((r) => speedupRow(cfg, runs, r)),
    runs.map((r) => ({ mode: r.mode, seed: r.seed, points: r.curve })),
    cfg.evalEpisodes * cfg.tasks.length,
  );
  const report = {
    format: 'wmrl-speedup/1',
    config: cfg,
    policy: p.policy,
    world_model: p.worldModel,
    base: splitResults(scene, cfg, base, base),
    runs: table,
    curves: runs.map((r) => ({ mode: r.mode, seed: r.seed, points: r.curve })),
  };
  return report;
}
export type SpeedupReport = Awaited<ReturnType<typeof runSpeedup>>;

/** A finished (mode, seed) run: its metrics, its final evaluation, its curve and clock. */
interface FinishedRun {
  mode: Mode;
  seed: number;
  dir: string;
  metrics: TrainMetrics[];
  final: PolicyResult;
  curve: CurvePoint[];
  seconds: Record<TimeKey, number>;
  results: ReturnType<typeof splitResults>;
}

/** The report's row of run r: real's final success (the mean of its last three curve points) and the time
 *  r, real included, first reaches it to stay, in training wall-clock and in physics steps. */
function speedupRow(cfg: SpeedupConfig, runs: readonly FinishedRun[], r: FinishedRun) {
  const real = runs.find((x) => x.mode === 'real' && x.seed === r.seed)!;
  // the point before training takes no time
  const trained = (c: readonly CurvePoint[]) => c.filter((x) => x.iteration > 0);
  const tail = trained(real.curve).slice(-3);
  const target = tail.reduce((s, c) => s + c.success, 0) / tail.length;
  const ref = reach(trained(real.curve), target)!;
  const hit = reach(trained(r.curve), target);
  const runSeconds = trainSeconds(r.seconds);
  // the ceiling: the same run if world-model steps cost nothing
  const realSeconds = trainSeconds(real.seconds);
  const vsReal = pairedDifference(
    cfg.tasks.flatMap((t) => r.final.outcomes[t]),
    cfg.tasks.flatMap((t) => real.final.outcomes[t]),
  );
  const free = hit ? (hit.seconds * (runSeconds - r.seconds['time/world_model_s'])) / Math.max(1e-9, runSeconds) : null;
  return {
    mode: r.mode,
    seed: r.seed,
    iterations: r.metrics.length,
    train_seconds: runSeconds,
    physics_steps: r.metrics.at(-1)?.['steps/physics'] ?? 0,
    world_model_steps: r.metrics.at(-1)?.['steps/world_model'] ?? 0,
    time: Object.fromEntries(Object.entries(TIME).map(([name, key]) => [name, r.seconds[key]])),
    final: r.results,
    vs_real: vsReal,
    // from the final evaluations alone: a run that ends at least as high as real reached real's final
    // success no later than its own end
    speedup_wall_at_least: vsReal.diff >= 0 ? realSeconds / Math.max(1e-9, runSeconds) : null,
    speedup_physics_at_least:
      vsReal.diff >= 0
        ? (real.metrics.at(-1)?.['steps/physics'] ?? 0) / Math.max(1, r.metrics.at(-1)?.['steps/physics'] ?? 0)
        : null,
    target,
    reached_at: hit,
    real_reached_at: ref,
    speedup_wall: hit ? ref.seconds / Math.max(1e-9, hit.seconds) : null,
    speedup_physics: hit ? ref.physicsSteps / Math.max(1, hit.physicsSteps) : null,
    speedup_wall_ceiling: free !== null ? ref.seconds / Math.max(1e-9, free) : null,
    equal_reward_groups:
      r.metrics.reduce((s, m) => s + m['groups/zero_variance'], 0) /
      Math.max(
        1,
        r.metrics.reduce((s, m) => s + m['groups/anchor'] + m['groups/wm'], 0),
      ),
    fidelity: fidelitySummary(r.metrics),
  };
}

/** The runs folder's stamp: runs made with other settings must not be mixed in (modes, seeds and jobs may change). */
function stampRuns(cfg: SpeedupConfig, p: SpeedupPaths): void {
  const stamp = join(p.runs, 'experiment.json');
  const identity = (c: SpeedupConfig, policy: string, worldModel: string) =>
    canonicalJson({ config: { ...c, jobs: undefined, modes: undefined, seeds: undefined }, policy, worldModel });
  if (existsSync(stamp)) {
    const prev = readInputJson(
      stamp,
      z.object({ config: SpeedupConfigSchema.partial(), policy: z.string(), worldModel: z.string() }),
      'experiment stamp',
    );
    if (
      identity(SpeedupConfigSchema.parse({ ...prev.config, jobs: 1 }), prev.policy, prev.worldModel) !==
      identity(cfg, p.policy, p.worldModel)
    ) {
      throw new InputError(
        `${stamp}: the runs there were made with another configuration; use another --runs folder or delete it`,
      );
    }
  }
  commitFiles([
    { path: stamp, data: `${JSON.stringify({ config: cfg, policy: p.policy, worldModel: p.worldModel }, null, 2)}\n` },
  ]);
}

/** Mean fidelity per horizon over a run's measurements. */
function fidelitySummary(
  metrics: readonly TrainMetrics[],
): Record<string, { rank_corr: number; gain_rank_corr: number; bias: number; measurements: number }> {
  const out: Record<string, { rank_corr: number; gain_rank_corr: number; bias: number; measurements: number }> = {};
  for (const key of new Set(
    metrics.flatMap((m) => Object.keys(m)).filter((k) => /^fidelity\/(h\d+|whole)\/rank_corr$/.test(k)),
  )) {
    const h = key.split('/')[1] as `h${number}` | 'whole';
    const rows = metrics.filter((m) => key in m);
    const avg = (k: 'rank_corr' | 'gain_rank_corr' | 'bias') =>
      rows.reduce((s, m) => s + m[`fidelity/${h}/${k}` satisfies FidelityKey]!, 0) / rows.length;
    out[h] = {
      rank_corr: avg('rank_corr'),
      gain_rank_corr: avg('gain_rank_corr'),
      bias: avg('bias'),
      measurements: rows.length,
    };
  }
  return out;
}

/** The bin script this package runs its commands with. */
export const WMRL_BIN = resolve(import.meta.dirname, '../../bin/wmrl.mjs');
