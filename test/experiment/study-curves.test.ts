import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import { curvesTable, plateauOf, runCurve, studyCurves, writeCurvesReport } from '../../src/experiment/study-curves.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-curves-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// a real metrics line (the viewer fixture's) without its evaluation keys, as the template of every line
const FIXTURE = join(import.meta.dirname, '../fixtures/viewer/wmrl-seed1/metrics.jsonl');
const template = Object.fromEntries(
  Object.entries(JSON.parse(readFileSync(FIXTURE, 'utf8').split('\n')[0])).filter(([k]) => !k.startsWith('eval')),
);
const evalKeys = (at: string, push: number, stack: number) => ({
  [`${at}/success`]: (push + stack) / 2,
  [`${at}/ci_low`]: 0,
  [`${at}/ci_high`]: 1,
  [`${at}/progress`]: 0.5,
  [`${at}/episodes`]: 8,
  [`${at}/success/tabletop/push`]: push,
  [`${at}/success/tabletop/stack`]: stack,
});

/** A run folder with evaluations at iterations 2, 4, ... of (push, stack) successes. */
function run(name: string, evals: [number, number][], before: [number, number]): string {
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  const lines = Array.from({ length: 2 * evals.length }, (_, k) => ({
    ...template,
    iteration: k + 1,
    step: k + 1,
    ...(k === 0 && evalKeys('eval_initial', ...before)),
    ...(k % 2 === 1 && evalKeys('eval', ...evals[(k - 1) / 2])),
  }));
  writeFileSync(join(dir, 'metrics.jsonl'), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  return dir;
}

describe('held-out learning curves of a study', () => {
  const study = join(tmp, 'study');
  run(
    'study/a-s1',
    [
      [0.5, 0.25],
      [0.75, 0.5],
      [0.75, 0.5],
    ],
    [0.25, 0],
  );
  run(
    'study/a-s2',
    [
      [0.25, 0.25],
      [0.5, 0.5],
    ],
    [0.25, 0],
  ); // one evaluation fewer: stopped early
  run(
    'study/b-s1',
    [
      [0.5, 0],
      [0.5, 0],
      [1, 0],
    ],
    [0.25, 0],
  );

  // the code each run was made by: a's two seeds by different code
  const setup = (name: string, source: string, commit: string) =>
    writeFileSync(join(study, name, 'setup.json'), JSON.stringify({ code: { source, commit, clean: true } }));
  setup('a-s1', 'a'.repeat(64), '1'.repeat(40));
  setup('a-s2', 'b'.repeat(64), '2'.repeat(40));
  setup('b-s1', 'a'.repeat(64), '1'.repeat(40));

  it('a run: the before-training values at 0, then every evaluation line, per task', () => {
    const c = runCurve(join(study, 'a-s1'));
    expect(c.map((p) => p.iteration)).toEqual([0, 2, 4, 6]);
    expect(c[1]).toEqual({ iteration: 2, overall: 0.375, tasks: { 'tabletop/push': 0.5, 'tabletop/stack': 0.25 } });
  });

  it('a row: the mean over its seeds at the iterations every seed reached; absent rows are left out', () => {
    const [a, b] = studyCurves(study, ['a', 'b', 'missing'], [1, 2, 3]);
    expect(a.seeds).toEqual([1, 2]);
    expect(a.points.map((p) => p.iteration)).toEqual([0, 2, 4]);
    expect(a.points[1].tasks['tabletop/push']).toBeCloseTo(0.375, 12);
    expect(a.points[2].overall).toBeCloseTo(0.5625, 12);
    expect(b.seeds).toEqual([1]);
    expect(a.code).toEqual([`1111111 (source ${'a'.repeat(12)})`, `2222222 (source ${'b'.repeat(12)})`]);
    expect(b.code).toEqual([`1111111 (source ${'a'.repeat(12)})`]);
    expect(studyCurves(study, ['missing'], [1])).toEqual([]);
  });

  it('the plateau: the first evaluation from which the isotonic fit stays within 2 points of its end', () => {
    const at = (ys: number[]) => plateauOf(ys.map((overall, k) => ({ iteration: 10 * k, overall, tasks: {} })));
    expect(at([0.5, 0.6, 0.7, 0.7, 0.7])).toBe(20);
    expect(at([0.5, 0.6, 0.69, 0.7])).toBe(20); // within 2 points of 0.7
    expect(at([0.5, 0.8, 0.6, 0.7])).toBe(10); // the fit pools the dip: 0.5, 0.7, 0.7, 0.7
    expect(at([0.5, 0.5, 0.5])).toBe(0);
    expect(plateauOf([])).toBeNull();
  });

  it('the table and the page name every row, and a bad line names its file and line', () => {
    const curves = studyCurves(study, ['a', 'b'], [1, 2]);
    const md = curvesTable(curves);
    expect(md).toContain('| iteration | a (2 seeds) | b (1 seed) |');
    expect(md).toContain(`| b | 1 | 1111111 (source ${'a'.repeat(12)}) | 6 | 6 | 100.0 | 0.0 | 50.0 |`);
    const files = writeCurvesReport(join(tmp, 'out'), curves, 'the command');
    expect(readFileSync(files.html!, 'utf8')).toContain('<svg');
    expect(JSON.parse(readFileSync(files.json, 'utf8')).command).toBe('the command');
    const bad = run('bad', [[0.5, 0.5]], [0, 0]);
    writeFileSync(join(bad, 'metrics.jsonl'), `${readFileSync(join(bad, 'metrics.jsonl'), 'utf8')}{"iteration":"x"}\n`);
    expect(() => runCurve(bad)).toThrow(InputError);
    expect(() => runCurve(bad)).toThrow(/metrics\.jsonl:3: not a metrics line/);
  });
});
