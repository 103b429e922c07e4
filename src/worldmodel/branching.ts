// Branching for the trainer (design 7.2): a real tabletop state as a flat row (state, gripper command,
// arm joints), its process score, and world-model slots started from rows. The physics env arrives
// structurally (anything with state, task and armState per slot), so this folder imports no physics.
import type { Env } from '../env/types.ts';
import type { Scene } from '../scene/schema.ts';
import { sampleTask } from '../task/sample.ts';
import { packState, stateSize, unpackState } from '../task/state.ts';
import type { TabletopState, TaskInstance } from '../task/types.ts';
import { scoreTask } from '../task/verify.ts';
import { WorldModelEnv, type BranchStart } from './env.ts';

interface RealTabletop {
  state(i: number): TabletopState;
  armState(i: number): { q: ArrayLike<number>; grip: number };
}

/** Rows are [flat state, grip command, 6 joint angles]. */
export function tabletopBranching(scene: Scene, taskId: string) {
  const S = stateSize(scene.objects.length);
  const tasks = new Map<number, TaskInstance>();
  const taskOf = (seed: number) => {
    if (!tasks.has(seed)) tasks.set(seed, sampleTask(scene, taskId, seed));
    return tasks.get(seed)!;
  };
  return {
    record(real: Env, slot: number): number[] {
      const env = real as unknown as RealTabletop;
      const arm = env.armState(slot);
      return [...packState(env.state(slot)), arm.grip, ...Array.from(arm.q)];
    },
    progress(seed: number, row: ArrayLike<number>): number {
      return scoreTask(scene, taskOf(seed), unpackState(row, scene.objects.length)).progress;
    },
    async resetFrom(model: Env, slots: number[], starts: { seed: number; key: number; elapsed: number; row: ArrayLike<number> }[]) {
      if (!(model instanceof WorldModelEnv)) throw new TypeError('tabletopBranching: the model env must be a WorldModelEnv');
      const all: (BranchStart | null)[] = new Array(model.numEnvs).fill(null);
      slots.forEach((i, j) => {
        const { seed, key, elapsed, row } = starts[j];
        if (row.length !== S + 7) throw new RangeError(`tabletopBranching: a row has ${row.length} values, expected ${S + 7}`);
        all[i] = { task: taskOf(seed), state: unpackState(row, scene.objects.length), elapsed, grip: row[S], q: Array.from({ length: 6 }, (_, k) => row[S + 1 + k]), key };
      });
      return model.resetFrom(all);
    },
  };
}
