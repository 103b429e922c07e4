// One line of a training run's metrics.jsonl: the namespaced scalars the trainer writes after every
// iteration, read by the experiments, the CLI, the server and the viewer. The keys are the file's own;
// readers name them through TrainMetricKey, so renaming one here fails every reader's typecheck.
import { z } from 'zod';

const n = z.number();
/** A value that can have nothing to measure on a line: null there, never 0 (readers skip it). */
const maybe = n.nullable();
const held = (when: string) => ({
  success: n.describe(`held-out success rate ${when}`),
  ci_low: n.describe('its Wilson 95% interval, low end'),
  ci_high: n.describe('its Wilson 95% interval, high end'),
  progress: n.describe('mean process score at the end of the episodes'),
  episodes: n.describe('held-out episodes, all tasks together'),
});
const evalNow = held('after this iteration (every evalEvery iterations)');
const evalBefore = held('of the policy before training (first line only)');

/** Every key but the fidelity family, in the order the trainer writes them. */
const TrainMetricsShape = {
  iteration: n.describe('iterations done (1 on the first line)'),
  'eval_initial/success': evalBefore.success.optional(),
  'eval_initial/ci_low': evalBefore.ci_low.optional(),
  'eval_initial/ci_high': evalBefore.ci_high.optional(),
  'eval_initial/progress': evalBefore.progress.optional(),
  'eval_initial/episodes': evalBefore.episodes.optional(),
  'eval/success': evalNow.success.optional(),
  'eval/ci_low': evalNow.ci_low.optional(),
  'eval/ci_high': evalNow.ci_high.optional(),
  'eval/progress': evalNow.progress.optional(),
  'eval/episodes': evalNow.episodes.optional(),
  'reward/anchor': maybe.describe('mean trajectory reward of the anchor (physics) rollouts (null: none)'),
  'reward/wm': maybe.describe('mean trajectory reward of the world-model rollouts, before debiasing (null: none)'),
  'success/anchor': maybe.describe('success rate of the anchor rollouts (null: none)'),
  'success/wm': maybe.describe('success rate of the world-model rollouts (null: none)'),
  'groups/anchor': n.describe('anchor groups this iteration'),
  'groups/wm': n.describe('world-model groups this iteration'),
  'groups/zero_variance': n.describe('groups whose members all got one reward (no gradient)'),
  'groups/zero_variance_anchor': n.describe('of them, anchor groups'),
  'groups/zero_variance_wm': n.describe('of them, world-model groups'),
  // optional: runs written before them still read
  'groups/informative': n.optional().describe('groups whose rewards differ (those that move the policy)'),
  'groups/refilled': n.optional().describe("dynamic sampling: world-model groups run beyond the iteration's own"),
  'groups/rollouts_per_informative': maybe
    .optional()
    .describe('rollouts run per informative group (null: none informative)'),
  'groups/wm_three_valued': n.describe(
    'world-model groups with at least 3 distinct rewards (the only ones a monotone map changes after z-scoring)',
  ),
  'groups/debias_changed': n
    .optional()
    .describe('world-model groups in which the debias map changed an advantage by more than 0.01 (debias modes)'),
  'hybrid/anchor_weight': n.describe('loss weight of anchor rows'),
  'hybrid/wm_weight': n.describe('loss weight of world-model rows'),
  'steps/physics': n.describe(
    "physics env steps for training since the start (cumulative): rollouts, the expert's passes for evolution's starts, real-branch's replays",
  ),
  'steps/world_model': n.describe('world-model env steps since the start, grading included (cumulative)'),
  'debias/pairs': n.describe('(r_wm, r_env) pairs seen since the start'),
  'debias/bias_before': maybe.describe('mean r_wm − r_env over the pairs kept (null until there are pairs)'),
  'debias/bias_after': maybe.describe('mean f(r_wm) − r_env over the pairs kept (null until there are pairs)'),
  'denoise/w': n.describe('weight of anchor-group advantages (1 when denoising is off)'),
  'denoise/eta2': maybe.describe("EMA of the world model's relative noise η² (null until an anchor group measured it)"),
  'losses/policy': maybe.describe('mean PPO policy loss over the optimizer steps (null: no step, no rows)'),
  'losses/kl': maybe.describe('mean k3 KL to the reference policy'),
  'losses/entropy': maybe.describe('mean joint entropy of the action'),
  'losses/clip_fraction': maybe.describe('mean share of clipped ratios'),
  'losses/logp_gap': maybe.describe('train vs sampler log-prob gap on the first minibatch'),
  'samples/rows': n.describe('rows (sampled steps) in the update'),
  'evolution/generation': n.describe("environment evolution: the tasks' mean generation (0-based; 0 when off)"),
  'evolution/level': maybe.describe(
    "mean share of the expert's trajectory left at this iteration's non-branched group starts (1: initial states; null: none)",
  ),
  'frontier/level': maybe
    .optional()
    .describe("frontier starts: the tasks' mean share of the expert's trajectory left at the frontier (null when off)"),
  'agentbrew/relabelled': n.describe(
    'failed anchor rollouts relabelled with an instruction their final state satisfies',
  ),
  'repeat/penalty': n.describe("mean repeat penalty per rollout (River's process regularisation; 0 when off)"),
  'groups/branched': n.describe('world-model groups started from a real anchor state'),
  'branch/pool': n.describe('branch points kept'),
  'refresh/count': n.describe('world-model refreshes since the start'),
  'refresh/transitions': n.describe("transitions of this iteration's refresh (0: none)"),
  'refresh/val_mse': maybe.describe("best validation MSE of this iteration's refresh (null: none)"),
  'time/physics_s': n.describe('seconds of anchor rollouts'),
  'time/world_model_s': n.describe('seconds of world-model rollouts and anchor grading'),
  'time/training_s': n.describe('seconds of policy updates'),
  'time/refresh_s': n.describe('seconds of world-model refreshes'),
  'time/eval_s': n.describe('seconds of held-out evaluation (off the training clock)'),
  'time/fidelity_s': n.describe('seconds of fidelity measurement (off the training clock)'),
  'time/policy_inference_s': n.describe('seconds of policy inference, part of the physics and world-model times'),
  step: n.describe('the same as iteration (the step axis of generic readers)'),
};

export const FIDELITY_STATS = ['pairs', 'rank_corr', 'gain_rank_corr', 'bias', 'sign_agreement'] as const;
/** The world model's reward fidelity on anchors at horizon h (hN) or over whole episodes (whole). */
export type FidelityKey = `fidelity/${`h${number}` | 'whole'}/${(typeof FIDELITY_STATS)[number]}`;
const FIDELITY_KEY = new RegExp(`^fidelity/(h\\d+|whole)/(${FIDELITY_STATS.join('|')})$`);

/** Held-out success of one task at an evaluation (eval/success/<task>) and before training (eval_initial/...). */
export type TaskEvalMetrics = { [K in `eval/success/${string}` | `eval_initial/success/${string}`]?: number };
const TASK_EVAL_KEY = /^eval(_initial)?\/success\/[a-z0-9][a-z0-9/_-]*$/;

export type TrainMetrics = z.output<z.ZodObject<typeof TrainMetricsShape>> & FidelityMetrics & TaskEvalMetrics;
export type TrainMetricKey = keyof TrainMetrics & string;
export type EvalMetrics = Required<Pick<TrainMetrics, `eval/${keyof typeof evalNow}`>> & TaskEvalMetrics;
export type InitialEvalMetrics = Required<Pick<TrainMetrics, `eval_initial/${keyof typeof evalBefore}`>> &
  TaskEvalMetrics;
/** Rank correlations are null where undefined (fewer than 2 pairs or one side constant). */
export type FidelityMetrics = { [K in FidelityKey]?: number | null };

/** A metrics line: every key above (the eval ones on evaluation lines), fidelity keys on measurement lines,
 *  a task's held-out success on evaluation lines, nothing else. */
export const TrainMetricsSchema = z
  .object(TrainMetricsShape)
  .catchall(maybe)
  .check(
    z.superRefine(
      (row, ctx) => {
        for (const key of Object.keys(row)) {
          if (TASK_EVAL_KEY.test(key)) {
            if (row[key] === null)
              ctx.addIssue({ code: 'custom', path: [key], message: 'a rate, not null', input: null });
          } else if (!(key in TrainMetricsShape) && !FIDELITY_KEY.test(key))
            ctx.addIssue({ code: 'custom', path: [key], message: 'not a training metric', input: row[key] });
          else if (FIDELITY_KEY.test(key) && row[key] === null && !key.endsWith('rank_corr'))
            ctx.addIssue({ code: 'custom', path: [key], message: 'null only for a rank correlation', input: null });
        }
      },
      { when: (p) => typeof p.value === 'object' && p.value !== null },
    ),
  ) as unknown as z.ZodType<TrainMetrics>; // the check narrows the catchall to the two key families
// (it runs also beside a missing key: a renamed one names both)

/** The training clock's keys: evaluation and fidelity measurements are off it. */
export const TRAIN_CLOCK_KEYS = [
  'time/physics_s',
  'time/world_model_s',
  'time/training_s',
  'time/refresh_s',
] as const satisfies readonly TrainMetricKey[];
export type TrainClockKey = (typeof TRAIN_CLOCK_KEYS)[number];

/** Seconds on the training clock of a line (or of sums over lines). */
export function trainSeconds(m: Pick<TrainMetrics, TrainClockKey>): number {
  return m['time/physics_s'] + m['time/world_model_s'] + m['time/training_s'] + m['time/refresh_s'];
}

/** Held-out evaluation keys renamed for the line's before-training evaluation. */
export function initialEval(e: EvalMetrics): InitialEvalMetrics {
  const tasks = Object.entries(e).filter(([k]) => k.startsWith('eval/success/'));
  return {
    ...Object.fromEntries(tasks.map(([k, v]) => [k.replace('eval/', 'eval_initial/'), v])),
    'eval_initial/success': e['eval/success'],
    'eval_initial/ci_low': e['eval/ci_low'],
    'eval_initial/ci_high': e['eval/ci_high'],
    'eval_initial/progress': e['eval/progress'],
    'eval_initial/episodes': e['eval/episodes'],
  };
}
