// The world-model refresh as the loop sees it: anchor episodes in, warm-started retraining
// on a schedule of physics steps, and its state packed into the run's checkpoint as one unit.
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

export interface RefreshableModel {
  addEpisodes(episodes: readonly RealEpisode[], o: { validation: boolean }): number;
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

/** An episode of the refresh buffer without its tensors (the checkpoint's refresh.episodes). */
export const EpisodeMetaSchema = z.object({
  taskId: z.string(),
  seed: z.number(),
  length: z.number().int().min(0),
  validation: z.boolean(),
});
export type EpisodeMeta = z.output<typeof EpisodeMetaSchema>;

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

/** Episodes as one checkpoint store (tensors per episode) plus their metadata. */
export function packEpisodes(episodes: readonly (RealEpisode & { validation: boolean })[]): {
  store: ParamStore;
  meta: EpisodeMeta[];
} {
  const store = new ParamStore('float32');
  episodes.forEach((e, k) => {
    store.add({ name: `${k}/states`, shape: [e.states.length], trainable: false, decay: false }, e.states);
    store.add(
      { name: `${k}/actions`, shape: [e.actions.length], trainable: false, decay: false },
      Float32Array.from(e.actions),
    );
  });
  return {
    store,
    meta: episodes.map((e) => ({ taskId: e.taskId, seed: e.seed, length: e.length, validation: e.validation })),
  };
}

export function unpackEpisodes(
  store: ParamStore,
  meta: readonly EpisodeMeta[],
): (RealEpisode & { validation: boolean })[] {
  return meta.map((m, k) => ({
    ...m,
    policy: 'anchor',
    states: store.get(`${k}/states`) as Float32Array,
    actions: Int32Array.from(store.get(`${k}/actions`)),
  }));
}
