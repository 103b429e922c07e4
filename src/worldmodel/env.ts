// WorldModelEnv: the tabletop core stepped by learned dynamics instead of physics. Same spec (copied
// from the physics env), same initial states, rasterizer, verifiers and termination; reward is the
// ensemble-mean verifier reward with its member variance. Branches from any real state.
import { canonicalJson, type EnvSpec } from '../core/spec.ts';
import { DRAW, drawRng } from '../core/rng.ts';
import type { BatchAction, BodyPose, EpisodeStart } from '../env/types.ts';
import type { Scene } from '../scene/schema.ts';
import { TabletopCore, type EpisodeKeys, type LearnedReward, type TabletopEngine } from '../tabletop/env.ts';
import { packState, stateSize, unpackState, unpackStateInto } from '../task/state.ts';
import type { TabletopState, TaskInstance } from '../task/types.ts';
import { scoreTask, shapedProgress, taskReward } from '../task/verify.ts';
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
  /** 'phi' (default): the episode's progress is taskReward of the verifier's Φ of the stepped state, its
   *  terms the members' mean of it; 'shaped': both are the members' mean taskReward of shapedProgress
   *  (finer than Φ's levels). */
  reward?: 'phi' | 'shaped';
}

/** Throws when two specs differ (a world-model env must carry exactly the physics env's spec). */
export function assertSameSpec(physics: EnvSpec, model: EnvSpec, what = 'world-model spec'): void {
  const a = canonicalJson(physics);
  const b = canonicalJson(model);
  if (a !== b)
    throw new Error(`${what} differs from the physics spec of ${physics.id}:\n  physics: ${a}\n  model:   ${b}`);
}

/** The spec without its image observations: what a world model is trained for. It predicts states and
 *  renders whatever cameras the spec it runs with names, so a stored spec matches any camera choice. */
export function withoutImages(spec: EnvSpec): EnvSpec {
  return { ...spec, observation: spec.observation.filter((e) => e.kind !== 'image') };
}

/** Throws when a requested spec differs from the one a world model stored, other than in its cameras. */
export function assertSameModelSpec(requested: EnvSpec, stored: EnvSpec, what: string): void {
  assertSameSpec(withoutImages(requested), withoutImages(stored), what);
}

interface EngineSnapshot {
  states: Float64Array;
  q: Float64Array;
  qLag: Int32Array;
  grip: Float64Array;
}

/** The learned engine: flat states stepped by the ensemble; the arm's joints follow the predicted tool
 *  pose by warm-started IK, solved lazily (only to render or capture). */
class EnsembleEngine implements TabletopEngine {
  readonly source = 'world-model';
  private readonly poser: ArmPoser;
  private readonly S: number;
  private states: Float64Array;
  private q: Float64Array;
  /** Steps since env i's joint angles were last solved; -1: solve from home. */
  private qLag: Int32Array;
  private gripCommand: Float64Array;
  private readonly gripBins: number;
  /** Reused while scoring states (scoreTask and the poser keep no reference). */
  private readonly scratch: TabletopState;
  private tasks: (TaskInstance | null)[];

  constructor(
    private readonly scene: Scene,
    spec: EnvSpec,
    numEnvs: number,
    readonly dynamics: Dynamics,
    private readonly sampling: 'mean' | 'member',
    private readonly sampleSeed: number,
    private readonly ownsDynamics: boolean,
    private readonly reward: 'phi' | 'shaped',
  ) {
    this.poser = new ArmPoser(scene);
    this.S = stateSize(scene.objects.length);
    this.states = new Float64Array(numEnvs * this.S);
    this.q = new Float64Array(numEnvs * 6);
    this.qLag = new Int32Array(numEnvs);
    this.gripCommand = new Float64Array(numEnvs);
    this.tasks = new Array(numEnvs).fill(null);
    const grip = spec.action.find((e) => e.name === 'grip');
    if (grip?.kind !== 'discrete') throw new Error(`world model: spec ${spec.id} has no discrete "grip" action`);
    this.gripBins = grip.n;
    this.scratch = unpackState(new Float64Array(this.S), scene.objects.length);
  }

  async place(
    slots: readonly number[],
    tasks: readonly TaskInstance[],
    starts: readonly (EpisodeStart | null)[],
  ): Promise<void> {
    const S = this.S;
    slots.forEach((i, j) => {
      const start = starts[j];
      if (start) {
        this.states.set(Array.prototype.slice.call(start.row, 0, S), i * S);
        const armed = start.row.length >= S + 7;
        this.gripCommand[i] = armed ? start.row[S] : 0;
        if (armed) this.q.set(Array.prototype.slice.call(start.row, S + 1, S + 7), 6 * i);
        this.qLag[i] = armed ? 0 : -1;
      } else {
        const init = this.poser.initialState(tasks[j]);
        packState(init.state, this.states, i * S);
        this.q.set(init.q, 6 * i);
        this.qLag[i] = 0;
        this.gripCommand[i] = 0;
      }
      this.tasks[i] = tasks[j];
    });
    const packed = new Float64Array(slots.length * S);
    slots.forEach((row, r) => packed.set(this.states.subarray(row * S, (row + 1) * S), r * S));
    await this.dynamics.start(slots, tasks, packed);
  }

  async advance(slots: readonly number[], action: BatchAction, episodes: EpisodeKeys): Promise<LearnedReward> {
    const n = this.q.length / 6;
    const S = this.S;
    const out = {
      reward: new Float64Array(n),
      rewardVar: new Float64Array(n),
      progress: new Float64Array(n),
      progressVar: new Float64Array(n),
      // shaped: the members' mean shaped score is the episode's progress (what a rollout is rewarded on)
      progressIsScore: this.reward === 'shaped',
    };
    const pred = await this.dynamics.predict(this.states, action, slots);
    const K = this.dynamics.members;
    const R = slots.length;
    slots.forEach((i, r) => {
      const task = this.tasks[i]!;
      let sum = 0,
        sum2 = 0,
        prog = 0,
        prog2 = 0;
      for (let k = 0; k < K; k++) {
        const st = unpackStateInto(pred.members, (k * R + r) * S, this.scratch);
        const sc = scoreTask(this.scene, task, st);
        const v = sc.success ? 1 : 0;
        const p = taskReward(this.reward === 'shaped' ? shapedProgress(this.scene, task, st) : sc.progress);
        sum += v;
        sum2 += v * v;
        prog += p;
        prog2 += p * p;
      }
      out.reward[i] = sum / K;
      out.rewardVar[i] = Math.max(0, sum2 / K - out.reward[i] * out.reward[i]);
      out.progress[i] = prog / K;
      out.progressVar[i] = Math.max(0, prog2 / K - out.progress[i] * out.progress[i]);
      const member =
        this.sampling === 'member'
          ? drawRng(this.sampleSeed, episodes.keys[i], episodes.steps[i], DRAW.worldModelMember).int(K)
          : -1;
      const src = member >= 0 ? pred.members.subarray((member * R + r) * S) : pred.mean.subarray(r * S);
      this.states.set(src.subarray(0, S), i * S);
      this.gripCommand[i] = action.grip[i] / (this.gripBins - 1);
      if (this.qLag[i] >= 0) this.qLag[i]++;
    });
    return out;
  }

  state(i: number): TabletopState {
    return unpackStateInto(this.states, i * this.S, this.scratch);
  }

  grip(i: number): number {
    return this.gripCommand[i];
  }

  /** Env i's joint angles for its current state: warm-started IK (IK_ITERS_STEP per step since the
   *  last solve, as physics tracks its target) or a full solve from home for a fresh branch. */
  joints(i: number): Float64Array {
    const st = this.state(i);
    const q = this.q.subarray(6 * i, 6 * i + 6);
    const lag = this.qLag[i];
    if (lag < 0) q.set(this.poser.homeJoints(st.eePos, st.eeYaw));
    else if (lag > 0) this.poser.kin.solve(q, st.eePos, st.eeYaw, Math.min(IK_ITERS_RESET, IK_ITERS_STEP * lag));
    this.qLag[i] = 0;
    return q;
  }

  poses(i: number, out?: BodyPose[]): BodyPose[] {
    const q = this.joints(i);
    return this.poser.poses(q, this.state(i), out);
  }

  snapshot(): EngineSnapshot & { tasks: (TaskInstance | null)[] } {
    return {
      states: this.states.slice(),
      q: this.q.slice(),
      qLag: this.qLag.slice(),
      grip: this.gripCommand.slice(),
      tasks: this.tasks.slice(),
    };
  }

  /** Exact for learned dynamics (they hold no state); a stateful dynamics is not rewound. */
  restore(data: unknown): void {
    const d = data as ReturnType<EnsembleEngine['snapshot']>;
    this.states = d.states.slice();
    this.q = d.q.slice();
    this.qLag = d.qLag.slice();
    this.gripCommand = d.grip.slice();
    this.tasks = d.tasks.slice();
  }

  close(): void {
    if (this.ownsDynamics) void this.dynamics.close();
  }
}

/** The tabletop Env contract over learned dynamics. */
export class WorldModelEnv extends TabletopCore<EnsembleEngine> {
  constructor(options: WorldModelEnvOptions) {
    const { scene, spec, numEnvs } = options;
    if (!Number.isInteger(numEnvs) || numEnvs < 1)
      throw new RangeError(`numEnvs must be a positive integer, got ${numEnvs}`);
    const engine = new EnsembleEngine(
      scene,
      spec,
      numEnvs,
      options.dynamics,
      options.sampling ?? 'mean',
      options.seed ?? 0,
      options.ownsDynamics ?? true,
      options.reward ?? 'phi',
    );
    super({ scene, spec: structuredClone(spec), numEnvs, render: options.render }, engine);
  }

  get dynamics(): Dynamics {
    return this.engine.dynamics;
  }
}
