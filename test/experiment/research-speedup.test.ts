// The AutoResearch speedup (a configuration of the study core): the shared speedup on toy curves with
// answers by hand, paired finals that refuse unequal lengths, and its caches (stale, refused).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import {
  agentEvalKey,
  HELDOUT_RESEARCH_TASKS,
  RESEARCH_BASE_AGENT,
  ResearchSpeedupSchema,
  readAgentEval,
  researchRun,
  researchRunner,
  researchSpeedupReport,
  runRecord,
  writeCache,
  writeResearchReport,
} from '../../src/experiment/index.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-research-speedup-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A held-out evaluation whose episodes (per task) have these test positions. */
const evaluation = (perTask: number[][]) =>
  perTask.map((perEpisode, k) => {
    const m = perEpisode.reduce((a, b) => a + b, 0) / perEpisode.length;
    return {
      task: HELDOUT_RESEARCH_TASKS[k],
      episodes: perEpisode.length,
      testPosition: m,
      ciLow: m - 0.1,
      ciHigh: m + 0.1,
      validShare: 1,
      reward: 1,
      statuses: {},
      executions: perEpisode.length,
      perEpisode,
    };
  });
/** A curve point of mean position p (both tasks at p, interval ±0.1). */
const point = (iteration: number, seconds: number, executions: number, p: number) => ({
  iteration,
  seconds,
  executions,
  position: p,
  ciLow: p - 0.1,
  ciHigh: p + 0.1,
  perTask: evaluation([[p], [p]]),
});
const modeRun = (mode: 'real' | 'wmrl', curve: ReturnType<typeof point>[]) => ({
  mode,
  iterations: curve.at(-1)!.iteration,
  seconds: curve.at(-1)!.seconds,
  executions: curve.at(-1)!.executions,
  curve,
});
const config = ResearchSpeedupSchema.parse({ seed: 0 });
const finals = (base: number[], real: number[], wmrl: number[]): [string, ReturnType<typeof evaluation>][] => [
  ['base', evaluation([base, base])],
  ['real', evaluation([real, real])],
  ['wmrl', evaluation([wmrl, wmrl])],
];

describe('the AutoResearch speedup', () => {
  const real = modeRun('real', [point(4, 200, 240, 0.6), point(8, 400, 480, 0.6)]);
  const base = point(0, 0, 0, 0.5);

  it("is the studies' one: real's cost to reach its own fitted final position over wmrl's", () => {
    // real fits flat at 0.6: it reaches its target at its first point (200 s, 240 executions). wmrl's
    // 0.62, 0.58, 0.7 fit to 0.6, 0.6, 0.7: it reaches 0.6 at its first point (50 s, 60 executions)
    const wmrl = modeRun('wmrl', [point(4, 50, 60, 0.62), point(8, 100, 120, 0.58), point(12, 150, 180, 0.7)]);
    const r = researchSpeedupReport(config, base, [real, wmrl], finals([0.5, 0.5], [0.6, 0.7], [0.7, 0.7]));
    expect(r.speedup.wall).toMatchObject({ target: 0.6, real_at: 200, run_at: 50, estimate: 4 });
    expect(r.speedup.executions).toMatchObject({ target: 0.6, real_at: 240, run_at: 60, estimate: 4 });
    // (real's whole run over wmrl's first point at or above real's last one, the definition that went,
    // would say 400 / 50 = 8)
    expect(r.speedup.wall.low).toBeLessThanOrEqual(4);
    expect(r.speedup.wall.high).toBeGreaterThanOrEqual(4);
    const [b, re, wm] = r.final;
    expect(b.vsBase.diff).toBe(0);
    expect(re.vsBase.diff).toBeCloseTo(0.15, 12); // (0.1 + 0.2 + 0.1 + 0.2) / 4
    expect(wm.vsReal?.diff).toBeCloseTo(0.05, 12); // (0.1 + 0 + 0.1 + 0) / 4
    expect(re.vsReal).toBeNull();
  });

  it('is not reached when wmrl never gets to real’s fitted final position; the report says so', () => {
    const wmrl = modeRun('wmrl', [point(4, 50, 60, 0.5), point(8, 100, 120, 0.55)]);
    const r = researchSpeedupReport(config, base, [real, wmrl], finals([0.5], [0.6], [0.55]));
    expect(r.speedup.wall).toMatchObject({ estimate: null, run_at: null, target: 0.6 });
    const files = writeResearchReport(join(tmp, 'report'), r, 'wmrl experiment speedup --suite autoresearch');
    expect(files.md).toMatch(/seed0\.md$/);
    expect(files.json).toMatch(/report-seed0\.json$/);
  });

  it('refuses final evaluations of unequal lengths, naming them, rather than pairing them', () => {
    const wmrl = modeRun('wmrl', [point(4, 50, 60, 0.6)]);
    expect(() => researchSpeedupReport(config, base, [real, wmrl], finals([0.5, 0.5], [0.6], [0.6, 0.6]))).toThrow(
      /final evaluation of base vs real: 4 vs 2 episodes/,
    );
  });
});

describe('its caches', () => {
  it('an evaluation cached for another episode count is stale', () => {
    const path = join(tmp, 'base-eval-seed0.json');
    writeCache(path, agentEvalKey(RESEARCH_BASE_AGENT, { episodes: 8, seed: 0 }), evaluation([[0.5], [0.6]]));
    expect(readAgentEval(path, RESEARCH_BASE_AGENT, { episodes: 8, seed: 0 })?.[1].perEpisode).toEqual([0.6]);
    expect(readAgentEval(path, RESEARCH_BASE_AGENT, { episodes: 16, seed: 0 })).toBeNull();
    expect(readAgentEval(path, RESEARCH_BASE_AGENT, { episodes: 8, seed: 1 })).toBeNull();
  });

  it('a finished mode run of another episode count is refused, naming the field; nothing trains', async () => {
    const runs = join(tmp, 'runs');
    const run = (episodes: number) =>
      researchRun(
        { name: 'real-seed0', row: 'real', mode: 'real', seed: 0, iterations: 8, fields: {} },
        RESEARCH_BASE_AGENT,
        {
          evalEvery: 4,
          episodes,
        },
      );
    writeCache(runRecord(runs, run(8)), run(8).spec, { anything: 1 });
    const runner = researchRunner({
      runs,
      base: RESEARCH_BASE_AGENT,
      executor: undefined as never,
      schema: ResearchSpeedupSchema.pick({ seed: true }).partial().passthrough(),
      finish: () => Promise.reject(new Error('must not train')),
    });
    await runner.train(run(8), () => {}); // finished: nothing to do
    const stale = runner.train(run(16), () => {});
    await expect(stale).rejects.toThrow(InputError);
    await expect(runner.train(run(16), () => {})).rejects.toThrow(
      /real-seed0\/run\.json: the run there was made with other settings \(extra\.episodes\)/,
    );
  });
});
