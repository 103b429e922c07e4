import { describe, expect, it } from 'vitest';
import { tInterval } from '../../src/core/stats.ts';
import { EVAL_FORMAT, type EvalReport, policyResult, validateReport } from '../../src/eval/index.ts';
import { ablationTable, versusBaseTable } from '../../src/experiment/ablation.ts';
import { pairedDifference } from '../../src/eval/index.ts';

/** A held-out report of one policy: `wins[k]` successes of 10 episodes on task k. */
const report = (wins: number[]): EvalReport => {
  const tasks = wins.map((_, k) => `tabletop/t${k}`);
  const perTask = tasks.map((taskId, k) => ({
    taskId,
    episodes: Array.from({ length: 10 }, (_, e) => ({ seed: e, success: e < wins[k], length: 5, progress: 0 })),
  }));
  const policies = [policyResult('p', perTask, (_t, seed) => seed % 2 === 1)];
  const head = { format: EVAL_FORMAT, split: 'heldout', episodes_per_task: 10, seed: 0, temperature: 1 };
  return validateReport({ ...head, seeds: { first_index: 0, count: 10 }, tasks, policies });
};

describe('the ablation table', () => {
  it('tInterval: the mean of the seeds with a Student-t 95% interval (t(2) = 4.3027 for 3 seeds)', () => {
    const t = tInterval([0.1, 0.2, 0.3]);
    expect(t.mean).toBeCloseTo(0.2, 12);
    expect(t.high - t.mean).toBeCloseTo((4.302652729749462 * 0.1) / Math.sqrt(3), 12);
    expect(Number.isNaN(tInterval([0.5]).low)).toBe(true);
  });

  it('one line per row with per-family mean success and between-seed intervals, then the base', () => {
    const table = ablationTable({ none: [report([1, 2]), report([3, 2]), report([2, 2])], later: [] }, report([0, 0]));
    const lines = table.split('\n');
    expect(lines[0]).toBe('| row | seeds | t0 | t1 | overall | seen pairs | reserved pairs |');
    expect(lines).toHaveLength(4); // header, rule, none, base: a row without reports is left out
    expect(lines[2]).toMatch(/^\| none \| 3 \| 20\.0 \[-4\.8, 44\.8\] \| 20\.0 \[20\.0, 20\.0\] \| 20\.0 /);
    expect(lines[3]).toBe('| base (no training) | - | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 |');
  });

  it('with a reference row, the paired difference to it over all seeds’ episodes', () => {
    const rows = { none: [report([1, 1]), report([1, 1])], more: [report([3, 1]), report([3, 1])] };
    const lines = ablationTable(rows, report([0, 0]), 'none').split('\n');
    expect(lines[0]).toMatch(/\| overall vs none, paired \|$/);
    expect(lines[2]).toMatch(/\| 0\.0 \[0\.0, 0\.0\] \|$/);
    expect(lines[3]).toMatch(/\| 10\.0 \[\d+\.\d, \d+\.\d\] \|$/); // 4 more successes in 40 pairs
  });

  it('versus the base: per family and overall, each seed paired with the base on the same episodes', () => {
    const base = report([2, 5]);
    const lines = versusBaseTable({ up: [report([4, 5]), report([6, 5])], none: [] }, base).split('\n');
    expect(lines[0]).toBe('| row | seeds | t0 | t1 | overall |');
    expect(lines).toHaveLength(3); // a row without reports is left out
    // t0: 20 pairs, the base wins 2 of 10 each time, the seeds 4 and 6: +30 points
    const d = pairedDifference(
      [...report([4, 5]).policies[0].outcomes['tabletop/t0'], ...report([6, 5]).policies[0].outcomes['tabletop/t0']],
      [...base.policies[0].outcomes['tabletop/t0'], ...base.policies[0].outcomes['tabletop/t0']],
    );
    expect(d.diff).toBeCloseTo(0.3, 12);
    const pct = (x: number) => (100 * x).toFixed(1);
    expect(lines[2].startsWith(`| up | 2 | 30.0 [${pct(d.ci_low)}, ${pct(d.ci_high)}] | 0.0 [0.0, 0.0] | 15.0 [`)).toBe(
      true,
    );
  });
});
