import { describe, expect, it } from 'vitest';
import {
  familyTasks,
  packState,
  sampleTask,
  splitSeed,
  tabletopInstructions,
  taskIds,
  usesReservedPair,
} from '../../src/task/index.ts';
import { H, makeState, objIndex, scene } from './helpers.ts';

describe('familyTasks', () => {
  it('the episode itself first, then every train pair of the family once; never a reserved (held-out) pair', () => {
    for (const taskId of taskIds(scene)) {
      const family = scene.tasks.find((t) => t.id === taskId)!;
      for (let k = 0; k < 50; k++) {
        const seed = splitSeed(scene, 'train', k * 997);
        const tasks = familyTasks(scene, taskId, seed);
        expect(tasks[0]).toEqual(sampleTask(scene, taskId, seed));
        const pairs =
          family.objects.length * family.targets.length -
          family.objects.filter((o) => family.targets.includes(o)).length;
        expect(tasks.length).toBe(pairs - family.heldoutPairs.length);
        expect(new Set(tasks.map((t) => `${t.object}/${t.target.kind}${t.target.index}`)).size).toBe(tasks.length);
        for (const t of tasks) expect(usesReservedPair(scene, t)).toBe(false);
      }
    }
  });
});

describe('relabelling (tabletopInstructions.satisfied)', () => {
  const taskId = 'tabletop/put-in-bin';
  const bin = scene.bins[0];
  const inside: [number, number, number] = [bin.centre[0] + 0.01, bin.centre[1] - 0.01, H + 0.001];
  const seeds = Array.from({ length: 40 }, (_, k) => splitSeed(scene, 'train', k));
  const row = (seed: number, object: string) => {
    const task = sampleTask(scene, taskId, seed);
    return packState(makeState(task, { ee: [0, -0.12, 0.2], objs: { [objIndex(object)]: { pos: inside } } }));
  };

  it('another cube in the bin relabels the episode with its instruction', () => {
    const relabel = tabletopInstructions(scene, taskId);
    const seed = seeds.find((s) => sampleTask(scene, taskId, s).object !== objIndex('red_cube'))!;
    const texts = relabel.satisfied(seed, row(seed, 'red_cube'));
    expect(texts).toHaveLength(1);
    expect(texts[0]).toMatch(/red cube/);
    expect(relabel.family(seed)).toContain(texts[0]);
  });

  it('the reserved pair (green cube, grey bin) satisfied in the state is never a relabel', () => {
    const relabel = tabletopInstructions(scene, taskId);
    expect(scene.tasks.find((t) => t.id === taskId)!.heldoutPairs).toContainEqual(['green_cube', 'grey_bin']);
    for (const seed of seeds) expect(relabel.satisfied(seed, row(seed, 'green_cube'))).toEqual([]);
  });

  it('its own instruction satisfied is no relabel (the rollout succeeded)', () => {
    const relabel = tabletopInstructions(scene, taskId);
    const seed = seeds[0];
    const own = scene.objects[sampleTask(scene, taskId, seed).object].name;
    expect(relabel.satisfied(seed, row(seed, own))).toEqual([]);
  });
});
