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
 *  the commanded-step prior, see ActionCoder.prior), in the form the model trains on. Grows by append
 *  (online refresh); with a finite `capacity` it is a FIFO ring: the k-th transition ever added sits in
 *  row k % capacity, so the oldest rows are overwritten first. Arrays may be longer than `count` rows. */
export class TransitionSet {
  feats: Float32Array = new Float32Array(0);
  acts: Float32Array = new Float32Array(0);
  deltas: Float32Array = new Float32Array(0);
  /** Rows in use (at most capacity). */
  count = 0;
  /** Transitions ever added (the ring's write position is written % capacity). */
  written = 0;

  constructor(
    readonly layout: StateLayout,
    readonly coder: ActionCoder,
    private ring = Number.POSITIVE_INFINITY,
  ) {
    checkCapacity(ring);
  }

  get capacity(): number {
    return this.ring;
  }

  /** A new capacity: the newest rows that fit are kept, oldest first (rows then restart at 0). */
  resize(capacity: number): void {
    checkCapacity(capacity);
    const { featureDim: F, stateDim: S } = this.layout;
    const A = this.coder.dim;
    const keep = Math.min(this.count, capacity);
    const oldest = this.written - keep;
    const take = (from: Float32Array, width: number) => {
      const out = new Float32Array(keep * width);
      for (let k = 0; k < keep; k++) {
        const r = (oldest + k) % this.ring;
        out.set(from.subarray(r * width, (r + 1) * width), k * width);
      }
      return out;
    };
    [this.feats, this.acts, this.deltas] = [take(this.feats, F), take(this.acts, A), take(this.deltas, S)];
    this.ring = capacity;
    this.count = this.written = keep;
  }

  static fromEpisodes(layout: StateLayout, coder: ActionCoder, episodes: readonly EpisodeData[]): TransitionSet {
    const set = new TransitionSet(layout, coder);
    set.append(episodes);
    return set;
  }

  /** The rows in use and the write counter (a checkpoint keeps them; `restore` puts them back). */
  rows(): { feats: Float32Array; acts: Float32Array; deltas: Float32Array; written: number } {
    const n = this.count;
    return {
      feats: this.feats.subarray(0, n * this.layout.featureDim),
      acts: this.acts.subarray(0, n * this.coder.dim),
      deltas: this.deltas.subarray(0, n * this.layout.stateDim),
      written: this.written,
    };
  }

  /** Replaces the contents with `rows()` of a set of the same layout and capacity. */
  restore(r: { feats: Float32Array; acts: Float32Array; deltas: Float32Array; written: number }): void {
    const n = Math.min(r.written, this.capacity);
    const { featureDim: F, stateDim: S } = this.layout;
    if (r.feats.length !== n * F || r.acts.length !== n * this.coder.dim || r.deltas.length !== n * S)
      throw new RangeError(`TransitionSet.restore: arrays do not hold ${n} rows of this layout`);
    this.feats = r.feats.slice();
    this.acts = r.acts.slice();
    this.deltas = r.deltas.slice();
    this.count = n;
    this.written = r.written;
  }

  append(episodes: readonly EpisodeData[]): void {
    const { featureDim: F, stateDim: S } = this.layout;
    const A = this.coder.dim;
    const add = episodes.reduce((n, e) => n + e.length, 0);
    const total = Math.min(this.capacity, this.count + add);
    // capacity doubles (online refresh appends a few episodes at a time) up to the ring's size
    const rows = Math.min(this.capacity, Math.max(total, 2 * (this.feats.length / F)));
    const grow = (old: Float32Array, width: number): Float32Array => {
      if (old.length >= total * width) return old;
      const next = new Float32Array(rows * width);
      next.set(old.subarray(0, this.count * width));
      return next;
    };
    this.feats = grow(this.feats, F);
    this.acts = grow(this.acts, A);
    this.deltas = grow(this.deltas, S);
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
      for (let t = 0; t < e.length; t++) {
        const r = this.written++ % this.capacity;
        const held = stateFeatures(this.layout, e.states, t, this.feats, r);
        this.coder.encodeRow(e.actions, t * A, this.acts, r);
        commandPrior(this.layout, this.coder, this.acts, r, held, prior, 0);
        for (let j = 0; j < S; j++) this.deltas[r * S + j] = e.states[(t + 1) * S + j] - e.states[t * S + j] - prior[j];
      }
    }
    this.count = total;
  }
}

function checkCapacity(capacity: number): void {
  if (!(capacity >= 1)) throw new RangeError(`TransitionSet: capacity ${capacity}, expected at least 1`);
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
