// The in-process AutoResearch runner honours an aborted signal: it starts nothing, or stops after the
// current iteration, and writes no record (the run starts over next time); in a pool, the first failure
// stops it.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Executor } from '../../src/autoresearch/index.ts';
import { pool, RESEARCH_BASE_AGENT, researchRun, researchRunner, runRecord } from '../../src/experiment/index.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-research-runner-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const run = (name: string, iterations: number) =>
  researchRun(
    { name, row: 'wm', mode: 'wm', seed: 0, iterations, fields: { checkpointEvery: 1 } },
    RESEARCH_BASE_AGENT,
    {},
  );
const runnerIn = (runs: string, finished: string[]) =>
  researchRunner({
    runs,
    base: RESEARCH_BASE_AGENT,
    executor: new Executor(),
    schema: z.object({ iterations: z.number() }),
    finish: async (r) => {
      finished.push(r.name);
      return { iterations: r.spec.iterations };
    },
  });

describe('the in-process research runner', () => {
  it('starts nothing under an aborted signal, naming the run', async () => {
    const runs = join(tmp, 'a');
    const finished: string[] = [];
    const stop = new AbortController();
    stop.abort();
    const r = run('wm-s0', 2);
    await expect(runnerIn(runs, finished).train(r, () => {}, stop.signal)).rejects.toThrow(
      /^run wm-s0 \(row wm, seed 0, mode wm\): stopped \(another run failed\)$/,
    );
    expect(existsSync(join(runs, 'wm-s0'))).toBe(false);
    expect(finished).toEqual([]);
  });

  it('in a pool, stops after its current iteration when another run fails, with no record', {
    timeout: 120_000,
  }, async () => {
    const runs = join(tmp, 'b');
    const finished: string[] = [];
    const runner = runnerIn(runs, finished);
    const r = run('wm-s0', 50);
    let fail: () => void = () => {};
    const failing = new Promise<void>((_, reject) => {
      fail = () => reject(new Error('another run failed'));
    });
    const log = (line: string) => {
      if (/iteration 1\/50/.test(line)) fail();
    };
    await expect(pool(2, [(signal) => runner.train(r, log, signal), () => failing])).rejects.toThrow(
      'another run failed',
    );
    const lines = readFileSync(join(runs, 'wm-s0', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(lines.length).toBeLessThanOrEqual(2);
    expect(existsSync(runRecord(runs, r))).toBe(false);
    expect(finished).toEqual([]);
  });
});
