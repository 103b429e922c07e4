// The trainer's state between iterations (the corrections, step counters, branch pool and refresh
// buffer) and its checkpoint: policy, optimizer, reference and refresh tensors as stores, the rest as
// JSON fields that a zod schema parses back (each correction then parses its own state).
import { join } from 'node:path';
import { z } from 'zod';
import { parseInput } from '../core/input-file.ts';
import { type TrainCheckpoint, loadTrainCheckpoint, saveTrainCheckpoint } from '../nn/checkpoint-file.ts';
import type { ParamStore } from '../nn/params.ts';
import { CHECKPOINT_JSON } from '../store/index.ts';
import { Advantages } from './advantages.ts';
import type { TrainConfig } from './config.ts';
import { Debiaser } from './debias.ts';
import { Denoiser } from './denoise.ts';
import { HybridWeights } from './hybrid.ts';
import type { PolicyTrainer } from './policy-trainer.ts';
import {
  EpisodeMetaSchema,
  ModelStateInfoSchema,
  type RealEpisode,
  type RefreshableModel,
  type ModelTrainerState,
  packEpisodes,
  packModelState,
  unpackEpisodes,
  unpackModelState,
} from './refresh-state.ts';
import type { BranchPoint } from './rollouts.ts';
import { StartSelector } from './starts.ts';
import { Evolution } from './evolution.ts';

const CHECKPOINT_FORMAT = 'wmrl-train-checkpoint/2';

const count = z.number().int().min(0);
const BranchPointSchema = z.object({
  task: count,
  seed: z.number(),
  elapsed: count,
  row: z.array(z.number()),
  moved: z.boolean().optional(),
});

/** The checkpoint's JSON fields. */
const CheckpointInfoSchema = z.object({
  debias: z.unknown(),
  denoise: z.unknown(),
  advantages: z.unknown(),
  starts: z.unknown(),
  evolution: z.unknown(),
  hybrid: z.unknown(),
  totals: z.object({ physicsSteps: count, modelSteps: count, refreshes: count }),
  pool: z.array(BranchPointSchema),
  refresh: z.object({ episodes: z.array(EpisodeMetaSchema), model: ModelStateInfoSchema.nullable() }),
});

/** What an iteration changes besides the policy and its optimizer. */
export interface TrainState {
  debiaser: Debiaser;
  denoiser: Denoiser;
  advantages: Advantages;
  starts: StartSelector;
  evolution: Evolution;
  hybrid: HybridWeights;
  /** Env steps (grading included) and world-model refreshes since the start. */
  totals: { physicsSteps: number; modelSteps: number; refreshes: number };
  /** FIFO of real states recent anchors visited. */
  pool: BranchPoint[];
  /** Every anchor episode since the start (a fifth held out to choose the world-model weights kept). */
  buffer: (RealEpisode & { validation: boolean })[];
}

export function freshState(cfg: TrainConfig, tasks: number): TrainState {
  return {
    debiaser: new Debiaser(cfg.debias),
    denoiser: new Denoiser(cfg.denoise),
    advantages: new Advantages(cfg.advantages),
    starts: new StartSelector(cfg.starts, tasks),
    evolution: new Evolution(cfg.evolution, tasks),
    hybrid: new HybridWeights(cfg.hybrid),
    totals: { physicsSteps: 0, modelSteps: 0, refreshes: 0 },
    pool: [],
    buffer: [],
  };
}

export function loadCheckpoint(runDir: string): TrainCheckpoint {
  return loadTrainCheckpoint(runDir, CHECKPOINT_FORMAT);
}

/** The state a checkpoint holds, and the world model's trainer state when it had been refreshed. */
export function restoreState(
  runDir: string,
  ck: TrainCheckpoint,
): { state: TrainState; model: ModelTrainerState | null } {
  const info = parseInput(ck.info, CheckpointInfoSchema, `${join(runDir, CHECKPOINT_JSON)} info`);
  const state: TrainState = {
    debiaser: Debiaser.fromState(info.debias),
    denoiser: Denoiser.fromState(info.denoise),
    advantages: Advantages.fromState(info.advantages),
    starts: StartSelector.fromState(info.starts),
    evolution: Evolution.fromState(info.evolution),
    hybrid: HybridWeights.fromState(info.hybrid),
    totals: info.totals,
    pool: info.pool,
    buffer: unpackEpisodes(ck.extra.refreshBuffer, info.refresh.episodes),
  };
  return { state, model: info.refresh.model && unpackModelState(ck.extra, info.refresh.model) };
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
  const episodes = packEpisodes(s.buffer);
  const model = o.refreshing && s.totals.refreshes > 0 ? packModelState(o.refreshing.exportState()) : null;
  const info: z.input<typeof CheckpointInfoSchema> = {
    debias: s.debiaser.toState(),
    denoise: s.denoiser.toState(),
    advantages: s.advantages.toState(),
    starts: s.starts.toState(),
    evolution: s.evolution.toState(),
    hybrid: s.hybrid.toState(),
    totals: s.totals,
    pool: s.pool,
    refresh: { episodes: episodes.meta, model: model?.info ?? null },
  };
  saveTrainCheckpoint(runDir, CHECKPOINT_FORMAT, {
    step: o.step,
    run: o.run,
    params: o.trainer.params(),
    optimizer: o.trainer.exportOptimizer(),
    extra: { reference: o.reference, refreshBuffer: episodes.store, ...model?.stores },
    info,
  });
}
