// The AutoResearch study (a configuration of the study core): schema, a real study of two rows trained in
// process and evaluated in real execution, and the report on toy runs with hand-computed answers.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Executor } from '../../src/autoresearch/index.ts';
import {
  agentEvalKey,
  HELDOUT_RESEARCH_TASKS,
  ResearchStudySchema,
  researchStudyReport,
  researchStudyTable,
  runRecord,
  runResearchStudy,
  studyRun,
  writeCache,
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
    expect(wmrl.executions.mean).toBeGreaterThan(0);
    expect(wmrl.versus[0].fewer_executions.values[0]).toBeGreaterThan(1);
    const record = JSON.parse(readFileSync(join(runs, 'wmrl-s0', 'run.json'), 'utf8'));
    expect(record.value.final.map((t: { task: string }) => t.task)).toEqual(HELDOUT_RESEARCH_TASKS);
    expect(record.key).toMatchObject({ mode: 'wmrl', seed: 0, iterations: 1, extra: { finalEpisodes: 1 } });
    expect(real.executions.values[0]).toBe(
      JSON.parse(readFileSync(join(runs, 'real-s0', 'run.json'), 'utf8')).value.executions,
    );

    const policy = join(runs, 'real-s0', 'policy.onnx');
    const before = statSync(policy).mtimeMs;
    await runResearchStudy(study(rows), runs, executor);
    expect(statSync(policy).mtimeMs).toBe(before);
    // a run stopped before its run.json starts over and ends as the first one did (same seed)
    rmSync(join(runs, 'wmrl-s0', 'run.json'));
    const again = await runResearchStudy(study(rows), runs, executor);
    const redone = JSON.parse(readFileSync(join(runs, 'wmrl-s0', 'run.json'), 'utf8'));
    expect(redone).toEqual({ ...record, value: { ...record.value, seconds: expect.any(Number) } });
    expect(again.rows[1].position).toEqual(wmrl.position);
    await expect(runResearchStudy(study([rows[0], { ...rows[1], iterations: 2 }]), runs, executor)).rejects.toThrow(
      /row "wmrl" was trained with other settings/,
    );
  });

  it('reports between-seed means, per-seed paired differences and execution ratios (toy runs, answers by hand)', () => {
    const runs = join(tmp, 'toy');
    const s = study(rows, [0, 1]);
    const evaluation = (xs: number[]) =>
      HELDOUT_RESEARCH_TASKS.map((task, k) => ({
        task,
        episodes: 1,
        testPosition: xs[k],
        ciLow: xs[k],
        ciHigh: xs[k],
        validShare: 1,
        reward: 1,
        statuses: { valid: 1 },
        executions: 1,
        perEpisode: [xs[k]],
      }));
    const toy = {
      real: [
        { positions: [0.5, 0.7], executions: 400, seconds: 300 },
        { positions: [0.4, 0.6], executions: 300, seconds: 90 },
      ],
      wmrl: [
        { positions: [0.7, 0.9], executions: 100, seconds: 100 },
        { positions: [0.4, 0.8], executions: 120, seconds: 40 },
      ],
    };
    for (const seed of [0, 1]) {
      const key = agentEvalKey(s.base, { episodes: 1, seed });
      writeCache(join(runs, `base-s${seed}.json`), key, evaluation([0.5, 0.5]));
      for (const row of s.rows) {
        const o = toy[row.name as 'real' | 'wmrl'][seed];
        const run = studyRun(s, row, seed);
        writeCache(runRecord(runs, run), run.spec, { ...o, final: evaluation(o.positions) });
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
    // per-seed differences 0.2 and 0.1: mean 0.15, t(1) = 12.7062 times sd 0.0707 / sqrt 2
    expect(v.per_seed.mean).toBeCloseTo(0.15, 12);
    expect(v.per_seed.high! - v.per_seed.mean!).toBeCloseTo(12.706204736174694 * 0.05, 9);
    expect(v.pooled.diff).toBeCloseTo(0.15, 12);
    // real's executions over wmrl's: 400 / 100 and 300 / 120; seconds 300 / 100 and 90 / 40
    expect(v.fewer_executions.values).toEqual([4, 2.5]);
    expect(v.fewer_executions.mean).toBe(3.25);
    expect(v.faster.values).toEqual([3, 2.25]);
    expect(r.base.position.mean).toBe(0.5);
    const table = researchStudyTable(r);
    expect(table).toContain('| wmrl | wmrl | 1 | 2 | 0.700 [');
    expect(table).toContain('| 3.3 [');
    // no metrics.jsonl: the corrections are missing, not 0
    expect(wmrl.corrections.w_mean).toMatchObject({ mean: null, n: 0 });
    expect(table).toMatch(/\| wmrl \|.*\| n\/a \| n\/a \|$/m);
    // a run of another iteration count is not this row's
    const other = studyRun(s, { ...s.rows[0], iterations: 3 }, 1);
    writeCache(runRecord(runs, other), other.spec, { ...toy.real[1], final: evaluation(toy.real[1].positions) });
    expect(researchStudyReport(s, runs).rows[0].seeds).toEqual([0]);
  });
});
