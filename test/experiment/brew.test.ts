import { describe, expect, it } from 'vitest';
import { brewDemos } from '../../src/experiment/brew.ts';
import type { StoredEpisode } from '../../src/rollout/index.ts';
import { packState, sampleTask, splitSeed, stateSize } from '../../src/task/index.ts';
import { H, makeState, objIndex, scene } from '../task/helpers.ts';

const taskId = 'tabletop/put-in-bin';
const bin = scene.bins[0];
const inside: [number, number, number] = [bin.centre[0] + 0.01, bin.centre[1] - 0.01, H + 0.001];

/** A stored two-step episode of `seed` that ends with `object` in the bin (or nothing moved). */
function episode(seed: number, object: string | null, success: boolean): StoredEpisode {
  const task = sampleTask(scene, taskId, seed);
  const start = packState(makeState(task));
  const end = packState(makeState(task, object ? { objs: { [objIndex(object)]: { pos: inside } } } : {}));
  const states = new Float32Array(3 * stateSize(scene.objects.length));
  states.set(start, 0);
  states.set(start, start.length);
  states.set(end, 2 * start.length);
  return {
    seed,
    task: taskId,
    policy: 'test',
    instruction: task.instruction,
    length: 2,
    success,
    return: success ? 1 : 0,
    progress: success ? 1 : 0,
    actions: new Int32Array(10),
    rewards: new Float32Array(2),
    states,
  };
}

describe('brewDemos', () => {
  const seeds = Array.from({ length: 30 }, (_, k) => splitSeed(scene, 'train', k));
  const notRed = seeds.filter((s) => sampleTask(scene, taskId, s).object !== objIndex('red_cube'));

  it('rejection keeps the successes; agentbrew also the failures another instruction explains, relabelled', () => {
    const episodes = [
      episode(notRed[0], null, true),
      episode(notRed[1], 'red_cube', false),
      episode(notRed[2], null, false),
    ];
    const rejection = brewDemos(scene, episodes, 'rejection');
    expect(rejection.demos.map((d) => d.seed)).toEqual([notRed[0]]);
    expect(rejection.relabelled).toBe(0);
    const brewed = brewDemos(scene, episodes, 'agentbrew');
    expect(brewed.demos.map((d) => d.seed)).toEqual([notRed[0], notRed[1]]);
    expect(brewed.relabelled).toBe(1);
    expect(brewed.demos[1].instruction).toMatch(/red cube/);
    expect(brewed.demos[1].instruction).not.toBe(episodes[1].instruction);
    expect(Array.from(brewed.demos[1].labels)).toEqual(Array.from(episodes[1].actions));
  });

  it('rollouts on held-out seeds are refused (training on them would leak the evaluation split)', () => {
    const heldout = splitSeed(scene, 'heldout', 0);
    expect(() => brewDemos(scene, [episode(heldout, null, true)], 'rejection')).toThrow(/heldout split/);
  });

  it('a failure that put the held-out pair (green cube, grey bin) in place is never kept', () => {
    const episodes = seeds
      .filter((s) => sampleTask(scene, taskId, s).object !== objIndex('green_cube'))
      .map((s) => episode(s, 'green_cube', false));
    expect(brewDemos(scene, episodes, 'agentbrew').demos).toEqual([]);
  });
});
