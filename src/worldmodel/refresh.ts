// Online refresh (policy and world model co-evolve): a loaded world model whose dynamics serve the
// WorldModelEnvs, a replay buffer of new physics (anchor) episodes, and warm-started retraining for a
// step count that re-bakes the shared dynamics in place. The API the WMRL trainer calls.
import type { EnvSpec } from '../core/spec.ts';
import type { ParamStore } from '../nn/params.ts';
import type { Scene } from '../scene/schema.ts';
import { TransitionSet, type EpisodeData } from './dataset.ts';
import type { EnsembleDynamics } from './dynamics.ts';
import { loadEnsembleDynamics, saveWmModel, type WmMeta } from './model-file.ts';
import { WorldModelTrainer, type FitResult } from './trainer.ts';

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
  static async open(path: string, scene: Scene, spec: EnvSpec, opts: { val?: readonly EpisodeData[]; batch?: number; seed?: number } = {}): Promise<OnlineWorldModel> {
    const { dynamics, meta, params } = await loadEnsembleDynamics(path, scene, spec);
    const buffer = new TransitionSet(dynamics.layout, dynamics.coder);
    const val = opts.val?.length ? TransitionSet.fromEpisodes(dynamics.layout, dynamics.coder, opts.val) : null;
    const trainer = await WorldModelTrainer.create(buffer, val, { config: dynamics.config, init: params, batch: opts.batch ?? 256, seed: opts.seed ?? 0 });
    return new OnlineWorldModel(dynamics, trainer, meta);
  }

  /** New physics episodes for the next refresh (normalisers stay those of the original training). */
  addEpisodes(episodes: readonly EpisodeData[]): number {
    return this.trainer.addTransitions(episodes);
  }

  get transitions(): number {
    return this.trainer.train.count;
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

  /** Writes the refreshed model (same specs and objects as the one opened). */
  save(path: string, note: string): Promise<void> {
    return saveWmModel(path, this.trainer.config, this.trainer.params(), { objects: this.meta.objects, specs: this.meta.specs, command: `${this.meta.command}; ${note}` }, 0, this.trainer.steps);
  }

  async close(): Promise<void> {
    await this.trainer.close();
    await this.dynamics.close();
  }
}
