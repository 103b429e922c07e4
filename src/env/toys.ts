import { Rng } from '../core/rng.ts';
import { EnvSpecSchema, type EnvSpec } from '../core/spec.ts';
import type {
  BatchAction,
  BodyPose,
  Branchable,
  Env,
  EnvSnapshot,
  EpisodeStart,
  ResetInfo,
  ResetOptions,
  StepOptions,
  StepResult,
} from './types.ts';
import { resolveResetSeeds } from './seeds.ts';
import { assertAction } from './action.ts';
import { assertStarts, inMask } from './batch.ts';

// Two small envs with known answers, for trainer tests: an oracle scores 100%, random about 0%.

interface ToyState {
  seeds: Int32Array;
  steps: Int32Array;
  done: Uint8Array;
  /** chain: position; code-lock: digits entered so far. */
  progress: Int32Array;
  /** code-lock: the code each env must enter (codeLength digits per env). */
  codes: Int32Array;
}

abstract class ToyEnv implements Env, Branchable {
  abstract readonly spec: EnvSpec;
  protected state: ToyState;

  constructor(
    readonly numEnvs: number,
    codeLength: number,
  ) {
    if (!Number.isInteger(numEnvs) || numEnvs < 1)
      throw new RangeError(`numEnvs must be a positive integer, got ${numEnvs}`);
    this.state = {
      seeds: new Int32Array(numEnvs).fill(-1),
      steps: new Int32Array(numEnvs),
      done: new Uint8Array(numEnvs),
      progress: new Int32Array(numEnvs),
      codes: new Int32Array(numEnvs * codeLength),
    };
  }

  protected abstract resetOne(i: number, rng: Rng): void;
  protected abstract stepOne(i: number, action: BatchAction): { reward: number; success: boolean; failed: boolean };
  protected abstract observe(): Record<string, Uint8Array | Float32Array | Int32Array | string[]>;
  protected abstract instruction(i: number): string;

  async reset(options: ResetOptions = {}) {
    const seeds = resolveResetSeeds(this.state.seeds, options);
    for (let i = 0; i < this.numEnvs; i++) {
      if (options.mask && !options.mask[i]) continue;
      this.state.seeds[i] = seeds[i];
      this.state.steps[i] = 0;
      this.state.done[i] = 0;
      this.state.progress[i] = 0;
      this.resetOne(i, new Rng(seeds[i]));
    }
    const info: ResetInfo = {
      source: 'toy',
      seeds: this.state.seeds.slice(),
      instruction: Array.from({ length: this.numEnvs }, (_, i) => this.instruction(i)),
    };
    return { obs: this.observe(), info };
  }

  async step(action: BatchAction, options: StepOptions = {}): Promise<StepResult> {
    assertAction(this.spec, this.numEnvs, action);
    const n = this.numEnvs;
    const reward = new Float64Array(n);
    const terminated = new Uint8Array(n);
    const truncated = new Uint8Array(n);
    const success = new Uint8Array(n);
    const progress = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      if (!inMask(options.mask, i)) continue;
      if (!this.state.done[i]) {
        const r = this.stepOne(i, action);
        this.state.steps[i]++;
        reward[i] = r.reward;
        success[i] = r.success ? 1 : 0;
        terminated[i] = r.success || r.failed ? 1 : 0;
        truncated[i] = !terminated[i] && this.state.steps[i] >= this.spec.maxEpisodeSteps ? 1 : 0;
        if (terminated[i] || truncated[i]) this.state.done[i] = 1;
      } else {
        terminated[i] = 1;
      }
      progress[i] = this.progressOf(i);
    }
    return {
      obs: this.observe(),
      reward,
      terminated,
      truncated,
      info: {
        source: 'toy',
        success,
        progress,
        terms: { success: Float64Array.from(success), progress: progress.slice() },
      },
    };
  }

  protected abstract progressOf(i: number): number;

  /** Rows are [progress counter, steps taken]; the rest of an episode follows from its seed. */
  capture(slot: number): EpisodeStart {
    const s = this.state;
    return { seed: s.seeds[slot], elapsed: s.steps[slot], row: [s.progress[slot], s.steps[slot]] };
  }

  async resetFrom(slots: readonly number[], starts: readonly EpisodeStart[]) {
    assertStarts(this.numEnvs, this.spec.maxEpisodeSteps, slots, starts);
    const mask = new Array<boolean>(this.numEnvs).fill(false);
    const seed = Array.from(this.state.seeds);
    slots.forEach((i, j) => {
      mask[i] = true;
      seed[i] = starts[j].seed;
    });
    const out = await this.reset({ seed, mask });
    slots.forEach((i, j) => {
      this.state.progress[i] = starts[j].row[0];
      this.state.steps[i] = starts[j].elapsed;
    });
    return { obs: this.observe(), info: out.info };
  }

  snapshot(): EnvSnapshot {
    const s = this.state;
    return {
      envId: this.spec.id,
      numEnvs: this.numEnvs,
      data: {
        seeds: s.seeds.slice(),
        steps: s.steps.slice(),
        done: s.done.slice(),
        progress: s.progress.slice(),
        codes: s.codes.slice(),
      },
    };
  }

  restore(snapshot: EnvSnapshot): void {
    if (snapshot.envId !== this.spec.id || snapshot.numEnvs !== this.numEnvs)
      throw new Error(
        `snapshot of ${snapshot.envId} x${snapshot.numEnvs} cannot restore ${this.spec.id} x${this.numEnvs}`,
      );
    const d = snapshot.data as ToyState;
    this.state = {
      seeds: d.seeds.slice(),
      steps: d.steps.slice(),
      done: d.done.slice(),
      progress: d.progress.slice(),
      codes: d.codes.slice(),
    };
  }

  close(): void {}
}

/** Walk right along a chain of `length` cells within `maxEpisodeSteps`; oracle: always "right". */
export class ChainEnv extends ToyEnv {
  static readonly LENGTH = 10;
  readonly spec: EnvSpec = EnvSpecSchema.parse({
    id: 'toy/chain',
    observation: [
      { kind: 'box', name: 'position', shape: [1], low: 0, high: 1 },
      { kind: 'discrete', name: 'cell', n: ChainEnv.LENGTH + 1 },
      { kind: 'text', name: 'instruction', maxLength: 32 },
    ],
    action: [{ kind: 'discrete', name: 'move', n: 2 }],
    maxEpisodeSteps: 12,
    rewardTerms: ['success', 'progress'],
  });

  constructor(numEnvs: number) {
    super(numEnvs, 1);
  }

  protected resetOne(i: number, rng: Rng): void {
    this.state.progress[i] = rng.int(2); // start at cell 0 or 1
  }

  protected stepOne(i: number, action: BatchAction) {
    const move = action.move[i] === 1 ? 1 : -1;
    this.state.progress[i] = Math.max(0, this.state.progress[i] + move);
    const success = this.state.progress[i] >= ChainEnv.LENGTH;
    return { reward: success ? 1 : 0, success, failed: false };
  }

  protected progressOf(i: number): number {
    return this.state.progress[i] / ChainEnv.LENGTH;
  }

  protected instruction(): string {
    return 'walk to the end';
  }

  protected observe() {
    const n = this.numEnvs;
    const position = new Float32Array(n);
    const cell = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      position[i] = this.state.progress[i] / ChainEnv.LENGTH;
      cell[i] = this.state.progress[i];
    }
    return { position, cell, instruction: Array.from({ length: n }, () => this.instruction()) };
  }

  frame(index = 0): BodyPose[] {
    return [{ name: 'walker', pos: [this.state.progress[index] * 0.05, 0, 0.02], quat: [0, 0, 0, 1] }];
  }
}

/** Enter the code spelled in the instruction, one digit per step; a wrong digit ends the episode.
 *  Random success is (1/DIGITS)^LENGTH; the oracle reads the instruction. A small image shows the
 *  next digit as a colour, so image observations are exercised too. */
export class CodeLockEnv extends ToyEnv {
  static readonly DIGITS = 6;
  static readonly LENGTH = 4;
  static readonly IMAGE = 8;
  readonly spec: EnvSpec = EnvSpecSchema.parse({
    id: 'toy/code-lock',
    observation: [
      { kind: 'image', name: 'image', shape: [CodeLockEnv.IMAGE, CodeLockEnv.IMAGE, 3] },
      { kind: 'discrete', name: 'entered', n: CodeLockEnv.LENGTH + 1 },
      { kind: 'text', name: 'instruction', maxLength: 32 },
    ],
    action: [{ kind: 'discrete', name: 'digit', n: CodeLockEnv.DIGITS }],
    maxEpisodeSteps: CodeLockEnv.LENGTH + 2,
    rewardTerms: ['success', 'progress'],
  });

  constructor(numEnvs: number) {
    super(numEnvs, CodeLockEnv.LENGTH);
  }

  /** The code env i must enter (the oracle's answer). */
  code(i: number): number[] {
    return Array.from(this.state.codes.subarray(i * CodeLockEnv.LENGTH, (i + 1) * CodeLockEnv.LENGTH));
  }

  protected resetOne(i: number, rng: Rng): void {
    for (let k = 0; k < CodeLockEnv.LENGTH; k++)
      this.state.codes[i * CodeLockEnv.LENGTH + k] = rng.int(CodeLockEnv.DIGITS);
  }

  protected stepOne(i: number, action: BatchAction) {
    const entered = this.state.progress[i];
    const expected = this.state.codes[i * CodeLockEnv.LENGTH + entered];
    if (action.digit[i] !== expected) return { reward: 0, success: false, failed: true };
    this.state.progress[i] = entered + 1;
    const success = entered + 1 === CodeLockEnv.LENGTH;
    return { reward: success ? 1 : 0, success, failed: false };
  }

  protected progressOf(i: number): number {
    return this.state.progress[i] / CodeLockEnv.LENGTH;
  }

  protected instruction(i: number): string {
    return `enter ${this.code(i).join(' ')}`;
  }

  protected observe() {
    const n = this.numEnvs;
    const px = CodeLockEnv.IMAGE * CodeLockEnv.IMAGE;
    const image = new Uint8Array(n * px * 3);
    const entered = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      entered[i] = this.state.progress[i];
      const next =
        entered[i] < CodeLockEnv.LENGTH ? this.state.codes[i * CodeLockEnv.LENGTH + entered[i]] : CodeLockEnv.DIGITS;
      const shade = Math.round((255 * next) / CodeLockEnv.DIGITS);
      image.fill(shade, i * px * 3, (i + 1) * px * 3);
    }
    return { image, entered, instruction: Array.from({ length: n }, (_, i) => this.instruction(i)) };
  }
}
