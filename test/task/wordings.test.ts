import { describe, expect, it } from 'vitest';
import { sceneWords } from '../../src/policy/presets.ts';
import { splitWords } from '../../src/policy/tokenizer.ts';
import { UNSEEN_TEMPLATES, sampleTask, splitSeed, taskIds, unseenInstruction } from '../../src/task/index.ts';
import { scene } from './helpers.ts';

describe('the unseen wording set', () => {
  it("shares no template with the scene's and fits the tokenizer's length", () => {
    const own = new Set(scene.tasks.flatMap((t) => t.templates));
    const { maxLength } = sceneWords(scene);
    for (const templates of Object.values(UNSEEN_TEMPLATES))
      for (const t of templates) {
        expect(own.has(t)).toBe(false);
        expect(splitWords(t.replace(/\{\w+\}/g, 'grey bin')).length).toBeLessThanOrEqual(maxLength);
      }
  });

  it("words the episode's own object and target, deterministically from its seed", () => {
    for (const taskId of taskIds(scene))
      for (let k = 0; k < 20; k++) {
        const task = sampleTask(scene, taskId, splitSeed(scene, 'heldout', k));
        const text = unseenInstruction(scene, task);
        expect(text).toBe(unseenInstruction(scene, task));
        expect(scene.objects[task.object].words.some((w) => text.includes(w))).toBe(true);
        expect(text).not.toBe(task.instruction);
      }
  });
});
