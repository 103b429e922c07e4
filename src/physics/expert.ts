import { clamp, wrapAngle } from '../core/dmath.ts';
import { Rng } from '../core/rng.ts';
import type { BatchAction } from '../env/types.ts';
import type { Scene } from '../scene/schema.ts';
import type { TabletopState, TaskInstance } from '../task/types.ts';
import { ACTION_NAMES, emptyAction, encodeAction, putTokens } from './actions.ts';
import { pickGoal } from './expert-pick.ts';
import { pushGoal, type PushPlan } from './expert-push.ts';
import { freshMemory, type Memory } from './expert-util.ts';
import { YAW_LIMIT } from './sim.ts';

/** What the expert reads: privileged state and the episode of every env (TabletopEnv fits). */
export interface ExpertEnv {
  readonly numEnvs: number;
  readonly scene: Scene;
  state(i: number): TabletopState;
  task(i: number): TaskInstance;
}

export interface ExpertOptions {
  /** Probability that each token is replaced by a uniformly random one (demonstrations with recoveries). */
  noise?: number;
  /** Seed of the noise stream. */
  seed?: number;
}

/** Privileged scripted policy for every tabletop family (push, pick_place, stack, put_in_bin) with
 *  per-env phase memory. It turns a tool-centre-point goal into the nearest action tokens. */
export class ScriptedExpert {
  private readonly memory: Memory[];
  private readonly plans: PushPlan[];
  private readonly rng: Rng;
  private readonly noise: number;

  constructor(private readonly env: ExpertEnv, options: ExpertOptions = {}) {
    this.noise = options.noise ?? 0;
    if (!(this.noise >= 0 && this.noise <= 1)) throw new RangeError(`noise must be in [0, 1], got ${options.noise}`);
    this.rng = new Rng(options.seed ?? 0, 0x5e4);
    this.memory = Array.from({ length: env.numEnvs }, () => freshMemory(null));
    this.plans = Array.from({ length: env.numEnvs }, () => ({ legs: [], yaw: 0 }));
  }

  /** Current phase of env i (for tests and debugging). */
  phase(i: number): string {
    return this.memory[i].phase;
  }

  /** Action tokens for every env. A new episode (a different task object) restarts that env's memory. */
  act(): BatchAction {
    const { env } = this;
    const scene = env.scene;
    const action = emptyAction(env.numEnvs);
    for (let i = 0; i < env.numEnvs; i++) {
      const task = env.task(i);
      if (this.memory[i].task !== task) {
        this.memory[i] = freshMemory(task);
        this.plans[i] = { legs: [], yaw: 0 };
      }
      const s = env.state(i);
      const goal = task.family === 'push' ? pushGoal(scene, s, task, this.memory[i], this.plans[i]) : pickGoal(scene, s, task, this.memory[i]);
      const tokens = encodeAction(scene.control, {
        dx: goal.pos[0] - s.eePos[0],
        dy: goal.pos[1] - s.eePos[1],
        dz: goal.pos[2] - s.eePos[2],
        dyaw: clamp(wrapAngle(goal.yaw - s.eeYaw), -YAW_LIMIT, YAW_LIMIT),
        grip: goal.grip,
      });
      if (this.noise > 0) {
        for (const name of ACTION_NAMES) {
          if (this.rng.uniform() < this.noise) tokens[name] = this.rng.int(name === 'grip' ? scene.control.gripperBins : scene.control.bins);
        }
      }
      putTokens(action, i, tokens);
    }
    return action;
  }
}
