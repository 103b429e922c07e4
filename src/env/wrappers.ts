import { inMask } from './batch.ts';
import type { BatchAction, BodyPose, Env, EnvSnapshot, ResetOptions, StepOptions, StepResult } from './types.ts';
import { hasFrame, hasSnapshot } from './types.ts';

/** Base wrapper: forwards everything, and forwards snapshot()/frame() only when the inner env has them
 *  (so the type guards stay truthful). Subclasses add their own state to snapshots via save/load. */
export class Wrapper<E extends Env = Env> implements Env {
  snapshot?: () => EnvSnapshot;
  restore?: (snapshot: EnvSnapshot) => void;
  frame?: (index?: number) => BodyPose[];

  constructor(readonly inner: E) {
    if (hasSnapshot(inner)) {
      this.snapshot = () => ({
        envId: inner.spec.id,
        numEnvs: inner.numEnvs,
        data: { inner: inner.snapshot(), own: this.save() },
      });
      this.restore = (s) => {
        const data = s.data as { inner: EnvSnapshot; own: unknown };
        inner.restore(data.inner);
        this.load(data.own);
      };
    }
    if (hasFrame(inner)) this.frame = (index) => inner.frame(index);
  }

  get spec() {
    return this.inner.spec;
  }
  get numEnvs() {
    return this.inner.numEnvs;
  }
  reset(options?: ResetOptions) {
    return this.inner.reset(options);
  }
  step(action: BatchAction, options?: StepOptions): Promise<StepResult> {
    return this.inner.step(action, options);
  }
  close() {
    this.inner.close();
  }
  protected save(): unknown {
    return null;
  }
  protected load(_own: unknown): void {}
}

/** Truncates episodes after `maxSteps` steps (on top of the env's own limit). */
export class TimeLimit<E extends Env = Env> extends Wrapper<E> {
  private elapsed: Int32Array;

  constructor(
    inner: E,
    readonly maxSteps: number,
  ) {
    super(inner);
    if (!Number.isInteger(maxSteps) || maxSteps < 1)
      throw new RangeError(`TimeLimit: maxSteps must be a positive integer, got ${maxSteps}`);
    this.elapsed = new Int32Array(inner.numEnvs);
  }

  override async reset(options: ResetOptions = {}) {
    const out = await this.inner.reset(options);
    for (let i = 0; i < this.numEnvs; i++) if (inMask(options.mask, i)) this.elapsed[i] = 0;
    return out;
  }

  override async step(action: BatchAction, options: StepOptions = {}) {
    const r = await this.inner.step(action, options);
    const truncated = r.truncated.slice();
    for (let i = 0; i < this.numEnvs; i++) {
      if (!inMask(options.mask, i)) continue;
      this.elapsed[i]++;
      if (this.elapsed[i] >= this.maxSteps && !r.terminated[i]) truncated[i] = 1;
    }
    return { ...r, truncated };
  }

  protected override save() {
    return this.elapsed.slice();
  }
  protected override load(own: unknown) {
    this.elapsed = (own as Int32Array).slice();
  }
}

export interface EpisodeRecord {
  env: number;
  seed: number;
  return: number;
  length: number;
  success: boolean;
  /** Process score at the last step. */
  progress: number;
}

/** Accumulates per-env return and length; finished episodes are appended to `episodes`. Steps after
 *  an episode ended (before the caller resets that env) are not counted. */
export class EpisodeStatistics<E extends Env = Env> extends Wrapper<E> {
  readonly episodes: EpisodeRecord[] = [];
  private returns: Float64Array;
  private lengths: Int32Array;
  private seeds: Int32Array;
  private done: Uint8Array;

  constructor(inner: E) {
    super(inner);
    const n = inner.numEnvs;
    this.returns = new Float64Array(n);
    this.lengths = new Int32Array(n);
    this.seeds = new Int32Array(n);
    this.done = new Uint8Array(n);
  }

  override async reset(options: ResetOptions = {}) {
    const out = await this.inner.reset(options);
    for (let i = 0; i < this.numEnvs; i++) {
      if (!inMask(options.mask, i)) continue;
      this.returns[i] = 0;
      this.lengths[i] = 0;
      this.done[i] = 0;
      this.seeds[i] = out.info.seeds[i];
    }
    return out;
  }

  override async step(action: BatchAction, options: StepOptions = {}) {
    const r = await this.inner.step(action, options);
    for (let i = 0; i < this.numEnvs; i++) {
      if (this.done[i] || !inMask(options.mask, i)) continue;
      this.returns[i] += r.reward[i];
      this.lengths[i]++;
      if (r.terminated[i] || r.truncated[i]) {
        this.done[i] = 1;
        this.episodes.push({
          env: i,
          seed: this.seeds[i],
          return: this.returns[i],
          length: this.lengths[i],
          success: r.info.success[i] === 1,
          progress: r.info.progress[i],
        });
      }
    }
    return r;
  }

  protected override save() {
    return {
      returns: this.returns.slice(),
      lengths: this.lengths.slice(),
      seeds: this.seeds.slice(),
      done: this.done.slice(),
      count: this.episodes.length,
    };
  }

  protected override load(own: unknown) {
    const s = own as { returns: Float64Array; lengths: Int32Array; seeds: Int32Array; done: Uint8Array; count: number };
    this.returns = s.returns.slice();
    this.lengths = s.lengths.slice();
    this.seeds = s.seeds.slice();
    this.done = s.done.slice();
    this.episodes.length = s.count;
  }
}
