import { describe, expect, it } from 'vitest';
import { sampleTask, sceneDifficulty, splitSeed, taskIds } from '../../src/task/index.ts';
import { scene } from './helpers.ts';

describe('sceneDifficulty', () => {
  it('lies in [0, 1] and depends only on the episode', () => {
    for (const taskId of taskIds(scene))
      for (let k = 0; k < 100; k++) {
        const t = sampleTask(scene, taskId, splitSeed(scene, 'train', k));
        const d = sceneDifficulty(scene, t);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThanOrEqual(1);
        expect(sceneDifficulty(scene, sampleTask(scene, taskId, t.seed))).toBe(d);
      }
  });

  it('rises when the object starts farther from its target or another cube stands next to it', () => {
    const t = sampleTask(scene, 'tabletop/put-in-bin', splitSeed(scene, 'train', 0));
    const moved = (object: number, x: number, y: number) => ({
      ...t,
      initObjects: t.initObjects.map((o, i) => (i === object ? { ...o, pos: [x, y, o.pos[2]] as typeof o.pos } : o)),
    });
    const [bx, by] = scene.bins[0].centre;
    const own = t.initObjects[t.object].pos;
    expect(sceneDifficulty(scene, moved(t.object, bx, by - 0.12))).toBeLessThan(
      sceneDifficulty(scene, moved(t.object, bx + 0.25, by - 0.35)),
    );
    const other = t.object === 0 ? 1 : 0;
    expect(sceneDifficulty(scene, moved(other, own[0] + 0.09, own[1]))).toBeGreaterThan(
      sceneDifficulty(scene, moved(other, own[0] + 0.3, own[1])),
    );
  });
});
