import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Executor } from '../../src/autoresearch/index.ts';
import {
  HELDOUT_RESEARCH_TASKS,
  ResearchStudySchema,
  researchStudyReport,
  researchStudyTable,
  runResearchStudy,
} from '../../src/experiment/index.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-research-study-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const rows = [
  { name: 'real', mode: 'real', iterations: 1 },
  { name: 'wmrl', mode: 'wmrl', iterations: 1, versus: ['real'] },
];
const study = (r: unknown[], seeds = [0]) =>
  ResearchStudySchema.parse({
    base: 'models/agent-base.onnx',
    seeds,
    finalEpisodes: 1,
    config: { groupsPerIteration: 2, groupSize: 2, numEnvs: 2 },
    rows: r,
  });

describe('the AutoResearch study', () => {
  it('refuses bad rows, naming the field', () => {
    const bad = (r: unknown[]) => ResearchStudySchema.safeParse({ rows: r }).error?.issues.map((i) => i.path.join('.'));
    expect(bad([...rows, { name: 'real', mode: 'mix', iterations: 2 }])).toEqual(['rows.2.name']);
    expect(bad([{ name: 'a', mode: 'mix', iterations: 1, versus: ['b'] }])).toEqual(['rows.0.versus.0']);
    expect(bad([{ name: 'a', mode: 'mix' }])).toEqual(['rows.0.iterations']);
    expect(bad([{ name: 'a', mode: 'fast', iterations: 1 }])).toEqual(['rows.0.mode']);
  });

  it('trains and evaluates every row in real execution, counts executions, reuses finished runs, restarts a stopped one and refuses a changed row', {
    timeout: 300_000,
  }, async () => {
    const runs = join(tmp, 'runs');
    const executor = new Executor({ concurrency: 2 });
    const report = await runResearchStudy(study(rows), runs, executor);
    expect(report.rows.map((r) => [r.name, r.seeds])).toEqual([
      ['real', [0]],
      ['wmrl', [0]],
    ]);
    const [real, wmrl] = report.rows;
    // real executes every group (2 groups x 2 rollouts x up to 4 turns), wmrl one anchor group of 2
    expect(real.executions.mean).toBeGreaterThan(wmrl.executions.mean);
    expect(wmrl.executions.mean).toBeGreaterThan(0);
    expect(wmrl.versus[0].fewer_executions.mean).toBeCloseTo(real.executions.mean / wmrl.executions.mean, 9);
    const run = JSON.parse(readFileSync(join(runs, 'wmrl-s0', 'run.json'), 'utf8'));
    expect(run.final.map((t: { task: string }) => t.task)).toEqual(HELDOUT_RESEARCH_TASKS);

    const policy = join(runs, 'real-s0', 'policy.onnx');
    const before = statSync(policy).mtimeMs;
    await runResearchStudy(study(rows), runs, executor);
    expect(statSync(policy).mtimeMs).toBe(before);
    // a run stopped before its run.json starts over and ends as the first one did (same seed)
    rmSync(join(runs, 'wmrl-s0', 'run.json'));
    const again = await runResearchStudy(study(rows), runs, executor);
    expect(JSON.parse(readFileSync(join(runs, 'wmrl-s0', 'run.json'), 'utf8'))).toEqual({
      ...run,
      seconds: expect.any(Number),
    });
    expect(again.rows[1].position).toEqual(wmrl.position);
    await expect(runResearchStudy(study([rows[0], { ...rows[1], iterations: 2 }]), runs, executor)).rejects.toThrow(
      /row "wmrl" was trained with other settings/,
    );
  });

  it('reports between-seed means, per-seed paired differences and execution ratios (known toy outcomes)', () => {
    const runs = join(tmp, 'toy');
    const s = study(rows, [0, 1]);
    const evaluation = (xs: number[]) => HELDOUT_RESEARCH_TASKS.map((task, k) => ({ task, perEpisode: [xs[k]] }));
    const write = (path: string, data: unknown) => {
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, JSON.stringify(data));
    };
    const toy = {
      real: [
        { positions: [0.5, 0.7], executions: 400, seconds: 300 },
        { positions: [0.4, 0.6], executions: 500, seconds: 200 },
      ],
      wmrl: [
        { positions: [0.7, 0.9], executions: 100, seconds: 100 },
        { positions: [0.4, 0.8], executions: 100, seconds: 50 },
      ],
    };
    for (const seed of [0, 1]) {
      write(join(runs, `base-s${seed}.json`), evaluation([0.5, 0.5]));
      for (const [row, outs] of Object.entries(toy)) {
        const o = outs[seed];
        write(join(runs, `${row}-s${seed}`, 'run.json'), {
          row,
          seed,
          iterations: 1,
          seconds: o.seconds,
          executions: o.executions,
          final: evaluation(o.positions),
        });
      }
    }
    const r = researchStudyReport(s, runs);
    const [real, wmrl] = r.rows;
    expect(real.position.values).toEqual([0.6, 0.5]);
    expect(wmrl.position.mean).toBeCloseTo(0.7, 12);
    expect(wmrl.vs_base.values.map((x) => +x.toFixed(12))).toEqual([0.3, 0.1]);
    // every episode of both seeds in one paired difference: 0.2, 0.4, -0.1 and 0.3
    expect(wmrl.vs_base_pooled.diff).toBeCloseTo(0.2, 12);
    expect(wmrl.vs_base_pooled.episodes).toBe(4);
    const v = wmrl.versus[0];
    // per-seed differences 0.2 and 0.1: mean 0.15, t(1) = 12.706 times sd 0.0707 / sqrt 2
    expect(v.per_seed.mean).toBeCloseTo(0.15, 12);
    expect(v.per_seed.high! - v.per_seed.mean).toBeCloseTo(12.706 * 0.05, 9);
    expect(v.pooled.diff).toBeCloseTo(0.15, 12);
    expect(v.fewer_executions.values).toEqual([4, 5]);
    expect(v.faster.values).toEqual([3, 4]);
    expect(r.base.position.mean).toBe(0.5);
    const table = researchStudyTable(r);
    expect(table).toContain('| wmrl | wmrl | 1 | 2 | 0.700 [');
    expect(table).toContain('4.5 [');
    // a run of another iteration count is not this row's
    write(join(runs, 'real-s1', 'run.json'), {
      ...JSON.parse(readFileSync(join(runs, 'real-s1', 'run.json'), 'utf8')),
      iterations: 3,
    });
    expect(researchStudyReport(s, runs).rows[0].seeds).toEqual([0]);
  });
});
