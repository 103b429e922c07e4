import { describe, expect, it } from 'vitest';
import { verdictTable } from '../../src/eval/index.ts';
import { type FamilyVerdict, verdictCounts } from '../../src/worldmodel/index.ts';

const pairs = (tp: number, fp: number, fn: number, tn: number) => [
  ...Array(tp).fill({ env: true, wm: true }),
  ...Array(fp).fill({ env: false, wm: true }),
  ...Array(fn).fill({ env: true, wm: false }),
  ...Array(tn).fill({ env: false, wm: false }),
];

describe('verdictTable', () => {
  it('has a row per family with the counts, intervals and what the false negatives miss', () => {
    const counts = verdictCounts(pairs(26, 1, 4, 100));
    const stack: FamilyVerdict = {
      family: 'stack',
      rollouts: 100,
      physics_successes: 15,
      ...counts,
      tp_same_step: 20,
      members: { majority: counts, any: verdictCounts(pairs(29, 4, 1, 97)) },
      fn_misses: { still: 4, height: 1 },
      fn_only: { still: 3 },
      fn_median: { speed: 0.15, z_error: 0.0043 },
    };
    const table = verdictTable({
      split: 'train',
      episodes_per_task: 100,
      seed: 0,
      every: 5,
      horizon: 10,
      families: { 'tabletop/stack': stack },
    });
    const row = table.split('\n')[2];
    expect(row).toMatch(/^\| stack \| 100 \(15\) \| 26 \| 1 \| 4 \| 100 \| 96% \[82%, 99%\] \| 87% \[70%, 95%\] \|/);
    expect(row).toContain('still 4 (alone 3), height 1; median speed 0.15 m/s, z error 4.3 mm');
    expect(row).toContain('97% [83%, 99%] (precision 88% [73%, 95%])');
    expect(table).toContain('train split, 100 rollouts per family; segments branched every 5 steps for 10 steps');
  });
});
