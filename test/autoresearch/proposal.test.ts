import { describe, expect, it } from 'vitest';
import { Executor, PAD, VOCAB, ladder, loadTask, programTokens, runProposal } from '../../src/autoresearch/index.ts';

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
});
