// Physics transitions for world-model training: episodes (from run folders or live collection) ->
// flat (features, action values, Δstate) arrays. Episodes are kept whole for open-loop evaluation.
import { actionBins, type EnvSpec } from '../core/spec.ts';
import { readEpisodeFolder } from '../rollout/episode-file.ts';
import type { Scene } from '../scene/schema.ts';
import { stateNames } from '../task/state.ts';
import { type ActionCoder, commandPrior, stateFeatures, type StateLayout } from './features.ts';

/** One recorded episode: (length + 1) packed states and length step-major action token rows. */
export interface EpisodeData {
  taskId: string;
  seed: number;
  policy: string;
  length: number;
  states: Float32Array | Float64Array;
  actions: Int32Array;
}

/** Reads run folders written by `wmrl rollout` or `collect`, checked against the scene and the spec:
 *  states recorded in the scene's layout, tokens within the spec's bins, tasks of the scene, lengths
 *  within their maxEpisodeSteps, values finite (InputError naming the file, record and field). */
export function readEpisodeData(dirs: readonly string[], scene: Scene, spec: Pick<EnvSpec, 'action'>): EpisodeData[] {
  const contract = {
    actions: actionBins(spec),
    states: stateNames(scene.objects.map((o) => o.name)),
    maxSteps: Object.fromEntries(scene.tasks.map((t) => [t.id, t.maxEpisodeSteps])),
  };
  const out: EpisodeData[] = [];
  for (const dir of dirs) {
    const { episodes } = readEpisodeFolder(dir, contract);
    for (const e of episodes)
      out.push({
        taskId: e.task,
        seed: e.seed,
        policy: e.policy,
        length: e.length,
        states: e.states!,
        actions: e.actions,
      });
  }
  return out;
}

/** Flat transition arrays: features [N, F], action values [N, A], Δ targets [N, S] (the residual after
 *  the commanded-step prior, see ActionCoder.prior), plus each row's
 *  packed state (for evaluation). Grows by append (online refresh); arrays may be longer than `count` rows. */
export class TransitionSet {
  feats = new Float32Array(0);
  acts = new Float32Array(0);
  deltas = new Float32Array(0);
  states = new Float64Array(0);
  count = 0;

  constructor(
    readonly layout: StateLayout,
    readonly coder: ActionCoder,
  ) {}

  static fromEpisodes(layout: StateLayout, coder: ActionCoder, episodes: readonly EpisodeData[]): TransitionSet {
    const set = new TransitionSet(layout, coder);
    set.append(episodes);
    return set;
  }

  append(episodes: readonly EpisodeData[]): void {
    const { featureDim: F, stateDim: S } = this.layout;
    const A = this.coder.dim;
    const add = episodes.reduce((n, e) => n + e.length, 0);
    const total = this.count + add;
    // capacity doubles (online refresh appends a few episodes at a time): rows past `count` are unused
    const rows = Math.max(total, 2 * (this.feats.length / F));
    const grow = <T extends Float32Array | Float64Array>(old: T, width: number, make: (n: number) => T): T => {
      if (old.length >= total * width) return old;
      const next = make(rows * width);
      next.set(old.subarray(0, this.count * width));
      return next;
    };
    this.feats = grow(this.feats, F, (n) => new Float32Array(n));
    this.acts = grow(this.acts, A, (n) => new Float32Array(n));
    this.deltas = grow(this.deltas, S, (n) => new Float32Array(n));
    this.states = grow(this.states, S, (n) => new Float64Array(n));
    let r = this.count;
    const prior = new Float64Array(S);
    for (const e of episodes) {
      if (e.states.length !== (e.length + 1) * S)
        throw new RangeError(
          `episode ${e.taskId} seed ${e.seed}: ${e.states.length} state values, expected ${(e.length + 1) * S}`,
        );
      if (e.actions.length !== e.length * A)
        throw new RangeError(
          `episode ${e.taskId} seed ${e.seed}: ${e.actions.length} action tokens, expected ${e.length * A}`,
        );
      for (let t = 0; t < e.length; t++, r++) {
        const held = stateFeatures(this.layout, e.states, t, this.feats, r);
        this.coder.encodeRow(e.actions, t * A, this.acts, r);
        commandPrior(this.layout, this.coder, this.acts, r, held, prior, 0);
        for (let j = 0; j < S; j++) {
          this.states[r * S + j] = e.states[t * S + j];
          this.deltas[r * S + j] = e.states[(t + 1) * S + j] - e.states[t * S + j] - prior[j];
        }
      }
    }
    this.count = total;
  }
}

/** Mean and std of each column of a row-major [n, width] array; std is at least `floor`, and constant
 *  columns get `constant` (1 for inputs; a small value for targets, so a never-changing entry is
 *  predicted as never changing instead of with unit-scale noise). */
export function columnStats(
  data: ArrayLike<number>,
  n: number,
  width: number,
  floor = 1e-6,
  constant = 1,
): { mean: Float32Array; std: Float32Array } {
  const mean = new Float64Array(width);
  const sq = new Float64Array(width);
  for (let i = 0; i < n; i++) for (let j = 0; j < width; j++) mean[j] += data[i * width + j];
  for (let j = 0; j < width; j++) mean[j] /= Math.max(1, n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < width; j++) {
      const d = data[i * width + j] - mean[j];
      sq[j] += d * d;
    }
  const std = new Float32Array(width);
  for (let j = 0; j < width; j++) {
    const s = Math.sqrt(sq[j] / Math.max(1, n));
    std[j] = s === 0 ? constant : Math.max(s, floor);
  }
  return { mean: Float32Array.from(mean), std };
}
