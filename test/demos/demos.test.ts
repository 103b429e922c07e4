import { describe, expect, it } from 'vitest';
import { counterfactualTask } from '../../src/demos/index.ts';
import { loadScene } from '../../src/cli/scene.ts';
import { sampleTask, splitSeed } from '../../src/task/index.ts';

describe('counterfactual tasks', () => {
  const scene = loadScene(undefined);

  it('swap the object phrase, keep layout and target, and never make the target the object', () => {
    for (const taskId of ['tabletop/pick-place', 'tabletop/stack', 'tabletop/push', 'tabletop/put-in-bin']) {
      for (let k = 0; k < 10; k++) {
        const task = sampleTask(scene, taskId, splitSeed(scene, 'train', k));
        let alternatives = 0;
        scene.objects.forEach((obj, o) => {
          const cf = counterfactualTask(scene, task, o);
          if (o === task.object || (task.target.kind === 'object' && task.target.index === o))
            return expect(cf).toBeNull();
          alternatives++;
          expect(cf!.object).toBe(o);
          expect(cf!.target).toEqual(task.target);
          expect(cf!.initObjects).toBe(task.initObjects);
          expect(obj.words.some((w) => cf!.instruction.includes(w))).toBe(true);
          expect(
            scene.objects[task.object].words.some((w) =>
              cf!.instruction.startsWith(task.instruction.slice(0, task.instruction.indexOf(w)) + w),
            ),
          ).toBe(false);
        });
        expect(alternatives).toBe(task.target.kind === 'object' ? scene.objects.length - 2 : scene.objects.length - 1);
      }
    }
  });
});
