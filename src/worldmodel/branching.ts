// Branching for the trainer: the process score of a recorded tabletop row (world-model groups start from
// rows through the Env contract's resetFrom; capture() writes them).
import type { Scene } from '../scene/schema.ts';
import { sampleTask } from '../task/sample.ts';
import { unpackState } from '../task/state.ts';
import type { TaskInstance } from '../task/types.ts';
import { scoreTask, taskReward } from '../task/verify.ts';

/** The score (taskReward of Φ, as the tabletop envs report it) of a captured row ([flat state, grip,
 *  joints]) in the episode of `seed`. */
export function tabletopBranching(scene: Scene, taskId: string) {
  const tasks = new Map<number, TaskInstance>();
  const taskOf = (seed: number) => {
    if (!tasks.has(seed)) tasks.set(seed, sampleTask(scene, taskId, seed));
    return tasks.get(seed)!;
  };
  return {
    progress(seed: number, row: ArrayLike<number>): number {
      return taskReward(scoreTask(scene, taskOf(seed), unpackState(row, scene.objects.length)).progress);
    },
  };
}
