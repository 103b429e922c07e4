import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAMILIES, type ProgramInput, ProgramSchema, checkProgram } from '../../src/autoresearch/dsl.ts';
import { loadTask } from '../../src/autoresearch/data-file.ts';
import { resolveParams } from '../../src/autoresearch/learners.ts';
import { macroF1, metricScore, preprocess, runProgram } from '../../src/autoresearch/runner.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const P = (p: ProgramInput) => ProgramSchema.parse(p);
/** Fast settings per family. */
const FAST: Record<(typeof FAMILIES)[number], ProgramInput> = {
  mlp: { model: 'mlp', scale: 'standard', params: { hidden: 16, layers: 1, epochs: 20, lr: 0.01 } },
  tree: { model: 'tree', params: { depth: 4 } },
  forest: { model: 'forest', params: { trees: 10, depth: 4 } },
  knn: { model: 'knn', scale: 'standard', params: { k: 5 } },
  bayes: { model: 'bayes' },
  logistic: { model: 'logistic', scale: 'standard', params: { epochs: 20, lr: 0.01 } },
  linear: { model: 'linear', scale: 'standard' },
};

describe('runProgram', () => {
  const iris = loadTask('iris-species');
  const cars = loadTask('cars-mpg');

  for (const task of [iris, cars]) {
    for (const f of FAMILIES) {
      const program = P(FAST[f]);
      if (checkProgram(program, task)) continue;
      it(`${f} runs on ${task.spec.id} and gives the same scores on a second run`, async () => {
        const a = await runProgram(task, program, 3);
        const b = await runProgram(task, program, 3);
        expect(Number.isFinite(a.validation) && Number.isFinite(a.test)).toBe(true);
        expect(a.trainMs).toBeGreaterThanOrEqual(0);
        expect([b.validation, b.test]).toEqual([a.validation, a.test]);
        if (task.kind === 'classification')
          expect(a.validation).toBeGreaterThan(0.5); // three balanced classes: chance is 1/3
        else expect(a.validation).toBeLessThan(8); // mpg spread is ~7.8
      });
    }
  }

  it('seeded families depend on the seed', async () => {
    const forest = P({ model: 'forest', params: { trees: 10, depth: 4 } });
    const mlp = P(FAST.mlp);
    const runs = await Promise.all([
      runProgram(cars, forest, 1),
      runProgram(cars, forest, 2),
      runProgram(cars, mlp, 1),
      runProgram(cars, mlp, 2),
    ]);
    expect(runs[0].validation).not.toBe(runs[1].validation);
    expect(runs[2].validation).not.toBe(runs[3].validation);
  });

  it('refuses invalid programs', async () => {
    await expect(runProgram(iris, P({ model: 'linear' }), 0)).rejects.toThrow(/linear is a regressor/);
    await expect(runProgram(cars, P({ model: 'bayes' }), 0)).rejects.toThrow(/bayes is a classifier/);
    await expect(runProgram(iris, P({ model: 'tree', params: { k: 5 } }), 0)).rejects.toThrow(/tree does not take k/);
    await expect(runProgram(iris, P({ model: 'knn', params: { k: 500 } }), 0)).rejects.toThrow(
      /exceeds the 90 training rows/,
    );
    await expect(runProgram(iris, { model: 'svm' } as never, 0)).rejects.toThrow(/invalid program/);
    await expect(runProgram(iris, P({ model: 'tree' }), 0.5)).rejects.toThrow(/seed/);
  });

  it('fills defaults and never caps huge hyperparameters', () => {
    expect(resolveParams(P({ model: 'forest', params: { trees: 5000 } }))).toMatchObject({ trees: 5000, depth: 8 });
    expect(resolveParams(P({ model: 'mlp', params: { hidden: 4096, epochs: 100000 } }))).toMatchObject({
      hidden: 4096,
      epochs: 100000,
      layers: 2,
      lr: 0.01,
    });
  });
});

describe('preprocessing', () => {
  const penguins = loadTask('penguins-species');
  const base = P({ model: 'knn' });

  it('one-hot and ordinal encodings, feature subsets and dropped rows shape the matrices', () => {
    const onehot = preprocess(penguins, base);
    expect(onehot.names).toContain('island=Biscoe');
    expect(onehot.names.length).toBe(4 + 3 + 2);
    expect(preprocess(penguins, P({ model: 'knn', encode: 'ordinal' })).names).toEqual([
      'island',
      'beak_length',
      'beak_depth',
      'flipper_length',
      'body_mass',
      'sex',
    ]);
    expect(preprocess(penguins, P({ model: 'knn', features: 'numeric' })).names).toEqual([
      'beak_length',
      'beak_depth',
      'flipper_length',
      'body_mass',
    ]);
    expect(preprocess(penguins, P({ model: 'knn', features: 'top3' })).names.length).toBe(3);
    expect(preprocess(penguins, P({ model: 'knn', features: 'top6' })).names.length).toBe(6);
    const dropped = preprocess(penguins, P({ model: 'knn', impute: 'drop' }));
    expect(dropped.train.x.length).toBeLessThan(penguins.trainRows);
    expect(dropped.validation.x.length).toBe(penguins.split.validation.length); // validation and test rows are always scored
    expect(onehot.train.x.flat().every(Number.isFinite)).toBe(true);
    expect(onehot.test.x.flat().every(Number.isFinite)).toBe(true);
  });

  it('mean and median imputation fill differently; scaling uses training statistics only', () => {
    const mean = preprocess(penguins, P({ model: 'knn', features: 'numeric' }));
    const median = preprocess(penguins, P({ model: 'knn', features: 'numeric', impute: 'median' }));
    const rows = (d: typeof mean) => [...d.train.x, ...d.validation.x, ...d.test.x];
    expect(rows(median)).not.toEqual(rows(mean));
    const std = preprocess(penguins, P({ model: 'knn', features: 'numeric', scale: 'standard' }));
    for (let j = 0; j < 4; j++) {
      const col = std.train.x.map((r) => r[j]);
      const m = col.reduce((a, b) => a + b, 0) / col.length;
      expect(Math.abs(m)).toBeLessThan(1e-9);
      expect(Math.sqrt(col.reduce((s, v) => s + (v - m) ** 2, 0) / col.length)).toBeCloseTo(1, 9);
    }
    const mm = preprocess(penguins, P({ model: 'knn', features: 'numeric', scale: 'minmax' }));
    expect(Math.min(...mm.train.x.flat())).toBe(0);
    expect(Math.max(...mm.train.x.flat())).toBe(1);
  });

  it('changes results: scaling for k-NN, encoding for naive Bayes, feature subsets for linear regression', async () => {
    const [raw, scaled] = await Promise.all([
      runProgram(penguins, P({ model: 'knn' }), 0),
      runProgram(penguins, P({ model: 'knn', scale: 'standard' }), 0),
    ]);
    expect(scaled.validation).toBeGreaterThan(raw.validation);
    const [onehot, ordinal] = await Promise.all([
      runProgram(penguins, P({ model: 'bayes' }), 0),
      runProgram(penguins, P({ model: 'bayes', encode: 'ordinal' }), 0),
    ]);
    expect(onehot.validation).not.toBe(ordinal.validation);
    const cars = loadTask('cars-mpg');
    const [all, top3] = await Promise.all([
      runProgram(cars, P({ model: 'linear' }), 0),
      runProgram(cars, P({ model: 'linear', features: 'top3' }), 0),
    ]);
    expect(top3.validation).not.toBe(all.validation);
  });
});

describe('metrics', () => {
  it('accuracy, RMSE and macro-F1', () => {
    expect(metricScore('accuracy', [0, 1, 2, 2], [0, 1, 1, 2], 3)).toBe(0.75);
    expect(metricScore('rmse', [1, 2], [1, 4], 0)).toBeCloseTo(Math.sqrt(2), 12);
    expect(() => metricScore('rmse', [1], [NaN], 0)).toThrow(/non-finite/);
    // class 0: tp 1 fp 0 fn 1 -> 2/3; class 1: tp 1 fp 1 fn 0 -> 2/3; class 2 absent everywhere: skipped
    expect(macroF1([0, 0, 1], [0, 1, 1], 3)).toBeCloseTo(2 / 3, 12);
    expect(macroF1([0, 0, 0, 1], [0, 0, 0, 0], 2)).toBeCloseTo((6 / 7 + 0) / 2, 12);
  });
});

interface Child {
  code: number;
  stdout: string;
  stderr: string;
}

function runChild(input: string): Promise<Child> {
  return new Promise((done) => {
    const child = execFile(
      'node',
      ['bin/run-ts.mjs', 'src/autoresearch/run-child.ts'],
      { cwd: ROOT },
      (err, stdout, stderr) => {
        done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
    child.stdin!.end(input);
  });
}

describe('run-child.ts (spawned like the executor does)', () => {
  it('reads JSON on stdin and prints one JSON line with the scores runProgram gives', async () => {
    const program = P({ model: 'tree', encode: 'ordinal', params: { depth: 4 } });
    const r = await runChild(JSON.stringify({ task: 'iris-species', program, seed: 0 }));
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines.length).toBe(1);
    const out = JSON.parse(lines[0]);
    expect(Object.keys(out).sort()).toEqual(['test', 'trainMs', 'validation']);
    const direct = await runProgram(loadTask('iris-species'), program, 0);
    expect([out.validation, out.test]).toEqual([direct.validation, direct.test]);
  });

  it('exits non-zero with the reason on stderr for a bad program or bad input', async () => {
    const bad = await runChild(JSON.stringify({ task: 'iris-species', program: { model: 'linear' }, seed: 0 }));
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/linear is a regressor/);
    const unknown = await runChild(JSON.stringify({ task: 'nope', program: { model: 'tree' }, seed: 0 }));
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown AutoResearch task/);
    const garbage = await runChild('not json');
    expect(garbage.code).toBe(2);
    expect(garbage.stderr).toMatch(/not JSON/);
  });
});
