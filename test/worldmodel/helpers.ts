// Shared fixtures for the world-model tests: the shipped scene, physics specs, and synthetic episodes
// with a known dynamics (the tool moves exactly by the commanded step, objects stay put).
import { Rng } from '../../src/core/rng.ts';
import { fixedCameras, tabletopSpec } from '../../src/physics/index.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';
import { sampleTask } from '../../src/task/sample.ts';
import { packState, stateSize } from '../../src/task/state.ts';
import { ActionCoder, ArmPoser, type EpisodeData } from '../../src/worldmodel/index.ts';

export const scene = loadSceneFile(DEFAULT_SCENE_PATH);
export const specOf = (taskId: string) => tabletopSpec(scene, taskId, fixedCameras(scene));

/** Known dynamics on the real state layout: the tool moves 0.8 x the commanded (dx, dy, dz, dyaw) (bin
 *  values), fingers move halfway to the commanded opening, objects do not move. */
export function knownDynamicsEpisodes(count: number, length: number, seed: number): EpisodeData[] {
  const spec = specOf('tabletop/push');
  const coder = new ActionCoder(spec);
  const poser = new ArmPoser(scene);
  const rng = new Rng(seed, 7);
  const S = stateSize(scene.objects.length);
  const A = coder.dim;
  const vals = new Float32Array(A);
  const open = scene.robot.finger.maxOpening;
  return Array.from({ length: count }, (_, e) => {
    const task = sampleTask(scene, 'tabletop/push', seed * 1000 + e);
    const states = new Float32Array((length + 1) * S);
    const actions = new Int32Array(length * A);
    packState(poser.initialState(task).state, states, 0);
    for (let t = 0; t < length; t++) {
      spec.action.forEach((entry, j) => (actions[t * A + j] = rng.int(entry.kind === 'discrete' ? entry.n : 1)));
      coder.encodeRow(actions, t * A, vals, 0);
      const s = states.subarray(t * S, (t + 1) * S);
      const next = states.subarray((t + 1) * S, (t + 2) * S);
      next.set(s);
      for (let d = 0; d < 4; d++) next[d] = s[d] + 0.8 * vals[d]; // x, y, z, yaw: a tool that lags its command
      const target = open * (1 - vals[4]);
      next[4] = s[4] + 0.5 * (target - s[4]);
      next[5] = s[5] + 0.5 * (target - s[5]);
    }
    return { taskId: task.taskId, seed: task.seed, policy: 'known', length, states, actions };
  });
}
