import RAPIER from '@dimforge/rapier3d-deterministic-compat';
import type { EnvSpec } from '../core/spec.ts';
import { assertAction } from '../env/action.ts';
import { assertResetEnv, copyBatchObs, instructionsOf } from '../env/batch.ts';
import { resolveResetSeeds } from '../env/seeds.ts';
import type { BatchAction, BatchObs, BodyPose, Env, EnvSnapshot, FrameSource, ResetInfo, ResetOptions, Snapshottable, StepResult } from '../env/types.ts';
import { createRenderer, type Renderer } from '../render/index.ts';
import type { Scene } from '../scene/schema.ts';
import { sampleTask } from '../task/sample.ts';
import type { TabletopState, TaskInstance } from '../task/types.ts';
import { scoreTask } from '../task/verify.ts';
import { binValue } from './actions.ts';
import { RobotRig } from './robot.ts';
import { TabletopSim, type SimSnapshot } from './sim.ts';
import { fixedCameras, INSTRUCTION_MAX, PROPRIO, tabletopSpec } from './spec.ts';

let rapierReady: Promise<typeof RAPIER> | null = null;
/** Rapier's WASM module, initialised once per process. */
export function loadRapier(): Promise<typeof RAPIER> {
  rapierReady ??= RAPIER.init().then(() => RAPIER);
  return rapierReady;
}

export interface TabletopEnvOptions {
  scene: Scene;
  /** A task id of the scene, e.g. "tabletop/push". */
  taskId: string;
  numEnvs: number;
  /** Cameras observed as image_<name> (default: every fixed camera). */
  cameras?: string[];
  /** false: image observations stay black (physics-only runs and benchmarks). Default true. */
  render?: boolean;
}

export async function createTabletopEnv(options: TabletopEnvOptions): Promise<TabletopEnv> {
  return new TabletopEnv(await loadRapier(), options);
}

/** Per-env bookkeeping besides the Rapier world; copied whole into snapshots. */
interface Book {
  seeds: Int32Array;
  steps: Int32Array;
  /** 1 once an episode terminated or truncated: the env is frozen until it is reset. */
  done: Uint8Array;
  terminated: Uint8Array;
  truncated: Uint8Array;
  success: Uint8Array;
  progress: Float64Array;
  /** Last observation rows (one image buffer per camera), so unchanged envs report the same obs. */
  images: Uint8Array[];
  proprio: Float32Array;
}

interface TabletopSnapshotData {
  book: Book;
  tasks: (TaskInstance | null)[];
  sims: (SimSnapshot | null)[];
}

/** The batched Rapier tabletop (design section 5): one world per env, a kinematic IK arm with a
 *  force-limited two-finger gripper, tokenised Cartesian actions, verifier rewards. Envs whose episode
 *  ended are frozen (no simulation, same observation, reward 0) until the caller resets them. */
export class TabletopEnv implements Env, Snapshottable, FrameSource {
  readonly spec: EnvSpec;
  readonly numEnvs: number;
  readonly scene: Scene;
  readonly taskId: string;
  readonly cameras: readonly string[];
  private readonly sims: TabletopSim[];
  private tasks: (TaskInstance | null)[];
  private book: Book;
  private readonly renderers: Renderer[];
  private readonly imageSize: number[];
  private readonly poseBufs: (BodyPose[] | undefined)[];
  /** Bin index -> value tables of the move dimensions, and grip token -> commanded opening. */
  private readonly moveTable: Float64Array;
  private readonly yawTable: Float64Array;
  private readonly gripTable: Float64Array;

  constructor(R: typeof RAPIER, options: TabletopEnvOptions) {
    const { scene, taskId, numEnvs } = options;
    if (!Number.isInteger(numEnvs) || numEnvs < 1) throw new RangeError(`numEnvs must be a positive integer, got ${numEnvs}`);
    this.scene = scene;
    this.taskId = taskId;
    this.numEnvs = numEnvs;
    this.cameras = options.cameras ?? fixedCameras(scene);
    this.spec = tabletopSpec(scene, taskId, this.cameras);
    const rig = new RobotRig(scene.robot);
    this.sims = Array.from({ length: numEnvs }, () => new TabletopSim(R, scene, rig));
    this.tasks = new Array(numEnvs).fill(null);
    this.renderers = options.render === false ? [] : this.cameras.map((c) => createRenderer(scene, c));
    this.imageSize = this.cameras.map((name) => {
      const cam = scene.cameras.find((c) => c.name === name)!;
      return cam.width * cam.height * 3;
    });
    this.poseBufs = new Array(numEnvs).fill(undefined);
    this.book = {
      seeds: new Int32Array(numEnvs).fill(-1),
      steps: new Int32Array(numEnvs),
      done: new Uint8Array(numEnvs),
      terminated: new Uint8Array(numEnvs),
      truncated: new Uint8Array(numEnvs),
      success: new Uint8Array(numEnvs),
      progress: new Float64Array(numEnvs),
      images: this.imageSize.map((size) => new Uint8Array(numEnvs * size)),
      proprio: new Float32Array(numEnvs * PROPRIO.length),
    };
    const c = scene.control;
    this.moveTable = Float64Array.from({ length: c.bins }, (_, t) => binValue(t, c.bins, c.maxTranslation));
    this.yawTable = Float64Array.from({ length: c.bins }, (_, t) => binValue(t, c.bins, c.maxYaw));
    const open = scene.robot.finger.maxOpening;
    this.gripTable = Float64Array.from({ length: c.gripperBins }, (_, g) => open * (1 - g / (c.gripperBins - 1)));
  }

  async reset(options: ResetOptions = {}): Promise<{ obs: BatchObs; info: ResetInfo }> {
    const seeds = resolveResetSeeds(this.book.seeds, options);
    const b = this.book;
    for (let i = 0; i < this.numEnvs; i++) {
      if (options.mask && !options.mask[i]) continue;
      const task = sampleTask(this.scene, this.taskId, seeds[i]);
      if (task.instruction.length > INSTRUCTION_MAX) throw new RangeError(`task ${this.taskId} seed ${seeds[i]}: instruction "${task.instruction}" is longer than ${INSTRUCTION_MAX} chars`);
      this.sims[i].reset(task);
      this.tasks[i] = task;
      b.seeds[i] = seeds[i];
      b.steps[i] = 0;
      b.done[i] = 0;
      b.terminated[i] = 0;
      b.truncated[i] = 0;
      const state = this.sims[i].state();
      const score = scoreTask(this.scene, task, state);
      b.success[i] = score.success ? 1 : 0;
      b.progress[i] = score.progress;
      this.observeRow(i, state);
    }
    return { obs: this.obs(), info: { source: 'physics', seeds: b.seeds.slice(), instruction: instructionsOf(this.tasks) } };
  }

  async step(action: BatchAction): Promise<StepResult> {
    assertAction(this.spec, this.numEnvs, action);
    const n = this.numEnvs;
    const b = this.book;
    const reward = new Float64Array(n);
    const maxSteps = this.spec.maxEpisodeSteps;
    for (let i = 0; i < n; i++) {
      const task = this.tasks[i];
      if (!task) throw new Error(`${this.spec.id}: step() before env ${i} was reset`);
      if (b.done[i]) continue;
      const m = this.moveTable;
      this.sims[i].control(m[action.dx[i]], m[action.dy[i]], m[action.dz[i]], this.yawTable[action.dyaw[i]], this.gripTable[action.grip[i]]);
      b.steps[i]++;
      const state = this.sims[i].state();
      const score = scoreTask(this.scene, task, state);
      b.success[i] = score.success ? 1 : 0;
      b.progress[i] = score.progress;
      reward[i] = score.success ? 1 : 0;
      b.terminated[i] = b.success[i];
      b.truncated[i] = !score.success && b.steps[i] >= maxSteps ? 1 : 0;
      b.done[i] = b.terminated[i] | b.truncated[i];
      this.observeRow(i, state);
    }
    const success = b.success.slice();
    const progress = b.progress.slice();
    return {
      obs: this.obs(),
      reward,
      terminated: b.terminated.slice(),
      truncated: b.truncated.slice(),
      info: { source: 'physics', success, progress, terms: { success: Float64Array.from(success), progress: progress.slice() } },
    };
  }

  /** Renders env i's cameras and fills its proprio row from its current state `s`. */
  private observeRow(i: number, s: TabletopState): void {
    const sim = this.sims[i];
    if (this.renderers.length > 0) {
      const poses = (this.poseBufs[i] = sim.poses(this.poseBufs[i]));
      this.renderers.forEach((r, c) => r.render(poses, this.book.images[c], i * this.imageSize[c]));
    }
    const p = this.book.proprio;
    const o = i * PROPRIO.length;
    p[o] = s.eePos[0]; p[o + 1] = s.eePos[1]; p[o + 2] = s.eePos[2]; p[o + 3] = s.eeYaw;
    p[o + 4] = s.fingers[0]; p[o + 5] = s.fingers[1];
    p[o + 6] = 1 - sim.grip / this.scene.robot.finger.maxOpening;
  }

  private obs(): BatchObs {
    return copyBatchObs(this.cameras.map((name, c) => [`image_${name}`, this.book.images[c]] as const), this.book.proprio, this.tasks);
  }

  private sim(i: number): TabletopSim {
    assertResetEnv(this.spec.id, this.numEnvs, i, this.tasks[i]);
    return this.sims[i];
  }

  /** The privileged state of env i (for verifiers, the expert and world-model data). */
  state(i: number): TabletopState {
    return this.sim(i).state();
  }

  /** The episode env i is running. */
  task(i: number): TaskInstance {
    this.sim(i);
    return this.tasks[i]!;
  }

  /** Env i's arm joint angles and gripper command (0 open ... 1 closed), as its proprio reports it. */
  armState(i: number): { q: Float64Array; grip: number } {
    const sim = this.sim(i);
    return { q: sim.q.slice(), grip: 1 - sim.grip / this.scene.robot.finger.maxOpening };
  }

  /** Control steps taken in env i's current episode. */
  elapsed(i: number): number {
    this.sim(i);
    return this.book.steps[i];
  }

  /** The Rapier world of env i (for benchmarks and debugging; do not keep it across restore()). */
  world(i: number): RAPIER.World {
    return this.sim(i).world!;
  }

  frame(index = 0): BodyPose[] {
    return this.sim(index).poses();
  }

  snapshot(): EnvSnapshot {
    const b = this.book;
    const book: Book = {
      seeds: b.seeds.slice(), steps: b.steps.slice(), done: b.done.slice(), terminated: b.terminated.slice(), truncated: b.truncated.slice(),
      success: b.success.slice(), progress: b.progress.slice(), images: b.images.map((x) => x.slice()), proprio: b.proprio.slice(),
    };
    const data: TabletopSnapshotData = { book, tasks: this.tasks.slice(), sims: this.sims.map((s, i) => (this.tasks[i] ? s.snapshot() : null)) };
    return { envId: this.spec.id, numEnvs: this.numEnvs, data };
  }

  restore(snapshot: EnvSnapshot): void {
    if (snapshot.envId !== this.spec.id || snapshot.numEnvs !== this.numEnvs)
      throw new RangeError(`snapshot of ${snapshot.envId} x${snapshot.numEnvs} cannot restore ${this.spec.id} x${this.numEnvs}`);
    const d = snapshot.data as TabletopSnapshotData;
    const b = d.book;
    this.book = {
      seeds: b.seeds.slice(), steps: b.steps.slice(), done: b.done.slice(), terminated: b.terminated.slice(), truncated: b.truncated.slice(),
      success: b.success.slice(), progress: b.progress.slice(), images: b.images.map((x) => x.slice()), proprio: b.proprio.slice(),
    };
    this.tasks = d.tasks.slice();
    this.sims.forEach((sim, i) => {
      const s = d.sims[i];
      if (s) sim.restore(s);
      else sim.free();
      this.poseBufs[i] = undefined;
    });
  }

  close(): void {
    for (const sim of this.sims) sim.free();
  }
}
