// Online refresh (policy and world model co-evolve): a loaded world model whose dynamics serve the
// WorldModelEnvs, a replay buffer of new physics (anchor) episodes, and warm-started retraining for a
// step count that re-bakes the shared dynamics in place. The API the WMRL trainer calls.
import type { EnvSpec } from '../core/spec.ts';
import { ParamStore, paramRows } from '../nn/params.ts';
import type { Scene } from '../scene/schema.ts';
import { InputError } from '../core/errors.ts';
import { TransitionSet, type EpisodeData } from './dataset.ts';
import { assertSameModelSpec, WorldModelEnv } from './env.ts';
import type { EnsembleDynamics } from './dynamics.ts';
import { loadEnsembleDynamics, saveWmModel, type WmMeta } from './model-file.ts';
import { VAL_ROWS, WorldModelTrainer, type FitResult, type TrainerState } from './trainer.ts';

export interface RefreshResult extends FitResult {
  /** Transitions in the refresh buffer when the refresh ran. */
  transitions: number;
}

export class OnlineWorldModel {
  private constructor(
    /** Shared with every WorldModelEnv built on it: refresh() updates it in place. */
    readonly dynamics: EnsembleDynamics,
    private readonly trainer: WorldModelTrainer,
    private readonly meta: WmMeta,
  ) {}

  /** Opens a trained model; `val` episodes (physics) pick the weights kept after each refresh. */
  static async open(
    path: string,
    scene: Scene,
    spec: EnvSpec,
    opts: { val?: readonly EpisodeData[]; batch?: number; seed?: number } = {},
  ): Promise<OnlineWorldModel> {
    const { dynamics, meta, params } = await loadEnsembleDynamics(path, scene, spec);
    const buffer = new TransitionSet(dynamics.layout, dynamics.coder);
    const val = TransitionSet.fromEpisodes(dynamics.layout, dynamics.coder, opts.val ?? []);
    const trainer = await WorldModelTrainer.create(buffer, val, {
      config: dynamics.config,
      init: params,
      batch: opts.batch ?? 256,
      seed: opts.seed ?? 0,
    });
    return new OnlineWorldModel(dynamics, trainer, meta);
  }

  /** New physics episodes for the next refresh (normalisers stay those of the original training), or
   *  with `validation` for choosing the weights kept. State rows may carry extra columns after the
   *  dynamics state (e.g. arm joints); they are dropped. Returns the transitions added. */
  addEpisodes(episodes: readonly EpisodeData[], o: { validation?: boolean } = {}): number {
    const S = this.dynamics.layout.stateDim;
    const trimmed = episodes.map((e) => {
      const width = e.states.length / (e.length + 1);
      if (width === S) return e;
      const states = new Float32Array((e.length + 1) * S);
      for (let t = 0; t <= e.length; t++) states.set(e.states.subarray(t * width, t * width + S), t * S);
      return { ...e, states };
    });
    if (!o.validation) return this.trainer.addTransitions(trimmed);
    this.trainer.val!.append(trimmed);
    return trimmed.reduce((n, e) => n + e.length, 0);
  }

  /** Bounds the replay to `capacity` transitions (Infinity: unbounded), newest kept: a fifth of it, at
   *  most VAL_ROWS, holds validation transitions, so a refresh picks weights on recent anchors. */
  bound(capacity: number): void {
    const val = Number.isFinite(capacity) ? Math.min(VAL_ROWS, Math.max(1, Math.round(capacity / 5))) : capacity;
    if (Number.isFinite(capacity) && capacity - val < 1)
      throw new RangeError(`replay capacity ${capacity}: too small to hold training and validation transitions`);
    this.trainer.train.resize(Number.isFinite(capacity) ? capacity - val : capacity);
    this.trainer.val!.resize(val);
  }

  /** The replay as rows of float32 arrays (empty sets have none) plus their write counters. */
  exportReplay(): { store: ParamStore; info: Record<string, number> } {
    const store = new ParamStore('float32');
    const info: Record<string, number> = {};
    for (const [name, set] of this.sets()) {
      const rows = set.rows();
      info[name] = rows.written;
      for (const key of ['feats', 'acts', 'deltas'] as const)
        if (rows[key].length) store.add(replayEntry(`${name}/${key}`, rows[key].length), rows[key]);
    }
    return { store, info };
  }

  /** Puts back exportReplay()'s rows (after `bound` with the same capacity). */
  importReplay(store: ParamStore, info: Record<string, number>): void {
    const rows = (name: string, key: string) => {
      const n = `${name}/${key}`;
      return store.names.includes(n) ? (store.get(n) as Float32Array) : new Float32Array(0);
    };
    for (const [name, set] of this.sets())
      set.restore({
        feats: rows(name, 'feats'),
        acts: rows(name, 'acts'),
        deltas: rows(name, 'deltas'),
        written: info[name] ?? 0,
      });
  }

  private sets(): [string, TransitionSet][] {
    return [
      ['train', this.trainer.train],
      ['val', this.trainer.val!],
    ];
  }

  /** The refresh trainer's whole state (a checkpoint; the replay is exportReplay's). */
  exportState(): TrainerState {
    return this.trainer.exportState();
  }

  /** Continues from exportState() (with the replay imported) and re-bakes the dynamics. */
  async restore(state: TrainerState): Promise<void> {
    this.trainer.restore({ ...state, fitStep: 0, skipped: 0, bestStep: -1 });
    await this.dynamics.update(this.trainer.params());
  }

  /** A WorldModelEnv for one task on the shared dynamics (refreshes reach it); the task's spec must be
   *  the one the model stored; `reward` as in WorldModelEnvOptions. */
  envFor(scene: Scene, spec: EnvSpec, numEnvs: number, options: { reward?: 'phi' | 'shaped' } = {}): WorldModelEnv {
    const stored = this.meta.specs[spec.id];
    if (!stored)
      throw new InputError(`world model: not trained for ${spec.id} (has ${Object.keys(this.meta.specs).join(', ')})`);
    assertSameModelSpec(spec, stored, 'world model: stored spec');
    return new WorldModelEnv({
      scene,
      spec,
      numEnvs,
      dynamics: this.dynamics,
      ownsDynamics: false,
      reward: options.reward,
    });
  }

  /** Training transitions in the replay, and how many it keeps at most. */
  get transitions(): number {
    return this.trainer.train.count;
  }
  get trainCapacity(): number {
    return this.trainer.train.capacity;
  }

  /** Warm-started training on the buffer for `steps` steps, then the shared dynamics are re-baked with
   *  the kept weights (a no-op with an empty buffer). */
  async refresh(opts: { steps: number; lr?: number; evalEvery?: number }): Promise<RefreshResult> {
    const r = await this.trainer.refresh(opts);
    if (r.steps > 0) await this.dynamics.update(this.trainer.params());
    return { ...r, transitions: this.trainer.train.count };
  }

  params(): ParamStore {
    return this.trainer.params();
  }

  /** The weights the dynamics run now, with the network config and NAME.wm.json (`wmModelFromSnapshot`). */
  snapshot(): Record<string, unknown> {
    const p = this.params();
    return { netConfig: this.trainer.config, meta: this.meta, float: p.float, params: paramRows(p) };
  }

  /** Writes the refreshed model (same specs and objects as the one opened). */
  save(path: string, note: string): Promise<void> {
    return saveWmModel(
      path,
      this.trainer.config,
      this.trainer.params(),
      { objects: this.meta.objects, specs: this.meta.specs, command: `${this.meta.command}; ${note}` },
      0,
      this.trainer.steps,
    );
  }

  async close(): Promise<void> {
    await this.trainer.close();
    await this.dynamics.close();
  }
}

const replayEntry = (name: string, length: number) => ({ name, shape: [length], trainable: false, decay: false });
