// The tabletop episode core shared by every engine: tasks from seeds, the episode book, observations
// (rasterised cameras, proprio, instruction), the verifier's success and score (taskReward of Φ), termination (success, an
// object off the table, the step limit), capture/resetFrom and snapshots. An engine only makes the next
// state (Rapier, a learned ensemble, ...): it implements TabletopEngine.
import type { EnvSpec } from '../core/spec.ts';
import { assertAction } from '../env/action.ts';
import { assertResetEnv, assertStarts, copyBatchObs, inMask, instructionsOf } from '../env/batch.ts';
import { resolveResetSeeds } from '../env/seeds.ts';
import type {
  BatchAction,
  BatchObs,
  BodyPose,
  Branchable,
  Env,
  EnvSnapshot,
  EpisodeStart,
  FrameSource,
  ResetInfo,
  ResetOptions,
  Snapshottable,
  StepOptions,
  StepResult,
} from '../env/types.ts';
import { createRenderer, type Renderer } from '../render/index.ts';
import type { Scene } from '../scene/schema.ts';
import { sampleTask } from '../task/sample.ts';
import { packState, stateSize, unpackState } from '../task/state.ts';
import type { TabletopState, TaskInstance } from '../task/types.ts';
import { offTable, scoreTask, taskReward } from '../task/verify.ts';
import { INSTRUCTION_MAX, PROPRIO } from './spec.ts';

/** Per-slot reward estimates of a learned engine for one step (env-indexed; exact engines return none). */
export interface LearnedReward {
  reward: Float64Array;
  rewardVar: Float64Array;
  progress: Float64Array;
  progressVar: Float64Array;
  /** When set, `progress` is also info.progress (the episode's score) instead of taskReward of the
   *  verifier's Φ of the stepped state: an engine whose progress is finer than Φ's levels. */
  progressIsScore?: boolean;
}

/** The episode facts an engine may read while stepping (its own random draws). */
export interface EpisodeKeys {
  readonly keys: Float64Array;
  /** Steps taken before this one. */
  readonly steps: Int32Array;
}

/** How the next tabletop state is made. Slots are env indices; the core calls these in order. */
export interface TabletopEngine {
  readonly source: 'physics' | 'world-model';
  /** Lays out slots[j] at starts[j], or at tasks[j]'s initial state where starts[j] is null. */
  place(
    slots: readonly number[],
    tasks: readonly TaskInstance[],
    starts: readonly (EpisodeStart | null)[],
  ): Promise<void> | void;
  /** One control step of `slots` under `action`. */
  advance(slots: readonly number[], action: BatchAction, episodes: EpisodeKeys): Promise<LearnedReward | void> | void;
  /** Slot i's state (the engine may reuse the object: read it before the next call). */
  state(i: number): TabletopState;
  /** Slot i's gripper command, 0 open ... 1 closed. */
  grip(i: number): number;
  /** Slot i's arm joint angles. */
  joints(i: number): ArrayLike<number>;
  /** Poses of every moving body of slot i (objects, links, palm, fingers), into `out` when given. */
  poses(i: number, out?: BodyPose[]): BodyPose[];
  /** Slot i's exact copy, for engines whose row is not the whole state. */
  exact?(i: number): Uint8Array;
  snapshot(): unknown;
  restore(data: unknown): void;
  close(): void;
}

export interface TabletopCoreOptions {
  scene: Scene;
  spec: EnvSpec;
  numEnvs: number;
  /** false: image observations stay black (runs that read no pixels, benchmarks). Default true. */
  render?: boolean;
}

interface Book {
  seeds: Int32Array;
  keys: Float64Array;
  steps: Int32Array;
  /** 1 once an episode ended: the env is frozen (same observation, reward 0) until it is reset. */
  done: Uint8Array;
  terminated: Uint8Array;
  truncated: Uint8Array;
  success: Uint8Array;
  progress: Float64Array;
  offTable: Uint8Array;
  images: Uint8Array[];
  proprio: Float32Array;
}

interface CoreSnapshot {
  book: Book;
  tasks: (TaskInstance | null)[];
  engine: unknown;
}

function copyBook(b: Book): Book {
  return {
    seeds: b.seeds.slice(),
    keys: b.keys.slice(),
    steps: b.steps.slice(),
    done: b.done.slice(),
    terminated: b.terminated.slice(),
    truncated: b.truncated.slice(),
    success: b.success.slice(),
    progress: b.progress.slice(),
    offTable: b.offTable.slice(),
    images: b.images.map((x) => x.slice()),
    proprio: b.proprio.slice(),
  };
}

/** A batched tabletop Env over one engine. Capture rows are [flat state, gripper command, 6 joints]
 *  (task/state.ts's layout, then the arm); a row of the flat state alone starts with the gripper open
 *  and the joints solved from home. */
export class TabletopCore<E extends TabletopEngine> implements Env, Snapshottable, FrameSource, Branchable {
  readonly spec: EnvSpec;
  readonly numEnvs: number;
  readonly scene: Scene;
  readonly taskId: string;
  protected readonly engine: E;
  private book: Book;
  private tasks: (TaskInstance | null)[];
  private readonly views: { key: string; renderer: Renderer | null; size: number }[];
  private readonly poseBufs: (BodyPose[] | undefined)[];

  constructor(options: TabletopCoreOptions, engine: E) {
    const { scene, spec, numEnvs } = options;
    if (!Number.isInteger(numEnvs) || numEnvs < 1)
      throw new RangeError(`numEnvs must be a positive integer, got ${numEnvs}`);
    this.spec = spec;
    this.scene = scene;
    this.taskId = spec.id;
    this.numEnvs = numEnvs;
    this.engine = engine;
    const proprio = spec.observation.find((e) => e.name === 'proprio');
    if (proprio?.kind !== 'box' || proprio.shape[0] !== PROPRIO.length)
      throw new Error(`tabletop: spec ${spec.id} has no ${PROPRIO.length}-value "proprio" box`);
    this.views = spec.observation
      .filter((e) => e.kind === 'image')
      .map((e) => ({
        key: e.name,
        renderer: options.render === false ? null : createRenderer(scene, e.name.replace(/^image_/, '')),
        size: e.shape[0] * e.shape[1] * e.shape[2],
      }));
    this.tasks = new Array(numEnvs).fill(null);
    this.poseBufs = new Array(numEnvs).fill(undefined);
    this.book = {
      seeds: new Int32Array(numEnvs).fill(-1),
      keys: new Float64Array(numEnvs).fill(-1),
      steps: new Int32Array(numEnvs),
      done: new Uint8Array(numEnvs),
      terminated: new Uint8Array(numEnvs),
      truncated: new Uint8Array(numEnvs),
      success: new Uint8Array(numEnvs),
      progress: new Float64Array(numEnvs),
      offTable: new Uint8Array(numEnvs),
      images: this.views.map((c) => new Uint8Array(numEnvs * c.size)),
      proprio: new Float32Array(numEnvs * PROPRIO.length),
    };
  }

  /** Starts masked envs at their task's initial state for their seed. */
  async reset(options: ResetOptions = {}): Promise<{ obs: BatchObs; info: ResetInfo }> {
    const seeds = resolveResetSeeds(this.book.seeds, options);
    const slots: number[] = [];
    for (let i = 0; i < this.numEnvs; i++) if (inMask(options.mask, i)) slots.push(i);
    const tasks = slots.map((i) => this.taskOf(seeds[i]));
    await this.engine.place(
      slots,
      tasks,
      slots.map(() => null),
    );
    slots.forEach((i, j) => this.begin(i, tasks[j], options.keys?.[i] ?? seeds[i], 0));
    return this.started();
  }

  async resetFrom(
    slots: readonly number[],
    starts: readonly EpisodeStart[],
  ): Promise<{ obs: BatchObs; info: ResetInfo }> {
    assertStarts(this.numEnvs, this.spec.maxEpisodeSteps, slots, starts);
    const S = stateSize(this.scene.objects.length);
    const tasks = slots.map((_, j) => {
      const { seed, row } = starts[j];
      if (row.length !== S && row.length !== S + 7)
        throw new RangeError(
          `resetFrom: starts[${j}].row has ${row.length} values, ` +
            `expected ${S} (state) or ${S + 7} (state, grip, joints)`,
        );
      return this.taskOf(seed);
    });
    await this.engine.place(slots, tasks, starts);
    slots.forEach((i, j) => this.begin(i, tasks[j], starts[j].key ?? starts[j].seed, starts[j].elapsed));
    return this.started();
  }

  capture(slot: number, options: { exact?: boolean } = {}): EpisodeStart {
    this.check(slot);
    const S = stateSize(this.scene.objects.length);
    const row = new Float64Array(S + 7);
    packState(this.engine.state(slot), row);
    row[S] = this.engine.grip(slot);
    row.set(this.engine.joints(slot), S + 1);
    const b = this.book;
    const start: EpisodeStart = { seed: b.seeds[slot], elapsed: b.steps[slot], key: b.keys[slot], row };
    if (options.exact && this.engine.exact) start.exact = this.engine.exact(slot);
    return start;
  }

  /** Steps the envs in the mask whose episode has not ended; the others keep their state, observation
   *  and flags, with reward 0. */
  async step(action: BatchAction, options: StepOptions = {}): Promise<StepResult> {
    assertAction(this.spec, this.numEnvs, action);
    const n = this.numEnvs;
    const b = this.book;
    const rows: number[] = [];
    for (let i = 0; i < n; i++) {
      if (!inMask(options.mask, i)) continue;
      if (!this.tasks[i]) throw new Error(`${this.spec.id}: step() before env ${i} was reset`);
      if (!b.done[i]) rows.push(i);
    }
    const learned = (await this.engine.advance(rows, action, b)) ?? null;
    const reward = new Float64Array(n);
    for (const i of rows) {
      b.steps[i]++;
      const state = this.engine.state(i);
      this.score(i, state);
      if (learned?.progressIsScore) b.progress[i] = learned.progress[i];
      b.terminated[i] = b.success[i] | b.offTable[i];
      b.truncated[i] = !b.terminated[i] && b.steps[i] >= this.spec.maxEpisodeSteps ? 1 : 0;
      b.done[i] = b.terminated[i] | b.truncated[i];
      reward[i] = b.offTable[i] ? 0 : learned ? learned.reward[i] : b.success[i];
      this.observe(i, state);
    }
    // a learned engine's terms are its ensemble means; an exact engine's, the verifier's own values
    const terms = learned
      ? { success: reward.slice(), progress: learned.progress }
      : { success: Float64Array.from(b.success), progress: b.progress.slice() };
    return {
      obs: this.obs(),
      reward,
      ...(learned && { rewardVar: learned.rewardVar }),
      terminated: b.terminated.slice(),
      truncated: b.truncated.slice(),
      info: {
        source: this.engine.source,
        success: b.success.slice(),
        progress: b.progress.slice(),
        ...(learned && { progressVar: learned.progressVar }),
        terms,
        offTable: b.offTable.slice(),
      },
    };
  }

  /** The state of env i (fresh arrays). */
  state(i: number): TabletopState {
    this.check(i);
    return unpackState(packState(this.engine.state(i)), this.scene.objects.length);
  }

  /** The episode env i is running. */
  task(i: number): TaskInstance {
    this.check(i);
    return this.tasks[i]!;
  }

  /** Control steps taken in env i's current episode. */
  elapsed(i: number): number {
    this.check(i);
    return this.book.steps[i];
  }

  frame(index = 0): BodyPose[] {
    this.check(index);
    return this.engine.poses(index);
  }

  snapshot(): EnvSnapshot {
    const data: CoreSnapshot = { book: copyBook(this.book), tasks: this.tasks.slice(), engine: this.engine.snapshot() };
    return { envId: this.spec.id, numEnvs: this.numEnvs, data };
  }

  restore(snapshot: EnvSnapshot): void {
    if (snapshot.envId !== this.spec.id || snapshot.numEnvs !== this.numEnvs)
      throw new RangeError(
        `snapshot of ${snapshot.envId} x${snapshot.numEnvs} cannot restore ${this.spec.id} x${this.numEnvs}`,
      );
    const d = snapshot.data as CoreSnapshot;
    this.book = copyBook(d.book);
    this.tasks = d.tasks.slice();
    this.engine.restore(d.engine);
  }

  close(): void {
    this.engine.close();
  }

  protected check(i: number): void {
    assertResetEnv(this.spec.id, this.numEnvs, i, this.tasks[i]);
  }

  private taskOf(seed: number): TaskInstance {
    const task = sampleTask(this.scene, this.taskId, seed);
    if (task.instruction.length > INSTRUCTION_MAX)
      throw new RangeError(
        `task ${this.taskId} seed ${seed}: instruction "${task.instruction}" is longer than ${INSTRUCTION_MAX} chars`,
      );
    return task;
  }

  /** Env i starts an episode of `task` (already placed by the engine) `elapsed` steps in. */
  private begin(i: number, task: TaskInstance, key: number, elapsed: number): void {
    const b = this.book;
    this.tasks[i] = task;
    b.seeds[i] = task.seed;
    b.keys[i] = key;
    b.steps[i] = elapsed;
    b.done[i] = 0;
    b.terminated[i] = 0;
    b.truncated[i] = 0;
    const state = this.engine.state(i);
    this.score(i, state);
    this.observe(i, state);
  }

  private started(): { obs: BatchObs; info: ResetInfo } {
    return {
      obs: this.obs(),
      info: { source: this.engine.source, seeds: this.book.seeds.slice(), instruction: instructionsOf(this.tasks) },
    };
  }

  /** Verifier success, score (taskReward of Φ) and the off-table rule for env i's state. */
  private score(i: number, state: TabletopState): void {
    const b = this.book;
    const off = offTable(this.scene, state);
    const score = scoreTask(this.scene, this.tasks[i]!, state);
    b.offTable[i] = off ? 1 : 0;
    b.success[i] = score.success && !off ? 1 : 0;
    b.progress[i] = taskReward(score.progress);
  }

  /** Renders env i's cameras and fills its proprio row from `state`. */
  private observe(i: number, s: TabletopState): void {
    if (this.views.some((c) => c.renderer)) {
      const poses = (this.poseBufs[i] = this.engine.poses(i, this.poseBufs[i]));
      this.views.forEach((c, k) => c.renderer?.render(poses, this.book.images[k], i * c.size));
    }
    const p = this.book.proprio;
    const o = i * PROPRIO.length;
    p[o] = s.eePos[0];
    p[o + 1] = s.eePos[1];
    p[o + 2] = s.eePos[2];
    p[o + 3] = s.eeYaw;
    p[o + 4] = s.fingers[0];
    p[o + 5] = s.fingers[1];
    p[o + 6] = this.engine.grip(i);
  }

  private obs(): BatchObs {
    return copyBatchObs(
      this.views.map((c, k) => [c.key, this.book.images[k]] as const),
      this.book.proprio,
      this.tasks,
    );
  }
}
