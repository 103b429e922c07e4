import { clamp, wrapAngle } from '../core/dmath.ts';
import type { BatchAction } from '../env/types.ts';
import type { Scene } from '../scene/schema.ts';
import type { TabletopState, TaskInstance } from '../task/types.ts';
import { emptyAction, encodeAction, putTokens } from './actions.ts';
import { pickGoal } from './expert-pick.ts';
import { pushGoal } from './expert-push.ts';
import { freshMemory, type Memory } from './expert-util.ts';
import { YAW_LIMIT } from './sim.ts';

/** What the expert reads: privileged state and the episode of every env (TabletopEnv fits). */
export interface ExpertEnv {
  readonly numEnvs: number;
  readonly scene: Scene;
  state(i: number): TabletopState;
  task(i: number): TaskInstance;
}

/** Privileged scripted policy for every tabletop family (push, pick_place, stack, put_in_bin). It reads
 *  its phase from the state at every step (so it also labels states another policy reached, as DAgger
 *  asks, and a policy that sees the state can imitate it exactly: `wmrl teacher` measures this), and turns
 *  a tool-centre-point goal into the nearest action tokens. Noisy demonstrations wrap it (rollout's
 *  withTokenNoise). */
export class ScriptedExpert {
  private readonly memory: Memory[];

  /** `memory: false` forgets everything between steps (fresh memory at every act): the expert as a
   *  function of the state alone, which is what a policy that sees the state can imitate exactly. */
  constructor(
    private readonly env: ExpertEnv,
    private readonly options: { memory: boolean } = { memory: true },
  ) {
    this.memory = Array.from({ length: env.numEnvs }, () => freshMemory(null));
  }

  /** Phase of env i's last action (for tests and debugging). */
  phase(i: number): string {
    return this.memory[i].phase;
  }

  /** Action tokens for every env; with `keys` (a rollout's episode keys), envs whose key is negative
   *  are idle: the expert reads nothing of them and gives them token 0. A new episode (a different task
   *  object) clears that env's memory. */
  act(keys?: ArrayLike<number>): BatchAction {
    const { env } = this;
    const scene = env.scene;
    const action = emptyAction(env.numEnvs);
    for (let i = 0; i < env.numEnvs; i++) {
      if (keys && keys[i] < 0) continue;
      const task = env.task(i);
      if (this.memory[i].task !== task || !this.options.memory) {
        this.memory[i] = freshMemory(task);
      }
      const s = env.state(i);
      const goal =
        task.family === 'push' ? pushGoal(scene, s, task, this.memory[i]) : pickGoal(scene, s, task, this.memory[i]);
      const tokens = encodeAction(scene.control, {
        dx: goal.pos[0] - s.eePos[0],
        dy: goal.pos[1] - s.eePos[1],
        dz: goal.pos[2] - s.eePos[2],
        dyaw: clamp(wrapAngle(goal.yaw - s.eeYaw), -YAW_LIMIT, YAW_LIMIT),
        grip: goal.grip,
      });
      putTokens(action, i, tokens);
    }
    return action;
  }
}
