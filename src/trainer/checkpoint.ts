// The trainer's state between iterations (the corrections, step counters, branch pool) and its
// checkpoint: policy, optimizer, reference, the world model's replay and refresh tensors as stores, the
// rest as JSON fields that a zod schema parses back (each correction then parses its own state).
import { join } from 'node:path';
import { z } from 'zod';
import { parseInput } from '../core/input-file.ts';
import { type TrainCheckpoint, loadTrainCheckpoint, saveTrainCheckpoint } from '../nn/checkpoint-file.ts';
import { checkParamsBuilt } from '../nn/model-bytes.ts';
import type { ParamStore } from '../nn/params.ts';
import { type VlaConfig, vlaForwardBuilder } from '../policy/vla.ts';
import { CHECKPOINT_JSON } from '../store/index.ts';
import { Advantages } from './advantages.ts';
import type { TrainConfig } from './config.ts';
import { Debiaser } from './debias.ts';
import { Denoiser } from './denoise.ts';
import { HybridWeights } from './hybrid.ts';
import type { PolicyTrainer } from './policy-trainer.ts';
import {
  ModelStateInfoSchema,
  type RefreshableModel,
  type ModelTrainerState,
  type Replay,
  ReplayInfoSchema,
  packModelState,
  unpackModelState,
} from './refresh-state.ts';
import type { BranchPoint } from './rollouts.ts';
import { StartSelector } from './starts.ts';
import { Evolution } from './evolution.ts';
import { Frontier } from './frontier.ts';

const CHECKPOINT_FORMAT = 'wmrl-train-checkpoint/3';

const count = z.number().int().min(0);
const BranchPointSchema = z.object({
  task: count,
  seed: z.number(),
  elapsed: count,
  row: z.array(z.number()),
  moved: z.boolean().optional(),
  // real-branch: the replay to the point (the exact copy as base64)
  origin: z
    .object({ elapsed: count, row: z.array(z.number()), exact: z.string().optional(), actions: z.array(z.number()) })
    .optional(),
});
type BranchPointJson = z.infer<typeof BranchPointSchema>;

const poolToJson = (pool: readonly BranchPoint[]): BranchPointJson[] =>
  pool.map(({ origin, ...p }) => {
    if (!origin) return p;
    const { exact, actions, ...rest } = origin;
    const bytes = exact && Buffer.from(exact.buffer, exact.byteOffset, exact.byteLength).toString('base64');
    return { ...p, origin: { ...rest, ...(bytes && { exact: bytes }), actions: Array.from(actions) } };
  });

const poolFromJson = (pool: readonly BranchPointJson[]): BranchPoint[] =>
  pool.map(({ origin, ...p }) => {
    if (!origin) return p;
    const { exact, actions, ...rest } = origin;
    const bytes = exact !== undefined && new Uint8Array(Buffer.from(exact, 'base64'));
    return { ...p, origin: { ...rest, ...(bytes && { exact: bytes }), actions: Int32Array.from(actions) } };
  });

/** The checkpoint's JSON fields. */
const CheckpointInfoSchema = z.object({
  debias: z.unknown(),
  denoise: z.unknown(),
  advantages: z.unknown(),
  starts: z.unknown(),
  evolution: z.unknown(),
  frontier: z.unknown(),
  hybrid: z.unknown(),
  // anchorSteps: absent in checkpoints from before the expert's passes counted as physics steps, when
  // physicsSteps counted only rollouts
  totals: z
    .object({ physicsSteps: count, anchorSteps: count.optional(), modelSteps: count, refreshes: count })
    .transform(({ physicsSteps, anchorSteps, modelSteps, refreshes }) => ({
      physicsSteps,
      anchorSteps: anchorSteps ?? physicsSteps,
      modelSteps,
      refreshes,
    })),
  pool: z.array(BranchPointSchema),
  refresh: z.object({ replay: ReplayInfoSchema.nullable(), model: ModelStateInfoSchema.nullable() }),
});

/** What an iteration changes besides the policy and its optimizer. */
export interface TrainState {
  /** One debiaser, or one per task (debias.perTask). */
  debiasers: Debiaser[];
  denoiser: Denoiser;
  advantages: Advantages;
  starts: StartSelector;
  evolution: Evolution;
  frontier: Frontier;
  hybrid: HybridWeights;
  /** Env steps (grading included) and world-model refreshes since the start; anchorSteps: the anchor
   *  rollouts' physics steps (the refresh schedule's count of new transitions). */
  totals: { physicsSteps: number; anchorSteps: number; modelSteps: number; refreshes: number };
  /** FIFO of real states recent anchors visited. */
  pool: BranchPoint[];
}

export function freshState(cfg: TrainConfig, tasks: number): TrainState {
  return {
    debiasers: Array.from({ length: cfg.debias.perTask ? tasks : 1 }, () => new Debiaser(cfg.debias)),
    denoiser: new Denoiser(cfg.denoise),
    advantages: new Advantages(cfg.advantages),
    starts: new StartSelector(cfg.starts, tasks),
    evolution: new Evolution(cfg.evolution, tasks),
    frontier: new Frontier(cfg.frontier, tasks),
    hybrid: new HybridWeights(cfg.hybrid),
    totals: { physicsSteps: 0, anchorSteps: 0, modelSteps: 0, refreshes: 0 },
    pool: [],
  };
}

/** The run's checkpoint. */
export function loadCheckpoint(runDir: string): TrainCheckpoint {
  return loadTrainCheckpoint(runDir, CHECKPOINT_FORMAT);
}

/** Refuses (InputError) a checkpoint whose policy or reference parameters the policy does not build. */
export function checkCheckpointPolicy(runDir: string, ck: TrainCheckpoint, policy: VlaConfig): void {
  const build = vlaForwardBuilder(policy);
  const where = join(runDir, CHECKPOINT_JSON);
  checkParamsBuilt(ck.params, build, `${where} policy`);
  if (ck.extra.reference) checkParamsBuilt(ck.extra.reference, build, `${where} reference`);
}

/** The state a checkpoint holds, the world model's replay, and its trainer state once refreshed. */
export function restoreState(
  runDir: string,
  ck: TrainCheckpoint,
): { state: TrainState; replay: Replay | null; model: ModelTrainerState | null } {
  const info = parseInput(ck.info, CheckpointInfoSchema, `${join(runDir, CHECKPOINT_JSON)} info`);
  const state: TrainState = {
    debiasers: (Array.isArray(info.debias) ? info.debias : [info.debias]).map((d) => Debiaser.fromState(d)),
    denoiser: Denoiser.fromState(info.denoise),
    advantages: Advantages.fromState(info.advantages),
    starts: StartSelector.fromState(info.starts),
    evolution: Evolution.fromState(info.evolution),
    frontier: Frontier.fromState(info.frontier),
    hybrid: HybridWeights.fromState(info.hybrid),
    totals: info.totals,
    pool: poolFromJson(info.pool),
  };
  const replay = info.refresh.replay && { store: ck.extra.replay, info: info.refresh.replay };
  return { state, replay, model: info.refresh.model && unpackModelState(ck.extra, info.refresh.model) };
}

/** Commits the checkpoint after `step` iterations;
 *  `refreshing`: the world model whose trainer state goes in once refreshed. */
export function saveCheckpoint(
  runDir: string,
  o: {
    step: number;
    run: Record<string, unknown>;
    trainer: PolicyTrainer;
    reference: ParamStore;
    state: TrainState;
    refreshing?: RefreshableModel;
  },
): void {
  const s = o.state;
  const replay = o.refreshing?.exportReplay();
  const model = o.refreshing && s.totals.refreshes > 0 ? packModelState(o.refreshing.exportState()) : null;
  const info: z.input<typeof CheckpointInfoSchema> = {
    debias: s.debiasers.map((d) => d.toState()),
    denoise: s.denoiser.toState(),
    advantages: s.advantages.toState(),
    starts: s.starts.toState(),
    evolution: s.evolution.toState(),
    frontier: s.frontier.toState(),
    hybrid: s.hybrid.toState(),
    totals: s.totals,
    pool: poolToJson(s.pool),
    refresh: { replay: replay?.info ?? null, model: model?.info ?? null },
  };
  saveTrainCheckpoint(runDir, CHECKPOINT_FORMAT, {
    step: o.step,
    run: o.run,
    params: o.trainer.params(),
    optimizer: o.trainer.exportOptimizer(),
    extra: { reference: o.reference, ...(replay && { replay: replay.store }), ...model?.stores },
    info,
  });
}
