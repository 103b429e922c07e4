// The trainer's configuration: one zod schema whose .describe() texts are the --help (CleanRL's Args).
// Defaults are the paper's where it has one; presets override a few fields.
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { formatZodError } from '../core/spec.ts';
import { AdvantageConfigSchema } from './advantages.ts';
import { DebiasConfigSchema } from './debias.ts';
import { DenoiseConfigSchema } from './denoise.ts';
import { StartSelectionSchema } from './starts.ts';
import { HybridConfigSchema } from './hybrid.ts';
import { EvolutionSchema } from './evolution.ts';
import { FrontierSchema } from './frontier.ts';
import { AgentBrewSchema } from './agentbrew.ts';
import { RepeatPenaltySchema } from './repeat.ts';
import type { TrainTask } from './types.ts';

export const DynamicSamplingSchema = z.object({
  enabled: z
    .boolean()
    .default(false)
    .describe('groups whose rewards are all equal stay out of the update (their rows, KL and entropy terms too)'),
  maxExtraGroups: z
    .number()
    .int()
    .min(0)
    .default(4)
    .describe('further world-model groups an iteration may run in place of equal-reward ones'),
});

export const MODES = ['real', 'real-branch', 'wm', 'mix', 'mix+denoise', 'mix+debias', 'wmrl'] as const;
export type Mode = (typeof MODES)[number];

/** What a world-model engine scores rollouts with: phi (the process score, as physics) or shaped. */
export const MODEL_REWARDS = ['phi', 'shaped'] as const;
export type ModelReward = (typeof MODEL_REWARDS)[number];

export const TrainConfigSchema = z
  .object({
    mode: z
      .enum(MODES)
      .default('wmrl')
      .describe(
        'real: every group in physics; real-branch: the groups of mix (same anchors, branch points, horizon), ' +
          'all in physics; wm: every group in the world model; mix: anchors + world model, no correction; ' +
          'mix+denoise, mix+debias, wmrl: with the corrections',
      ),
    iterations: z.number().int().positive().default(100).describe('policy updates'),
    seed: z.number().int().min(0).default(0).describe('every random draw of the run derives from it'),
    groupsPerIteration: z.number().int().positive().default(8).describe('GRPO groups per iteration'),
    groupSize: z
      .number()
      .int()
      .min(2)
      .default(8)
      .describe('rollouts per group (G), all from one start with one instruction'),
    anchorShare: z
      .number()
      .min(0)
      .max(1)
      .default(0.1)
      .describe('share of groups run in physics as anchors (mix modes; at least minAnchors)'),
    minAnchors: z.number().int().min(0).default(1).describe('anchor groups per iteration at least (mix modes)'),
    horizon: z
      .number()
      .int()
      .positive()
      .default(10)
      .describe('steps of a world-model group branched from a real state (and of the segments anchors are graded on)'),
    modelReward: z
      .enum(MODEL_REWARDS)
      .default('phi')
      .describe(
        "tabletop world-model rollouts' reward: phi (the task's few discrete process-score levels, as in " +
          'physics) or shaped (plus a continuous closeness to the next stage); physics rewards stay phi. ' +
          "It must be what the tasks' world models were made with (TrainTask.modelReward)",
      ),
    branchShare: z
      .number()
      .min(0)
      .max(1)
      .default(1)
      .describe(
        'share of world-model groups that branch from real anchor states ' +
          '(the rest run whole episodes from initial states)',
      ),
    branchEvery: z
      .number()
      .int()
      .positive()
      .default(5)
      .describe('anchor states every this many steps become branch points and graded segments'),
    branchPool: z.number().int().positive().default(512).describe('branch points kept (FIFO over recent anchors)'),
    fidelityHorizons: z
      .array(z.number().int().positive())
      .default([5, 10, 20])
      .describe("horizons at which the world model's reward fidelity on anchors is measured"),
    fidelityEvery: z
      .number()
      .int()
      .min(0)
      .default(5)
      .describe('measure that fidelity every this many iterations (0: off); excluded from the training clock'),
    refreshEvery: z
      .number()
      .int()
      .min(0)
      .default(8000)
      .describe('retrain the world model every this many new anchor transitions (0: never)'),
    refreshSteps: z
      .number()
      .int()
      .positive()
      .default(100)
      .describe('world-model optimizer steps per refresh (warm-started)'),
    refreshLr: z.number().positive().default(3e-4).describe('world-model learning rate during a refresh'),
    replayCapacity: z
      .number()
      .int()
      .min(0)
      .default(131072)
      .describe('anchor transitions kept for the refresh, oldest out first, a fifth for validation (0: all)'),
    samplesPerRollout: z
      .number()
      .int()
      .positive()
      .default(12)
      .describe('steps per rollout that enter the loss (uniform reservoir over the rollout)'),
    batch: z
      .number()
      .int()
      .positive()
      .default(64)
      .describe('rows per optimizer step (the last minibatch is padded with weight-0 rows)'),
    epochs: z.number().int().positive().default(1).describe("passes over the iteration's rows"),
    equalRewardRows: z
      .number()
      .gt(0)
      .max(1)
      .default(1)
      .describe(
        'share of the rows of equal-reward groups kept for the update (their advantages are zero: only the ' +
          'KL and entropy terms act on them), each kept row weighted by its inverse',
      ),
    lr: z.number().positive().default(1e-4).describe('AdamW learning rate'),
    weightDecay: z.number().min(0).default(0).describe('AdamW decoupled weight decay'),
    maxGradNorm: z.number().positive().default(1).describe('global gradient-norm clip'),
    clip: z.number().positive().default(0.2).describe('PPO ratio clip epsilon (below 1, and above unless clipHigh)'),
    clipHigh: z
      .number()
      .positive()
      .optional()
      .describe('PPO ratio clip epsilon above 1 (clip-higher: likelier tokens may grow further; absent: clip)'),
    temperature: z
      .number()
      .positive()
      .default(1)
      .describe(
        'sampling temperature of training rollouts (evaluation samples at 1); the loss, its behaviour and ' +
          'reference log-probs score the tempered policy that drew them',
      ),
    klCoef: z.number().min(0).default(0.04).describe('weight of the k3 KL to the reference (base) policy'),
    entropyCoef: z.number().min(0).default(1e-3).describe('entropy bonus'),
    numEnvs: z
      .number()
      .int()
      .positive()
      .default(16)
      .describe('parallel env slots per engine (results do not depend on it)'),
    evalEvery: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe(
        'held-out physics evaluation every this many iterations (0: off; wmrl train sets about 15 per run ' +
          'unless a preset or --config file sets it); excluded from the training clock',
      ),
    evalEpisodes: z.number().int().positive().default(32).describe('held-out episodes per task and evaluation'),
    checkpointEvery: z
      .number()
      .int()
      .positive()
      .default(10)
      .describe('iterations between checkpoints (and after the last)'),
    threads: z.number().int().positive().default(1).describe('onnxruntime intra-op threads'),
    helpers: z
      .number()
      .int()
      .min(0)
      .max(8)
      .default(1)
      .describe("helper threads that run a share of every group's rollouts and of every update (decide no result)"),
    updateShards: z
      .number()
      .int()
      .min(1)
      .max(8)
      .default(2)
      .describe('row slices of every PPO batch, their gradients summed (helpers run all but the first)'),
    debias: DebiasConfigSchema.default(DebiasConfigSchema.parse({})).describe('Online Debiasing'),
    denoise: DenoiseConfigSchema.default(DenoiseConfigSchema.parse({})).describe('Inverse-Variance Denoising'),
    starts: StartSelectionSchema.default(StartSelectionSchema.parse({})).describe(
      "start selection (River's environment filter)",
    ),
    evolution: EvolutionSchema.default(EvolutionSchema.parse({})).describe(
      "environment evolution: starts on the scripted expert's trajectory, generation by generation",
    ),
    frontier: FrontierSchema.default(FrontierSchema.parse({})).describe(
      "frontier starts: each task's start on the scripted expert's trajectory follows its success",
    ),
    dynamicSampling: DynamicSamplingSchema.default(DynamicSamplingSchema.parse({})).describe(
      'dynamic sampling: only groups whose rewards differ enter the update, refilled up to a bound',
    ),
    agentBrew: AgentBrewSchema.default(AgentBrewSchema.parse({})).describe(
      'AgentBrew: hindsight relabelling of failed anchors and PMI credit',
    ),
    repeat: RepeatPenaltySchema.default(RepeatPenaltySchema.parse({})).describe(
      "River's repeat penalty on degenerate rollouts",
    ),
    hybrid: HybridConfigSchema.default(HybridConfigSchema.parse({})).describe(
      'hybrid-environment loss weights (SE-RL; off by default)',
    ),
    advantages: AdvantageConfigSchema.default(AdvantageConfigSchema.parse({})).describe(
      'group standardisation and per-rollout weights',
    ),
  })
  .strict()
  .refine((c) => c.batch % c.updateShards === 0, {
    message: 'updateShards must divide batch',
    path: ['updateShards'],
  })
  .refine((c) => !(c.frontier.enabled && c.evolution.enabled), {
    message: 'frontier and evolution both choose where groups start: enable one',
    path: ['frontier', 'enabled'],
  });
export type TrainConfig = z.output<typeof TrainConfigSchema>;
export type TrainConfigInput = z.input<typeof TrainConfigSchema>;

/** Named starting points; explicit fields override them. */
export const PRESETS: Record<string, TrainConfigInput> = {
  /** Frontier starts whose world-model verdicts move the frontier too, half of the world-model groups
   *  started there (docs/frontier.md: level with environment evolution, and the only setting that keeps
   *  what the base can do late in an episode). */
  default: { frontier: { enabled: true, worldModel: true }, branchShare: 0.5 },
  /** An iteration in seconds on 2 cores: what tests use. */
  smoke: {
    iterations: 3,
    groupsPerIteration: 2,
    groupSize: 4,
    samplesPerRollout: 4,
    batch: 16,
    numEnvs: 8,
    evalEpisodes: 8,
    evalEvery: 0,
    checkpointEvery: 1,
    lr: 1e-3,
  },
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `over` on top of `under`; nested objects (debias, evolution, ...) field by field, arrays replaced. */
function mergeFields(under: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out = { ...under };
  for (const [k, v] of Object.entries(over)) out[k] = isObject(v) && isObject(out[k]) ? mergeFields(out[k], v) : v;
  return out;
}

/** Preset, then file fields, then flags; a wrong field is an InputError naming its path. */
export function resolveConfig(preset: string, ...layers: Record<string, unknown>[]): TrainConfig {
  const base = PRESETS[preset];
  if (!base) throw new InputError(`--preset: unknown preset "${preset}"; valid: ${Object.keys(PRESETS).join(', ')}`);
  const merged = [base, ...layers].reduce<Record<string, unknown>>((acc, layer) => mergeFields(acc, layer), {});
  const parsed = TrainConfigSchema.safeParse(merged);
  if (!parsed.success) throw new InputError(formatZodError(parsed.error, 'train config: '));
  return parsed.data;
}

/** The tasks' world-model engines are made by the caller before the trainer sees the config, so
 *  `modelReward` cannot choose their reward, only state it: an InputError unless every task with a
 *  world model scores with the config's (TrainTask.modelReward, absent: phi). */
export function checkModelReward(cfg: Pick<TrainConfig, 'modelReward'>, tasks: readonly TrainTask[]): void {
  const other = tasks.find((t) => t.makeModel && (t.modelReward ?? 'phi') !== cfg.modelReward);
  if (other)
    throw new InputError(
      `modelReward: the config says "${cfg.modelReward}" but the world model of task ${other.id} scores ` +
        `"${other.modelReward ?? 'phi'}" (make the tasks with the config's modelReward)`,
    );
}

/** Which corrections a mode applies, whether it runs anchors / world-model groups, and whether the groups
 *  besides the anchors run in physics (real-branch). */
export function modeFlags(mode: Mode): {
  anchors: boolean;
  model: boolean;
  branchPhysics: boolean;
  debias: boolean;
  denoise: boolean;
} {
  return {
    anchors: mode !== 'wm',
    model: mode !== 'real' && mode !== 'real-branch',
    branchPhysics: mode === 'real-branch',
    debias: mode === 'mix+debias' || mode === 'wmrl',
    denoise: mode === 'mix+denoise' || mode === 'wmrl',
  };
}
