import { describe, expect, it } from 'vitest';
import { checkProgram, programTokens } from '../../src/autoresearch/dsl.ts';
import { loadTask } from '../../src/autoresearch/data-file.ts';
import { leaderboardPosition, leaderboards, referenceRuns } from '../../src/autoresearch/leaderboard.ts';
import { runProgram } from '../../src/autoresearch/runner.ts';
import { TASKS } from '../../src/autoresearch/tasks.ts';

describe('leaderboards', () => {
  it('every task has at least 20 valid, tokenisable reference runs covering every family that fits it', () => {
    const boards = leaderboards();
    expect(Object.keys(boards.tasks).sort()).toEqual(TASKS.map((t) => t.id).sort());
    for (const t of TASKS) {
      const b = boards.tasks[t.id];
      const task = loadTask(t.id);
      expect(b.runs.length, t.id).toBeGreaterThanOrEqual(20);
      expect([b.metric, b.higherIsBetter]).toEqual([t.metric, t.higherIsBetter]);
      const families = new Set(b.runs.map((r) => r.program.model));
      expect([...families].sort()).toEqual(
        t.kind === 'classification'
          ? ['bayes', 'forest', 'knn', 'logistic', 'mlp', 'tree']
          : ['forest', 'knn', 'linear', 'mlp', 'tree'],
      );
      for (const r of b.runs) {
        expect(checkProgram(r.program, task)).toBeNull();
        expect(() => programTokens(r.program)).not.toThrow();
        expect(Number.isFinite(r.validation) && Number.isFinite(r.test)).toBe(true);
      }
    }
  });

  it('positions are in [0, 1], monotone in the metric direction, ties count half', () => {
    for (const t of TASKS) {
      for (const split of ['validation', 'test'] as const) {
        const scores = leaderboards().tasks[t.id].runs.map((r) => r[split]);
        const lo = Math.min(...scores);
        const hi = Math.max(...scores);
        const xs = Array.from({ length: 41 }, (_, i) => lo - (hi - lo) * 0.1 + ((hi - lo) * 1.2 * i) / 40);
        const pos = xs.map((x) => leaderboardPosition(t.id, x, split));
        for (const p of pos) expect(p >= 0 && p <= 1).toBe(true);
        const better = t.higherIsBetter ? pos : [...pos].reverse();
        for (let i = 1; i < better.length; i++) expect(better[i]).toBeGreaterThanOrEqual(better[i - 1]);
        expect(leaderboardPosition(t.id, t.higherIsBetter ? hi + 1 : lo - 1, split)).toBe(1);
        expect(leaderboardPosition(t.id, t.higherIsBetter ? lo - 1 : hi + 1, split)).toBe(0);
        expect(leaderboardPosition(t.id, NaN, split)).toBe(0);
      }
    }
    const runs = leaderboards().tasks['iris-species'].runs;
    const n = runs.length;
    const best = Math.max(...runs.map((r) => r.validation)); // accuracy: higher is better
    const ties = runs.filter((r) => r.validation === best).length;
    expect(leaderboardPosition('iris-species', best, 'validation')).toBeCloseTo((n - ties + ties / 2) / n, 12);
    expect(() => leaderboardPosition('nope', 1, 'test')).toThrow(/no leaderboard/);
  });

  it('referenceRuns gives each run its own validation position', () => {
    for (const t of TASKS) {
      for (const r of referenceRuns(t.id))
        expect(r.position).toBe(leaderboardPosition(t.id, r.validation, 'validation'));
    }
  });

  it('stored scores are what the runner gives today (a few fast non-MLP runs recomputed)', async () => {
    const seed = leaderboards().seed;
    for (const id of ['iris-species', 'cars-mpg']) {
      const task = loadTask(id);
      const runs = leaderboards()
        .tasks[id].runs.filter((r) => ['tree', 'knn', 'linear', 'bayes'].includes(r.program.model))
        .slice(0, 4);
      for (const r of runs) {
        const again = await runProgram(task, r.program, seed);
        expect([again.validation, again.test]).toEqual([r.validation, r.test]);
      }
    }
  });
});
