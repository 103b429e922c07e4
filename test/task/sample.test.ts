import { describe, expect, it } from 'vitest';
import type { Scene } from '../../src/scene/schema.ts';
import {
  binOuterHalf,
  distToRect,
  distXY,
  EE_START,
  familyPairs,
  findTask,
  footprintRadius,
  sampleTask,
  scoreTask,
  splitOf,
  splitSeed,
  START_CLEARANCE,
  taskIds,
} from '../../src/task/index.ts';
import { makeState, scene } from './helpers.ts';

const names = (task: ReturnType<typeof sampleTask>) => {
  const t = task.target;
  const list = t.kind === 'zone' ? scene.zones : t.kind === 'bin' ? scene.bins : scene.objects;
  return [scene.objects[task.object].name, list[t.index].name] as const;
};
const isReserved = (taskId: string, pair: readonly [string, string]) =>
  findTask(scene, taskId).heldoutPairs.some(([o, t]) => o === pair[0] && t === pair[1]);

describe('task ids, splits and seeds', () => {
  it('taskIds and findTask', () => {
    expect(taskIds(scene)).toEqual(['tabletop/push', 'tabletop/pick-place', 'tabletop/stack', 'tabletop/put-in-bin']);
    expect(findTask(scene, 'tabletop/stack').family).toBe('stack');
    expect(() => findTask(scene, 'tabletop/juggle')).toThrow(
      'unknown task "tabletop/juggle" in scene "tabletop"; valid ids: tabletop/push, tabletop/pick-place, tabletop/stack, tabletop/put-in-bin',
    );
  });

  it('splitOf uses half-open ranges and throws outside all three', () => {
    const [t0, t1] = scene.splits.train;
    const [v0, v1] = scene.splits.validation;
    const [h0, h1] = scene.splits.heldout;
    expect(splitOf(scene, t0)).toBe('train');
    expect(splitOf(scene, t1 - 1)).toBe('train');
    expect(splitOf(scene, h0)).toBe('heldout');
    expect(splitOf(scene, h1 - 1)).toBe('heldout');
    expect(splitOf(scene, v0)).toBe('validation');
    expect(splitOf(scene, v1 - 1)).toBe('validation');
    const message = `in no split of scene "tabletop": train [${t0}, ${t1}), validation [${v0}, ${v1}), heldout [${h0}, ${h1})`;
    expect(() => splitOf(scene, v1)).toThrow(message);
    expect(() => splitOf(scene, -1)).toThrow(message);
    expect(() => splitOf(scene, 2.5)).toThrow(message);
    expect(() => sampleTask(scene, 'tabletop/push', v1 + 5)).toThrow(message);
  });

  it('validation seeds follow the held-out distribution (reserved pairs half the time) on disjoint seeds', () => {
    const reserved = (split: 'validation' | 'heldout') => {
      let n = 0;
      for (let k = 0; k < 200; k++) {
        const t = sampleTask(scene, 'tabletop/pick-place', splitSeed(scene, split, k));
        expect(t.split).toBe(split);
        if (
          scene.tasks[1].heldoutPairs.some(
            ([o, g]) =>
              scene.objects[t.object].name === o && t.target.kind === 'zone' && scene.zones[t.target.index].name === g,
          )
        )
          n++;
      }
      return n / 200;
    };
    expect(reserved('validation')).toBeGreaterThan(0.35);
    expect(reserved('heldout')).toBeGreaterThan(0.35);
  });

  it('splitSeed maps episode indices into each split', () => {
    const [h0, h1] = scene.splits.heldout;
    expect(splitSeed(scene, 'train', 0)).toBe(scene.splits.train[0]);
    expect(splitSeed(scene, 'heldout', 7)).toBe(h0 + 7);
    expect(splitOf(scene, splitSeed(scene, 'heldout', h1 - h0 - 1))).toBe('heldout');
    expect(() => splitSeed(scene, 'heldout', h1 - h0)).toThrow(/outside the heldout split/);
    expect(() => splitSeed(scene, 'train', -1)).toThrow(/episode index -1/);
  });
});

describe('sampleTask', () => {
  const ids = taskIds(scene);

  it('is deterministic in the seed and differs between seeds and families', () => {
    for (const id of ids) {
      expect(sampleTask(scene, id, 123)).toEqual(sampleTask(scene, id, 123));
      expect(sampleTask(scene, id, 123).initObjects).not.toEqual(sampleTask(scene, id, 124).initObjects);
    }
    expect(sampleTask(scene, ids[0], 5).initObjects).not.toEqual(sampleTask(scene, ids[1], 5).initObjects);
  });

  it('pins the exact output for one seed (determinism across engines and refactors)', () => {
    const t = sampleTask(scene, 'tabletop/pick-place', 42);
    expect(t.instruction).toMatchInlineSnapshot(`"lift the red block and set it down on the purple zone"`);
    expect(t.initObjects[0].pos[0]).toMatchInlineSnapshot(`0.11377658800376156`);
  });

  it('train seeds never produce a held-out pair, and cover every other pair', () => {
    for (const id of ids) {
      const seen = new Set<string>();
      for (let seed = 0; seed < 3000; seed++) {
        const pair = names(sampleTask(scene, id, seed));
        expect(isReserved(id, pair), `${id} seed ${seed}`).toBe(false);
        seen.add(pair.join('/'));
      }
      const task = findTask(scene, id);
      expect(seen.size).toBe(familyPairs(task).length - task.heldoutPairs.length);
    }
  });

  it('held-out seeds produce a reserved pair about half the time', () => {
    for (const id of ids) {
      const n = 1000;
      let reserved = 0;
      for (let i = 0; i < n; i++)
        reserved += isReserved(id, names(sampleTask(scene, id, splitSeed(scene, 'heldout', i)))) ? 1 : 0;
      const pairs = familyPairs(findTask(scene, id)).length;
      const expected = 0.5 + 0.5 / pairs; // reserved half the time, else any pair (one of which is reserved)
      expect(Math.abs(reserved / n - expected), `${id}: ${reserved}/${n}`).toBeLessThan(0.06);
    }
  });

  it('layouts are inside the ranges, separated, clear of zones and bins, and Φ starts at 0', () => {
    const { objectX, objectY, objectYaw, minSeparation, eeJitter } = scene.randomization;
    for (const id of ids) {
      for (let i = 0; i < 1000; i++) {
        const seed = i % 2 ? splitSeed(scene, 'heldout', i) : i;
        const task = sampleTask(scene, id, seed);
        const objs = task.initObjects;
        expect(objs).toHaveLength(scene.objects.length);
        objs.forEach((o, a) => {
          expect(o.pos[0]).toBeGreaterThanOrEqual(objectX[0]);
          expect(o.pos[0]).toBeLessThanOrEqual(objectX[1]);
          expect(o.pos[1]).toBeGreaterThanOrEqual(objectY[0]);
          expect(o.pos[1]).toBeLessThanOrEqual(objectY[1]);
          expect(o.pos[2]).toBe(scene.objects[a].halfExtents[2]);
          expect(o.yaw).toBeGreaterThanOrEqual(objectYaw[0]);
          expect(o.yaw).toBeLessThanOrEqual(objectYaw[1]);
          const r = footprintRadius(scene.objects[a]);
          for (const z of scene.zones) expect(distToRect(o.pos[0], o.pos[1], z.centre, z.halfSize)).toBeGreaterThan(r);
          for (const b of scene.bins)
            expect(distToRect(o.pos[0], o.pos[1], b.centre, binOuterHalf(b))).toBeGreaterThan(r);
          for (let b = 0; b < a; b++) expect(distXY(o.pos, objs[b].pos)).toBeGreaterThanOrEqual(minSeparation);
        });
        if (task.target.kind === 'zone') {
          const z = scene.zones[task.target.index];
          const p = objs[task.object].pos;
          expect(distToRect(p[0], p[1], z.centre, z.halfSize)).toBeGreaterThanOrEqual(START_CLEARANCE);
        }
        if (task.target.kind === 'object') expect(task.target.index).not.toBe(task.object);
        task.initEe.forEach((v, k) => expect(Math.abs(v - EE_START[k])).toBeLessThanOrEqual(eeJitter));
        expect(scoreTask(scene, task, makeState(task)).progress, `${id} seed ${seed}`).toBe(0);
      }
    }
  });

  it('instructions come from a template with the object and target words filled in', () => {
    for (const id of ids) {
      const cfg = findTask(scene, id);
      const seenTemplates = new Set<number>();
      for (let seed = 0; seed < 300; seed++) {
        const task = sampleTask(scene, id, seed);
        const [objName, targetName] = names(task);
        const objWords = scene.objects[task.object].words;
        const targetWords = [...scene.zones, ...scene.bins, ...scene.objects].find((x) => x.name === targetName)!.words;
        const k = cfg.templates.findIndex((tpl) =>
          objWords.some((ow) =>
            targetWords.some((tw) => tpl.replaceAll('{object}', ow).replaceAll('{target}', tw) === task.instruction),
          ),
        );
        expect(k, `${id} seed ${seed}: "${task.instruction}" (${objName}, ${targetName})`).toBeGreaterThanOrEqual(0);
        seenTemplates.add(k);
      }
      expect(seenTemplates.size).toBe(cfg.templates.length);
    }
  });

  it('the target of a stack task is never the object itself', () => {
    for (let seed = 0; seed < 500; seed++) {
      const t = sampleTask(scene, 'tabletop/stack', seed);
      expect(t.target).toMatchObject({ kind: 'object' });
      expect(t.target.index).not.toBe(t.object);
    }
  });
});

describe('sampleTask on unusual scenes', () => {
  const clone = (): Scene => structuredClone(scene);

  it('explains when the objects cannot be placed', () => {
    const s = clone();
    s.randomization.objectX = [0, 0.05];
    s.randomization.objectY = [-0.1, -0.05];
    expect(() => sampleTask(s, 'tabletop/push', 0)).toThrow(
      /cannot place 4 objects in randomization.objectX\/objectY with minSeparation 0.09/,
    );
  });

  it('refuses a family whose every pair is reserved for held-out', () => {
    const s = clone();
    s.tasks[3].heldoutPairs = s.tasks[3].objects.map((o) => [o, 'grey_bin'] as [string, string]);
    expect(() => sampleTask(s, 'tabletop/put-in-bin', 0)).toThrow(/every \(object, target\) pair is reserved/);
    // held-out seeds still sample (every pair they can get is a reserved one)
    expect(sampleTask(s, 'tabletop/put-in-bin', splitSeed(s, 'heldout', 0))).toMatchObject({
      split: 'heldout',
      target: { kind: 'bin', index: 0 },
    });
  });
});
