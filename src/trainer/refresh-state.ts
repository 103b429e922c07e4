// The world-model refresh as the loop sees it: anchor episodes into a bounded replay, warm-started
// retraining on a schedule of physics steps, and its state packed into the run's checkpoint as one unit.
import { z } from 'zod';
import type { OptimizerState } from '../nn/train.ts';
import { ParamStore } from '../nn/params.ts';

/** A physics episode with recorded state rows (the task's `record` layout). */
export interface RealEpisode {
  taskId: string;
  seed: number;
  policy: string;
  length: number;
  states: Float32Array;
  actions: Int32Array;
}

/** What the refreshable world model keeps between refreshes (WorldModelTrainer's TrainerState). */
export interface ModelTrainerState {
  step: number;
  fitStep: number;
  skipped: number;
  bestStep: number;
  bestScore: number | null;
  params: ParamStore;
  optimizer: OptimizerState;
  best: ParamStore;
}

/** A replay as one checkpoint store plus JSON counters (the checkpoint's refresh.replay). */
export interface Replay {
  store: ParamStore;
  info: Record<string, number>;
}

export interface RefreshableModel {
  /** Keeps at most `capacity` anchor transitions (oldest out first; Infinity: all); set before any is added. */
  bound(capacity: number): void;
  addEpisodes(episodes: readonly RealEpisode[], o: { validation: boolean }): number;
  /** The replay in the form the model trains on (the checkpoint's; O(capacity), not O(iterations)). */
  exportReplay(): Replay;
  importReplay(store: ParamStore, info: Record<string, number>): void;
  refresh(o: { steps: number; lr: number }): Promise<{ steps: number; bestValMse: number | null; transitions: number }>;
  exportState(): ModelTrainerState;
  restore(state: ModelTrainerState): Promise<void>;
  /** The current weights and what else a worker needs to rebuild the model (JSON, typed arrays
   *  allowed): world-model groups can run on workers only with it. */
  snapshot?(): Record<string, unknown>;
}

const mapStore = (m: ReadonlyMap<string, Float32Array | Float64Array>, like: ParamStore) => {
  const s = new ParamStore('float32');
  for (const [n, v] of m) s.add(like.info(n), Float32Array.from(v));
  return s;
};

/** The JSON part of a packed model state (the checkpoint's refresh.model). */
export const ModelStateInfoSchema = z.object({
  step: z.number().int().min(0),
  adamStep: z.number().int().min(0),
  bestScore: z.number().nullable(),
});
export type ModelStateInfo = z.output<typeof ModelStateInfoSchema>;

export const ReplayInfoSchema = z.record(z.string(), z.number().int().min(0));

/** The model's state as checkpoint stores plus JSON counters. */
export function packModelState(st: ModelTrainerState): { stores: Record<string, ParamStore>; info: ModelStateInfo } {
  return {
    stores: {
      wmParams: st.params,
      wmBest: st.best,
      wmAdamM: mapStore(st.optimizer.m, st.params),
      wmAdamV: mapStore(st.optimizer.v, st.params),
    },
    info: { step: st.step, adamStep: st.optimizer.step, bestScore: st.bestScore },
  };
}

export function unpackModelState(stores: Record<string, ParamStore>, info: ModelStateInfo): ModelTrainerState {
  const map = (s: ParamStore) => new Map(s.names.map((n) => [n, s.get(n)]));
  return {
    step: info.step,
    fitStep: 0,
    skipped: 0,
    bestStep: -1,
    bestScore: info.bestScore,
    params: stores.wmParams,
    best: stores.wmBest,
    optimizer: { step: info.adamStep, m: map(stores.wmAdamM), v: map(stores.wmAdamV) },
  };
}
