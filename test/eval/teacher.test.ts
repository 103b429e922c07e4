import { describe, expect, it } from 'vitest';
import { teacherReport } from '../../src/eval/teacher.ts';
import { scene } from '../physics/helpers.ts';

describe('teacherReport', () => {
  // Held-out seeds 30-45 of push include a cube whose straight way to its zone passes the bin (38).
  it('the expert is a function of the state: without memory it succeeds and picks the same tokens', async () => {
    const tasks = scene.tasks.map((t) => t.id);
    const rows = await teacherReport({ scene, tasks, split: 'heldout', episodes: 16, seed: 30, numEnvs: 16 });
    expect(rows.map((r) => r.task)).toEqual(tasks);
    for (const r of rows) {
      expect(r.withMemory.successes, r.task).toBe(16);
      expect(r.withoutMemory.successes, r.task).toBe(16);
      expect(r.agreement, r.task).toBe(1);
      expect(r.steps).toBeGreaterThan(16 * 15);
      expect(r.withoutMemory.ci95[0]).toBeLessThan(1);
    }
  }, 120_000);
});
