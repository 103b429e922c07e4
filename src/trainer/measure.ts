// Measurements beside training, off its clock: the world model's reward fidelity against physics on
// the current policy's anchors per horizon, and held-out success in physics.
import type { EvalMetrics, FidelityMetrics, TaskEvalMetrics } from '../core/metrics.ts';
import { mean, spearman, wilson } from '../core/stats.ts';
import type { Env } from '../env/types.ts';
import { type PolicySampler, samplerPolicy } from '../policy/sampler.ts';
import { collectEpisodes, type Episode } from '../rollout/index.ts';
import type { TrainConfig } from './config.ts';
import { type GradedSegment, type Rollout, gradeSegments, recordRow } from './rollouts.ts';
import type { TrainTask } from './types.ts';

/** Fidelity statistics of graded segments: rank correlation of r_wm with r_env and of their gains over
 *  the start's Φ (null where undefined), bias mean(r_wm − r_env), and the share of gains with the same sign. */
export function fidelityStats(segs: readonly GradedSegment[]): {
  pairs: number;
  rankCorr: number | null;
  gainRankCorr: number | null;
  bias: number;
  signAgreement: number;
} {
  const rWm = segs.map((s) => s.rWm);
  const rEnv = segs.map((s) => s.rEnv);
  const gWm = segs.map((s) => s.rWm - s.phi0);
  const gEnv = segs.map((s) => s.rEnv - s.phi0);
  const sign = (x: number) => (Math.abs(x) < 1e-9 ? 0 : Math.sign(x));
  return {
    pairs: segs.length,
    rankCorr: spearman(rWm, rEnv),
    gainRankCorr: spearman(gWm, gEnv),
    bias: segs.length ? mean(rWm) - mean(rEnv) : 0,
    signAgreement: segs.length ? gWm.filter((g, k) => sign(g) === sign(gEnv[k])).length / segs.length : 0,
  };
}

/** The world model graded against physics on this iteration's anchors at each of cfg.fidelityHorizons
 *  (segments every branchEvery steps) and on whole episodes from the initial state ("whole"). */
export async function fidelity(
  tasks: readonly TrainTask[],
  models: readonly Env[],
  groups: readonly { task: number; rollouts: Rollout[] }[],
  cfg: TrainConfig,
): Promise<FidelityMetrics> {
  const out: FidelityMetrics = {};
  const forms = [
    ...cfg.fidelityHorizons.map((h) => ({ name: `h${h}` as const, every: cfg.branchEvery, horizon: h })),
    { name: 'whole' as const, every: Infinity, horizon: Infinity },
  ];
  for (const form of forms) {
    const segs: GradedSegment[] = [];
    for (const g of groups) {
      const { branching } = tasks[g.task];
      if (branching) segs.push(...(await gradeSegments(models[g.task], branching, g.rollouts, form)));
    }
    if (!segs.length) continue;
    const s = fidelityStats(segs);
    const k = `fidelity/${form.name}` as const;
    Object.assign(out, {
      [`${k}/pairs`]: s.pairs,
      [`${k}/rank_corr`]: s.rankCorr,
      [`${k}/gain_rank_corr`]: s.gainRankCorr,
      [`${k}/bias`]: s.bias,
      [`${k}/sign_agreement`]: s.signAgreement,
    } satisfies FidelityMetrics);
  }
  return out;
}

/** Success of the current policy on held-out episodes of every task (physics, temperature 1); with
 *  `record`, each task's first episode comes back with its captured rows. */
export async function evaluate(
  tasks: readonly TrainTask[],
  envs: readonly Env[],
  sampler: PolicySampler,
  cfg: TrainConfig,
  record = false,
): Promise<{ metrics: EvalMetrics; first: (Episode | undefined)[] }> {
  const policy = samplerPolicy(sampler, { seed: cfg.seed, temperature: 1 });
  const results = [];
  const first: (Episode | undefined)[] = [];
  const perTask: TaskEvalMetrics = {};
  for (const [t, env] of envs.entries()) {
    const seeds = Array.from({ length: cfg.evalEpisodes }, (_, k) => tasks[t].evalSeed(k));
    const rows = record && tasks[t].recordedStates ? recordRow(env) : undefined;
    const episodes = await collectEpisodes(env, policy, { seeds, recordState: rows });
    first.push(rows ? episodes[0] : undefined);
    for (const e of episodes) results.push({ success: e.success, progress: e.progress });
    perTask[`eval/success/${tasks[t].id}`] = episodes.filter((e) => e.success).length / episodes.length;
  }
  const w = wilson(results.filter((e) => e.success).length, results.length);
  const metrics = {
    'eval/success': w.rate,
    'eval/ci_low': w.low,
    'eval/ci_high': w.high,
    'eval/progress': mean(results.map((e) => e.progress)),
    'eval/episodes': results.length,
    ...perTask,
  };
  return { metrics, first };
}
