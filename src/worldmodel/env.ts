// WorldModelEnv: the tabletop Env contract stepped by learned dynamics instead of physics. Same spec
// (copied from the physics env), same initial states, same rasterizer and verifiers; reward is the
// ensemble-mean verifier reward with its member variance. Branches from any real state.
import { canonicalJson, type EnvSpec } from '../core/spec.ts';
import { DRAW, drawRng } from '../core/rng.ts';
import { assertAction } from '../env/action.ts';
import { assertResetEnv, copyBatchObs, instructionsOf } from '../env/batch.ts';
import { resolveResetSeeds } from '../env/seeds.ts';
import type { BatchAction, BatchObs, BodyPose, Env, EnvSnapshot, FrameSource, ResetInfo, ResetOptions, Snapshottable, StepResult } from '../env/types.ts';
import { createRenderer, type Renderer } from '../render/index.ts';
import type { Scene } from '../scene/schema.ts';
import { sampleTask } from '../task/sample.ts';
import { packState, stateSize, unpackState, unpackStateInto } from '../task/state.ts';
import type { TabletopState, TaskInstance } from '../task/types.ts';
import { scoreTask } from '../task/verify.ts';
import type { Dynamics } from './dynamics.ts';
import { ArmPoser, IK_ITERS_RESET, IK_ITERS_STEP } from './robot-pose.ts';

export interface WorldModelEnvOptions {
  scene: Scene;
  /** The physics env's spec for this task (copied, never rebuilt here): the contract is identical. */
  spec: EnvSpec;
  numEnvs: number;
  dynamics: Dynamics;
  /** 'mean' steps the ensemble mean; 'member' steps one member per env and step, drawn from `seed`. */
  sampling?: 'mean' | 'member';
  seed?: number;
  /** false: images stay black (dynamics-only runs and benchmarks). Default true. */
  render?: boolean;
  /** close() also closes the dynamics (default true; false when several envs share one). */
  ownsDynamics?: boolean;
}

/** Where one branch starts: a task and a (real or predicted) state, optionally mid-episode. */
export interface BranchStart {
  task: TaskInstance;
  state: TabletopState;
  /** Steps already taken in this episode (counts toward maxEpisodeSteps). Default 0. */
  elapsed?: number;
  /** Gripper command (0 open ... 1 closed) in force at the start. Default 0. */
  grip?: number;
  /** The arm's joint angles, when known (else solved from home when first rendered). */
  q?: ArrayLike<number>;
  /** Key of this rollout's random draws (member sampling); default the task seed. Give every
   *  rollout of a group its own key. */
  key?: number;
}

interface Book {
  seeds: Int32Array; keys: Float64Array; steps: Int32Array; done: Uint8Array; terminated: Uint8Array; truncated: Uint8Array;
  success: Uint8Array; progress: Float64Array; grip: Float64Array; images: Uint8Array[]; proprio: Float32Array;
}

interface WmSnapshotData { book: Book; tasks: (TaskInstance | null)[]; states: Float64Array; q: Float64Array; qLag: Int32Array }

/** Throws when two specs differ (a world-model env must carry exactly the physics env's spec). */
export function assertSameSpec(physics: EnvSpec, model: EnvSpec, what = 'world-model spec'): void {
  const a = canonicalJson(physics);
  const b = canonicalJson(model);
  if (a !== b) throw new Error(`${what} differs from the physics spec of ${physics.id}:\n  physics: ${a}\n  model:   ${b}`);
}

export class WorldModelEnv implements Env, Snapshottable, FrameSource {
  readonly spec: EnvSpec;
  readonly numEnvs: number;
  readonly scene: Scene;
  readonly taskId: string;
  readonly dynamics: Dynamics;
  private readonly poser: ArmPoser;
  private readonly S: number;
  private states: Float64Array;
  private q: Float64Array;
  /** Steps since env i's joint angles were last solved (IK runs lazily, only to render); -1: solve from home. */
  private qLag: Int32Array;
  private tasks: (TaskInstance | null)[];
  private book: Book;
  private readonly cameras: { key: string; renderer: Renderer | null; size: number }[];
  private readonly poseBufs: (BodyPose[] | undefined)[];
  private readonly sampling: 'mean' | 'member';
  private readonly sampleSeed: number;
  private readonly ownsDynamics: boolean;
  private readonly gripBins: number;
  /** Reused while scoring states (scoreTask and the poser keep no reference). */
  private readonly scratch: TabletopState;

  constructor(options: WorldModelEnvOptions) {
    const { scene, spec, numEnvs } = options;
    if (!Number.isInteger(numEnvs) || numEnvs < 1) throw new RangeError(`numEnvs must be a positive integer, got ${numEnvs}`);
    this.spec = structuredClone(spec);
    this.scene = scene;
    this.taskId = spec.id;
    this.numEnvs = numEnvs;
    this.dynamics = options.dynamics;
    this.sampling = options.sampling ?? 'mean';
    this.sampleSeed = options.seed ?? 0;
    this.ownsDynamics = options.ownsDynamics ?? true;
    this.poser = new ArmPoser(scene);
    this.S = stateSize(scene.objects.length);
    this.states = new Float64Array(numEnvs * this.S);
    this.q = new Float64Array(numEnvs * 6);
    this.qLag = new Int32Array(numEnvs);
    this.tasks = new Array(numEnvs).fill(null);
    this.poseBufs = new Array(numEnvs).fill(undefined);
    const grip = spec.action.find((e) => e.name === 'grip');
    if (!grip || grip.kind !== 'discrete') throw new Error(`world model: spec ${spec.id} has no discrete "grip" action`);
    this.gripBins = grip.n;
    this.scratch = unpackState(new Float64Array(this.S), scene.objects.length);
    this.cameras = spec.observation.filter((e) => e.kind === 'image').map((e) => ({
      key: e.name,
      renderer: options.render === false ? null : createRenderer(scene, e.name.replace(/^image_/, '')),
      size: e.shape[0] * e.shape[1] * e.shape[2],
    }));
    const proprio = spec.observation.find((e) => e.name === 'proprio');
    if (!proprio || proprio.kind !== 'box' || proprio.shape[0] !== 7) throw new Error(`world model: spec ${spec.id} has no 7-value "proprio" box`);
    this.book = {
      seeds: new Int32Array(numEnvs).fill(-1), keys: new Float64Array(numEnvs).fill(-1), steps: new Int32Array(numEnvs), done: new Uint8Array(numEnvs), terminated: new Uint8Array(numEnvs),
      truncated: new Uint8Array(numEnvs), success: new Uint8Array(numEnvs), progress: new Float64Array(numEnvs), grip: new Float64Array(numEnvs),
      images: this.cameras.map((c) => new Uint8Array(numEnvs * c.size)), proprio: new Float32Array(numEnvs * 7),
    };
  }

  /** Starts masked envs at the task's initial state for their seed (as physics lays it out). */
  async reset(options: ResetOptions = {}): Promise<{ obs: BatchObs; info: ResetInfo }> {
    const seeds = resolveResetSeeds(this.book.seeds, options);
    const starts: (BranchStart | null)[] = [];
    for (let i = 0; i < this.numEnvs; i++) {
      if (options.mask && !options.mask[i]) { starts.push(null); continue; }
      const task = sampleTask(this.scene, this.taskId, seeds[i]);
      const init = this.poser.initialState(task);
      starts.push({ task, state: init.state, q: init.q, key: options.keys?.[i] });
    }
    return this.resetFrom(starts);
  }

  /** Branching: env i starts from starts[i] (null keeps env i as it is). Many branches may share one
   *  real state; each then follows its own actions. */
  async resetFrom(starts: readonly (BranchStart | null)[]): Promise<{ obs: BatchObs; info: ResetInfo }> {
    if (starts.length !== this.numEnvs) throw new RangeError(`resetFrom: ${starts.length} starts for ${this.numEnvs} envs`);
    const rows: number[] = [];
    const tasks: TaskInstance[] = [];
    const b = this.book;
    starts.forEach((start, i) => {
      if (!start) return;
      if (start.task.taskId !== this.taskId) throw new RangeError(`resetFrom: starts[${i}].task is ${start.task.taskId}, this env runs ${this.taskId}`);
      if (start.state.objects.length !== this.scene.objects.length) throw new RangeError(`resetFrom: starts[${i}].state has ${start.state.objects.length} objects, the scene has ${this.scene.objects.length}`);
      const elapsed = start.elapsed ?? 0;
      if (!Number.isInteger(elapsed) || elapsed < 0 || elapsed >= this.spec.maxEpisodeSteps) throw new RangeError(`resetFrom: starts[${i}].elapsed must be an integer in [0, ${this.spec.maxEpisodeSteps}), got ${elapsed}`);
      packState(start.state, this.states, i * this.S);
      if (start.q) this.q.set(start.q, 6 * i);
      this.qLag[i] = start.q ? 0 : -1;
      this.tasks[i] = start.task;
      b.seeds[i] = start.task.seed;
      b.keys[i] = start.key ?? start.task.seed;
      b.steps[i] = elapsed;
      b.done[i] = 0; b.terminated[i] = 0; b.truncated[i] = 0;
      b.grip[i] = start.grip ?? 0;
      const score = scoreTask(this.scene, start.task, start.state);
      b.success[i] = score.success ? 1 : 0;
      b.progress[i] = score.progress;
      rows.push(i);
      tasks.push(start.task);
    });
    const packed = new Float64Array(rows.length * this.S);
    rows.forEach((row, r) => packed.set(this.states.subarray(row * this.S, (row + 1) * this.S), r * this.S));
    await this.dynamics.start(rows, tasks, packed);
    for (const i of rows) this.observeRow(i);
    return { obs: this.obs(), info: { source: 'world-model', seeds: b.seeds.slice(), instruction: instructionsOf(this.tasks) } };
  }

  async step(action: BatchAction): Promise<StepResult> {
    assertAction(this.spec, this.numEnvs, action);
    const n = this.numEnvs;
    const b = this.book;
    const S = this.S;
    const rows: number[] = [];
    for (let i = 0; i < n; i++) {
      if (!this.tasks[i]) throw new Error(`${this.spec.id}: step() before env ${i} was reset`);
      if (!b.done[i]) rows.push(i);
    }
    const reward = new Float64Array(n);
    const rewardVar = new Float64Array(n);
    const meanProgress = new Float64Array(n);
    const progressVar = new Float64Array(n);
    const pred = await this.dynamics.predict(this.states, action, rows);
    const K = this.dynamics.members;
    const R = rows.length;
    const grip = action.grip;
    rows.forEach((i, r) => {
      const task = this.tasks[i]!;
      let sum = 0, sum2 = 0, prog = 0, prog2 = 0;
      for (let k = 0; k < K; k++) {
        const sc = scoreTask(this.scene, task, unpackStateInto(pred.members, (k * R + r) * S, this.scratch));
        const v = sc.success ? 1 : 0;
        sum += v; sum2 += v * v; prog += sc.progress; prog2 += sc.progress * sc.progress;
      }
      reward[i] = sum / K;
      rewardVar[i] = Math.max(0, sum2 / K - reward[i] * reward[i]);
      meanProgress[i] = prog / K;
      progressVar[i] = Math.max(0, prog2 / K - meanProgress[i] * meanProgress[i]);
      const src = this.sampling === 'member' ? pred.members.subarray((this.pickMember(i) * R + r) * S) : pred.mean.subarray(r * S);
      this.states.set(src.subarray(0, S), i * S);
      b.grip[i] = grip[i] / (this.gripBins - 1); // proprio grip_command: 0 open ... 1 closed
      b.steps[i]++;
      if (this.qLag[i] >= 0) this.qLag[i]++;
      const score = scoreTask(this.scene, task, this.current(i));
      b.success[i] = score.success ? 1 : 0;
      b.progress[i] = score.progress;
      b.terminated[i] = b.success[i];
      b.truncated[i] = !score.success && b.steps[i] >= this.spec.maxEpisodeSteps ? 1 : 0;
      b.done[i] = b.terminated[i] | b.truncated[i];
      this.observeRow(i);
    });
    const success = b.success.slice();
    return {
      obs: this.obs(),
      reward,
      rewardVar,
      terminated: b.terminated.slice(),
      truncated: b.truncated.slice(),
      info: { source: 'world-model', success, progress: b.progress.slice(), progressVar, terms: { success: reward.slice(), progress: meanProgress } },
    };
  }

  /** The member env i follows this step (member sampling): a pure function of (seed, rollout key, step). */
  private pickMember(i: number): number {
    return drawRng(this.sampleSeed, this.book.keys[i], this.book.steps[i], DRAW.worldModelMember).int(this.dynamics.members);
  }

  /** Env i's joint angles for its current state: warm-started IK (IK_ITERS_STEP per step since the
   *  last solve, as physics tracks its target) or a full solve from home for a fresh branch. */
  private joints(i: number, st: TabletopState): Float64Array {
    const q = this.q.subarray(6 * i, 6 * i + 6);
    const lag = this.qLag[i];
    if (lag < 0) q.set(this.poser.homeJoints(st.eePos, st.eeYaw));
    else if (lag > 0) this.poser.kin.solve(q, st.eePos, st.eeYaw, Math.min(IK_ITERS_RESET, IK_ITERS_STEP * lag));
    this.qLag[i] = 0;
    return q;
  }

  /** Env i's state unpacked into the reused scratch state (valid until the next call). */
  private current(i: number): TabletopState {
    return unpackStateInto(this.states, i * this.S, this.scratch);
  }

  private observeRow(i: number): void {
    const st = this.current(i);
    if (this.cameras.some((c) => c.renderer)) {
      const poses = (this.poseBufs[i] = this.poser.poses(this.joints(i, st), st, this.poseBufs[i]));
      this.cameras.forEach((c, k) => c.renderer?.render(poses, this.book.images[k], i * c.size));
    }
    const p = this.book.proprio;
    const o = 7 * i;
    p[o] = st.eePos[0]; p[o + 1] = st.eePos[1]; p[o + 2] = st.eePos[2]; p[o + 3] = st.eeYaw;
    p[o + 4] = st.fingers[0]; p[o + 5] = st.fingers[1]; p[o + 6] = this.book.grip[i];
  }

  private obs(): BatchObs {
    return copyBatchObs(this.cameras.map((c, k) => [c.key, this.book.images[k]] as const), this.book.proprio, this.tasks);
  }

  private check(i: number): void {
    assertResetEnv(this.spec.id, this.numEnvs, i, this.tasks[i]);
  }

  /** The predicted state of env i (fresh arrays). */
  state(i: number): TabletopState {
    this.check(i);
    return unpackState(this.states, this.scene.objects.length, i * this.S);
  }

  task(i: number): TaskInstance {
    this.check(i);
    return this.tasks[i]!;
  }

  elapsed(i: number): number {
    this.check(i);
    return this.book.steps[i];
  }

  frame(index = 0): BodyPose[] {
    this.check(index);
    const st = this.state(index);
    return this.poser.poses(this.joints(index, st), st).map((p) => ({ name: p.name, pos: [...p.pos], quat: [...p.quat] }));
  }

  snapshot(): EnvSnapshot {
    const data: WmSnapshotData = { book: copyBook(this.book), tasks: this.tasks.slice(), states: this.states.slice(), q: this.q.slice(), qLag: this.qLag.slice() };
    return { envId: this.spec.id, numEnvs: this.numEnvs, data };
  }

  /** Exact for learned dynamics (they hold no state); a stateful dynamics is not rewound. */
  restore(snapshot: EnvSnapshot): void {
    if (snapshot.envId !== this.spec.id || snapshot.numEnvs !== this.numEnvs)
      throw new RangeError(`snapshot of ${snapshot.envId} x${snapshot.numEnvs} cannot restore ${this.spec.id} x${this.numEnvs}`);
    const d = snapshot.data as WmSnapshotData;
    this.book = copyBook(d.book);
    this.tasks = d.tasks.slice();
    this.states = d.states.slice();
    this.q = d.q.slice();
    this.qLag = d.qLag.slice();
    this.poseBufs.fill(undefined);
  }

  close(): void {
    if (this.ownsDynamics) void this.dynamics.close();
  }
}

function copyBook(b: Book): Book {
  return {
    seeds: b.seeds.slice(), keys: b.keys.slice(), steps: b.steps.slice(), done: b.done.slice(), terminated: b.terminated.slice(), truncated: b.truncated.slice(),
    success: b.success.slice(), progress: b.progress.slice(), grip: b.grip.slice(), images: b.images.map((x) => x.slice()), proprio: b.proprio.slice(),
  };
}
