// The study core: the pool that stops at the first failure (with real child processes), run and study
// stamps, evaluation caches (stale, corrupt, atomic), metrics with missing values, and the statistics.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InputError } from '../../src/core/errors.ts';
import {
  across,
  cached,
  meanCurve,
  meanMetric,
  metric,
  paired,
  pool,
  readCache,
  readMetrics,
  stampStudy,
  sumMetric,
  trainRuns,
  versusSeeds,
  writeCache,
  checkStamp,
  writeStamp,
  type StudyRun,
} from '../../src/experiment/index.ts';
import { SimulatedCrash } from '../../src/store/index.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-study-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let made = 0;
const folder = () => {
  const dir = join(tmp, `case-${made++}`);
  mkdirSync(dir, { recursive: true });
  return dir;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the pool', () => {
  it('starts nothing after a failure, aborts the running tasks and throws the failure', async () => {
    const started: number[] = [];
    const aborted: number[] = [];
    const task = (k: number) => async (signal: AbortSignal) => {
      started.push(k);
      if (k === 1) throw new Error('task 1 failed');
      await new Promise<void>((done) => {
        const t = setTimeout(done, 2000);
        signal.addEventListener('abort', () => {
          clearTimeout(t);
          aborted.push(k);
          done();
        });
      });
    };
    await expect(pool(2, [0, 1, 2, 3, 4].map(task))).rejects.toThrow('task 1 failed');
    expect(started).toEqual([0, 1]);
    expect(aborted).toEqual([0]);
  });

  it('runs every task, at most `jobs` at once, when none fails', async () => {
    let running = 0;
    let most = 0;
    const done: number[] = [];
    const task = (k: number) => async () => {
      most = Math.max(most, ++running);
      await sleep(5);
      running--;
      done.push(k);
    };
    await pool(2, [0, 1, 2, 3, 4].map(task));
    expect(done.sort()).toEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(2);
  });
});

describe('a failed `wmrl train` child stops the study', () => {
  it('names the run (row, seed, mode) and its exit code; no later child starts; a running one is stopped', {
    timeout: 60_000,
  }, async () => {
    const runs = folder();
    const starts = join(runs, 'starts.log');
    // a stand-in for bin/wmrl.mjs: notes each start once it can be stopped (SIGINT, as Ctrl-C: it notes
    // that and exits 130); the run of seed 1 fails once seed 0's has started, the others take 20 s
    const bin = join(runs, 'fake-wmrl.mjs');
    writeFileSync(
      bin,
      `import { appendFileSync, readFileSync } from 'node:fs';
const log = ${JSON.stringify(starts)};
const out = process.argv[process.argv.indexOf('--out') + 1];
process.on('SIGINT', () => { appendFileSync(log, 'stopped ' + out + '\\n'); process.exit(130); });
appendFileSync(log, 'start ' + out + '\\n');
const fail = () => { console.error('boom: the trainer broke'); process.exit(3); };
if (out.endsWith('-s1')) setInterval(() => readFileSync(log, 'utf8').includes('-s0\\n') && fail(), 10);
else setTimeout(() => {}, 20000);
`,
    );
    const run = (seed: number): StudyRun<any> => ({
      name: `wmrl-s${seed}`,
      row: 'wmrl',
      mode: 'wmrl',
      seed,
      spec: { mode: 'wmrl', seed, iterations: 2, fields: {}, tasks: ['tabletop/push'], preset: 'smoke' },
    });
    const paths = { runs, report: runs, policy: 'p.onnx', worldModel: 'w.onnx', bin };
    const failure = trainRuns(paths, [0, 1, 2, 3].map(run), 2, () => {});
    await expect(failure).rejects.toThrow(
      /run wmrl-s1 \(row wmrl, seed 1, mode wmrl\): wmrl train .* exited with code 3/,
    );
    await expect(failure).rejects.toThrow(/boom: the trainer broke/);
    // the stopped child writes its line as it exits: wait for it (bounded) rather than a fixed pause
    for (let k = 0; k < 100 && !readFileSync(starts, 'utf8').includes('stopped'); k++) await sleep(50);
    const log = readFileSync(starts, 'utf8').trim().split('\n');
    // the two children boot side by side, so either may note its start first
    const started = log.filter((l) => l.startsWith('start')).map((l) => l.split('/').at(-1));
    expect(started.sort()).toEqual(['wmrl-s0', 'wmrl-s1']);
    expect(log.some((l) => l.startsWith('stopped') && l.endsWith('wmrl-s0'))).toBe(true);
  });
});

describe('run and study stamps', () => {
  const run = (iterations: number): StudyRun<object> => ({
    name: 'mix-s0',
    row: 'mix',
    mode: 'mix',
    seed: 0,
    spec: { iterations, fields: { horizon: 10 } },
  });

  it('a run stamped with other settings is refused, naming the fields that differ', () => {
    const path = join(folder(), 'mix-s0.stamp.json');
    expect(checkStamp(path, run(4))).toBe(false);
    writeStamp(path, run(4));
    expect(checkStamp(path, run(4))).toBe(true);
    expect(() => checkStamp(path, run(6))).toThrow(InputError);
    expect(() => checkStamp(path, run(6))).toThrow(
      /run mix-s0 \(row mix, seed 0, mode mix\) was made with other settings \(iterations\)/,
    );
  });

  it('a runs folder keeps its shared settings; a row may join, a changed row must be renamed', () => {
    const runs = folder();
    type Row = { name: string; mode: string; config: object; versus: string[] };
    const rows: Row[] = [{ name: 'a', mode: 'mix', config: {}, versus: [] }];
    stampStudy(runs, { episodes: 4 }, rows);
    stampStudy(runs, { episodes: 4 }, [...rows, { name: 'b', mode: 'wmrl', config: {}, versus: ['a'] } as Row]);
    expect(() => stampStudy(runs, { episodes: 8 }, rows)).toThrow(/share other settings \(episodes\)/);
    expect(() => stampStudy(runs, { episodes: 4 }, [{ ...rows[0], config: { horizon: 5 } } as Row])).toThrow(
      /row "a" was trained with other settings/,
    );
    // what a row is paired against does not decide its runs
    stampStudy(runs, { episodes: 4 }, [{ ...rows[0], versus: ['b'] } as Row]);
  });
});

describe('evaluation caches', () => {
  const Value = z.object({ outcomes: z.array(z.number()) });
  const key = (episodes: number) => ({ policy: 'sha', episodes, seed: 0 });

  it('a cache of another episode count is stale: recomputed, never returned', async () => {
    const path = join(folder(), 'eval.json');
    let computed = 0;
    const make = (n: number) => async () => ({ outcomes: Array.from({ length: n }, () => ++computed) });
    expect(await cached(path, key(2), Value, make(2))).toEqual({ outcomes: [1, 2] });
    expect(await cached(path, key(2), Value, make(2))).toEqual({ outcomes: [1, 2] });
    expect(readCache(path, key(3), Value)).toBeNull();
    expect(await cached(path, key(3), Value, make(3))).toEqual({ outcomes: [3, 4, 5] });
    expect(readCache(path, key(2), Value)).toBeNull();
  });

  it('a corrupt cache is an InputError naming the file and the field', () => {
    const path = join(folder(), 'eval.json');
    writeCache(path, key(2), { outcomes: [1, 'x'] });
    expect(() => readCache(path, key(2), Value)).toThrow(InputError);
    expect(() => readCache(path, key(2), Value)).toThrow(`${path}: $.value.outcomes[1]`);
    writeFileSync(path, '{"format": "wmrl-cache/1", "key": ');
    expect(() => readCache(path, key(2), Value)).toThrow(new RegExp(`${path}: cache is not valid JSON`));
  });

  it('is written atomically: a write stopped at any point leaves the old value or the new one', () => {
    const dir = folder();
    const path = join(dir, 'eval.json');
    for (let boundary = 0; boundary < 8; boundary++) {
      writeCache(path, key(1), { outcomes: [0] });
      let crashed = false;
      try {
        writeCache(
          path,
          key(1),
          { outcomes: [1] },
          {
            fault: (b) => {
              if (b === boundary) throw new SimulatedCrash(`at ${b}`);
            },
          },
        );
      } catch (e) {
        if (!(e instanceof SimulatedCrash)) throw e;
        crashed = true;
      }
      const seen = readCache(path, key(1), Value);
      expect([[0], [1]]).toContainEqual(seen?.outcomes);
      if (!crashed) expect(seen?.outcomes).toEqual([1]);
      expect(readdirSync(dir).filter((f) => f !== 'eval.json')).toEqual([]);
    }
  });
});

describe('metrics with missing values', () => {
  it('a value written as null or left out stays missing: never summed or averaged as 0', () => {
    const dir = folder();
    const clock = { 'time/physics_s': 1, 'time/world_model_s': 0, 'time/training_s': 0, 'time/refresh_s': 0 };
    const line = (iteration: number, extra: object) => ({
      iteration,
      ...clock,
      'steps/physics': 1,
      'steps/world_model': 0,
      ...extra,
    });
    const lines = [
      line(1, { 'debias/bias_before': null, 'denoise/w': 1 }),
      line(2, { 'debias/bias_before': -0.5, 'denoise/w': 3 }),
      line(3, { 'debias/bias_before': -0.1 }),
    ];
    writeFileSync(join(dir, 'metrics.jsonl'), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    const m = readMetrics(dir);
    expect(metric(m[0], 'debias/bias_before')).toBeNull();
    expect(meanMetric(m, 'debias/bias_before')).toBeCloseTo(-0.3, 12);
    expect(meanMetric(m, 'denoise/w')).toBe(2);
    expect(sumMetric(m, 'groups/debias_changed')).toBeNull();
    writeFileSync(join(dir, 'metrics.jsonl'), `${JSON.stringify({ ...lines[0], 'denoise/w': 'one' })}\n`);
    expect(() => readMetrics(dir)).toThrow(
      /metrics\.jsonl line 1: \$\["denoise\/w"\]|metrics\.jsonl line 1: \$\.denoise\/w/,
    );
  });
});

describe('statistics over seeds', () => {
  it('between seeds: missing values left out and counted; none gives no mean', () => {
    const a = across([0.2, null, 0.4, undefined]);
    expect(a).toMatchObject({ values: [0.2, 0.4], n: 2 });
    expect(a.mean).toBeCloseTo(0.3, 12);
    // t(1) = 12.706 times sd 0.1414 / sqrt 2
    expect(a.high! - a.mean!).toBeCloseTo(12.706 * 0.1, 3);
    expect(across([0.5])).toEqual({ mean: 0.5, low: null, high: null, values: [0.5], n: 1 });
    expect(across([null, null])).toEqual({ mean: null, low: null, high: null, values: [], n: 0 });
    expect(
      meanCurve([
        [1, null, 3],
        [3, 4],
      ]),
    ).toEqual([2, 4, 3]);
  });

  it('paired differences refuse unequal lengths with an error naming what was paired', () => {
    expect(paired([1, 0, 1], [0, 0, 1], 'x').diff).toBeCloseTo(1 / 3, 12);
    expect(() => paired([1, 0, 1], [0, 0], 'wmrl-s2 vs the base')).toThrow(
      /wmrl-s2 vs the base: 3 vs 2 episodes; a paired difference needs the same evaluation episodes/,
    );
  });

  it('a row against another: the mean of per-seed differences and one difference over every episode', () => {
    const mine = [
      { seed: 0, o: [1, 1, 0, 0] },
      { seed: 1, o: [1, 1, 1, 1] },
    ];
    const theirs = [
      { seed: 0, o: [1, 0, 0, 0] },
      { seed: 1, o: [1, 1, 0, 0] },
    ];
    const v = versusSeeds(
      'mix',
      [
        [mine[0], theirs[0]],
        [mine[1], theirs[1]],
      ],
      (r) => r.o,
    );
    expect(v.seeds).toBe(2);
    expect(v.per_seed.values).toEqual([0.25, 0.5]);
    expect(v.pooled.diff).toBeCloseTo(0.375, 12);
    expect(v.pooled.episodes).toBe(8);
    expect(() => versusSeeds('mix', [[mine[0], { seed: 0, o: [1] }]], (r) => r.o)).toThrow(
      /mix, seed 0: 4 vs 1 episodes/,
    );
  });
});
