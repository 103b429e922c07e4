// The metrics line of one iteration of the WMRL loop (src/trainer/loop.ts); its schema is TrainMetrics
// in src/core/metrics.ts.
import type { EvalMetrics, FidelityMetrics, InitialEvalMetrics, TrainMetrics } from '../core/metrics.ts';
import type { PolicySample } from './policy-trainer.ts';
import type { RefreshableModel } from './refresh-state.ts';
import type { Span } from './agentbrew.ts';
import { mergeReports } from './debias.ts';
import type { GroupJob, Rollout } from './rollouts.ts';
import type { Iteration, Run } from './run.ts';

/** What groupAdvantages (loop.ts) returns: the batch's rows and what its groups looked like. */
export interface Batch {
  w: number;
  samples: PolicySample[];
  /** Each rollout's rows in `samples` (AgentBrew's trajectories). */
  spans: Span[];
  /** Repeat penalties summed over the rollouts. */
  penalty: number;
  zeroVariance: { anchor: number; model: number };
  threeValued: number;
  debiasChanged: number;
  rowWeight: { anchor: number; model: number };
}

/** What update (loop.ts) returns: the losses summed over the PPO steps, and the first step's logpGap. */
export interface Losses {
  policy: number;
  kl: number;
  entropy: number;
  clipFraction: number;
  logpGap: number;
  steps: number;
}

/** What the steps of an iteration produced, for its metrics line. */
export interface Outcome {
  anchors: readonly GroupJob[];
  models: readonly GroupJob[];
  refreshed: Awaited<ReturnType<RefreshableModel['refresh']>> | null;
  measured: FidelityMetrics;
  batch: Batch;
  /** Anchor rollouts relabelled by AgentBrew. */
  relabelled: number;
  losses: Losses;
  evals: Partial<InitialEvalMetrics & EvalMetrics>;
}

/** The iteration's metrics line: namespaced scalars in the file's key order. A value with nothing to
 *  measure (a mean over no rollouts, a bias before any pair, losses without an optimizer step) is null,
 *  never 0, so that a reader averaging a key over lines skips it. */
export function metricsRow(r: Run, i: Iteration, o: Outcome): TrainMetrics {
  const { state } = r;
  const { batch, losses, refreshed } = o;
  const { clock } = i;
  const all = [...i.rollouts.entries()];
  const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
  const of = (kind: GroupJob['kind'], v: (x: Rollout) => number) =>
    all.filter(([j]) => j.kind === kind).flatMap(([, rs]) => rs.map(v));
  const dr = mergeReports(state.debiasers.map((d) => d.report()));
  const dn = state.denoiser.report();
  const generation = state.evolution.generations(); // one per task
  const perStep = (x: number) => (losses.steps ? x / losses.steps : null);
  const rollouts = all.reduce((n, [, rs]) => n + rs.length, 0);
  const informative = o.anchors.length + o.models.length - batch.zeroVariance.anchor - batch.zeroVariance.model;
  return {
    iteration: i.it + 1,
    ...o.measured,
    ...o.evals,
    'reward/anchor': mean(of('anchor', (x) => x.reward)),
    'reward/wm': mean(of('model', (x) => x.reward)),
    'success/anchor': mean(of('anchor', (x) => +x.success)),
    'success/wm': mean(of('model', (x) => +x.success)),
    'groups/anchor': o.anchors.length,
    'groups/wm': o.models.length,
    'groups/zero_variance': batch.zeroVariance.anchor + batch.zeroVariance.model,
    'groups/zero_variance_anchor': batch.zeroVariance.anchor,
    'groups/zero_variance_wm': batch.zeroVariance.model,
    'groups/informative': informative,
    'groups/refilled': Math.max(0, o.anchors.length + o.models.length - r.cfg.groupsPerIteration),
    'groups/rollouts_per_informative': informative ? rollouts / informative : null,
    'groups/wm_three_valued': batch.threeValued,
    'groups/debias_changed': batch.debiasChanged,
    'hybrid/anchor_weight': batch.rowWeight.anchor,
    'hybrid/wm_weight': batch.rowWeight.model,
    'steps/physics': state.totals.physicsSteps,
    'steps/world_model': state.totals.modelSteps,
    'debias/pairs': dr.pairs,
    'debias/bias_before': dr.biasBefore,
    'debias/bias_after': dr.biasAfter,
    'denoise/w': batch.w,
    'denoise/eta2': dn.eta2,
    'losses/policy': perStep(losses.policy),
    'losses/kl': perStep(losses.kl),
    'losses/entropy': perStep(losses.entropy),
    'losses/clip_fraction': perStep(losses.clipFraction),
    'losses/logp_gap': losses.steps ? losses.logpGap : null,
    'samples/rows': batch.samples.length,
    'evolution/generation': generation.reduce((a, b) => a + b, 0) / generation.length,
    'evolution/level': mean([...o.anchors, ...o.models].filter((j) => !j.horizon).map((j) => j.level ?? 1)),
    'frontier/level': state.frontier.config.enabled ? mean(state.frontier.levels()) : null,
    'agentbrew/relabelled': o.relabelled,
    'repeat/penalty': batch.penalty / Math.max(1, rollouts),
    'groups/branched': o.models.filter((j) => j.branch).length,
    'branch/pool': state.pool.length,
    'refresh/count': state.totals.refreshes,
    'refresh/transitions': refreshed?.transitions ?? 0,
    'refresh/val_mse': refreshed?.bestValMse ?? null,
    'time/physics_s': clock.physics,
    'time/world_model_s': clock.model,
    'time/training_s': clock.training,
    'time/refresh_s': clock.refresh,
    'time/eval_s': clock.eval,
    'time/fidelity_s': clock.fidelity,
    'time/policy_inference_s': clock.policy,
    step: i.it + 1,
  };
}
