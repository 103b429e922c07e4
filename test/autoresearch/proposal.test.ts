import { type ChildProcess, spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  Executor,
  type Outcome,
  PAD,
  type ProgramInput,
  VOCAB,
  ladder,
  loadTask,
  programTokens,
  runProposal,
} from '../../src/autoresearch/index.ts';

const executor = new Executor({ concurrency: 2 });

describe('proposals through the sandbox', () => {
  it('absurd budgets in valid programs are stopped at their limits and scored by the ladder; the harness keeps running', {
    timeout: 120_000,
  }, async () => {
    const cars = loadTask('cars-mpg');
    const [forest, mlp] = await Promise.all([
      runProposal(executor, cars, programTokens({ model: 'forest', budget: 'small', params: { trees: 5000 } }), 0),
      runProposal(
        executor,
        loadTask('seattle-weather'),
        programTokens({ model: 'mlp', budget: 'small', params: { hidden: 4096, epochs: 100000 } }),
        0,
      ),
    ]);
    expect(forest.status).toBe('no_result');
    expect(forest.feedback).toContain('timeout');
    expect(ladder(forest.status)).toBe(0.2);
    expect(['no_result', 'runtime_error']).toContain(mlp.status);
    const after = await runProposal(executor, cars, programTokens({ model: 'linear', scale: 'standard' }), 0);
    expect(after.status).toBe('valid');
    expect(after.position).toBeGreaterThanOrEqual(0);
    expect(after.position).toBeLessThanOrEqual(1);
  });

  it('malformed and invalid programs are scored without running', async () => {
    const iris = loadTask('iris-species');
    const noEnd = Int32Array.from(programTokens({ model: 'tree' }), (t) =>
      VOCAB[t] === 'end' ? VOCAB.indexOf(PAD) : t,
    );
    const malformed = await runProposal(executor, iris, noEnd, 0);
    expect(malformed.status).toBe('malformed');
    expect(malformed.wallMs).toBe(0);
    const invalid = await runProposal(executor, iris, programTokens({ model: 'linear' }), 0);
    expect(invalid.status).toBe('invalid');
    expect(invalid.feedback).toContain('regressor');
  });

  it('the same program and seed give the same scores (a run is a function of its program, task and seed)', {
    timeout: 60_000,
  }, async () => {
    const p = programTokens({ model: 'forest', params: { trees: 10 } });
    const task = loadTask('penguins-species');
    const [a, b] = await Promise.all([runProposal(executor, task, p, 5), runProposal(executor, task, p, 5)]);
    expect([a.status, a.validation, a.test]).toEqual([b.status, b.validation, b.test]);
  });

  it('a run the wall-clock backstop stops is run again, then refused: never recorded as no_result', {
    timeout: 60_000,
  }, async () => {
    const p = programTokens({ model: 'forest', params: { trees: 200 } });
    await expect(runProposal(executor, loadTask('penguins-species'), p, 0, { wallMs: 300 })).rejects.toThrow(
      /wall-clock backstop \(0\.3 s\) stopped .* 3 times.*before its CPU-time limit \(10 s\).*no outcome was recorded/,
    );
  });

  it('a batch of executions gives the same records with two busy processes beside it as without', {
    timeout: 120_000,
  }, async () => {
    const batch: [string, ProgramInput][] = [
      ['penguins-species', { model: 'forest', params: { trees: 50 } }],
      ['cars-mpg', { model: 'linear', scale: 'standard' }],
      ['iris-species', { model: 'knn', params: { k: 5 } }],
      // stopped at its CPU-time limit (4 s), loaded or not
      ['cars-mpg', { model: 'forest', budget: 'small', params: { trees: 5000 } }],
    ];
    const records = async () =>
      (await Promise.all(batch.map(([task, p]) => runProposal(executor, loadTask(task), programTokens(p), 3)))).map(
        ({ wallMs: _, ...o }: Outcome) => o,
      );
    const quiet = await records();
    expect(quiet.map((o) => o.status)).toEqual(['valid', 'valid', 'valid', 'no_result']);
    // two spinners, each ending by itself after 60 s (and killed when the batch is done)
    const spin = 'const end = Date.now() + 60000; while (Date.now() < end);';
    const busy: ChildProcess[] = [0, 1].map(() => spawn(process.execPath, ['-e', spin], { stdio: 'ignore' }));
    try {
      expect(await records()).toEqual(quiet);
    } finally {
      for (const b of busy) b.kill('SIGKILL');
    }
  });
});
