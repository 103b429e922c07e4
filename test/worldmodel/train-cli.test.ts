// wm train as a user runs it (child processes): Ctrl-C -> checkpoint + exit 130, --resume -> the same
// model bytes as an uninterrupted run; flags and outputs are checked before the metrics file is touched.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { interruptAfterFirstMetrics, wmrlProcess } from '../cli/helpers.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-wmtrain-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const data = join(tmp, 'data');
const TRAIN = [
  'wm',
  'train',
  '--data',
  data,
  '--out',
  'm/wm.onnx',
  '--members',
  '2',
  '--hidden',
  '16',
  '--steps',
  '600',
  '--batch',
  '16',
  '--eval-every',
  '20',
  '--checkpoint-every',
  '100',
];
const cwd = (name: string) => {
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  return dir;
};
const FILES = ['m/wm.onnx', 'm/wm.json', 'm/wm.wm.json'];
/** Metrics lines without the wall-clock field. */
const metricsOf = (dir: string) =>
  readFileSync(join(dir, 'm/wm.metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => {
      const { elapsedMs: _, ...rest } = JSON.parse(l);
      return rest;
    });

beforeAll(async () => {
  const r = await wmrlProcess(tmp, 'rollout', '--task', 'push', '--episodes', '4', '--noise', '0.2', '--out', data);
  expect(r.code, r.stderr).toBe(0);
}, 60_000);

describe('wm train: resume and crash safety', () => {
  it('Ctrl-C writes a final checkpoint and exits 130; --resume finishes byte-identical to an uninterrupted run', {
    timeout: 120_000,
  }, async () => {
    const straight = cwd('straight');
    const r = await wmrlProcess(straight, ...TRAIN);
    expect(r.code, r.stderr).toBe(0);

    const cut = cwd('cut');
    const metrics = join(cut, 'm/wm.metrics.jsonl');
    const { seen, end } = await interruptAfterFirstMetrics(cut, metrics, ...TRAIN);
    expect(end.code, end.stderr).toBe(130);
    const ck = JSON.parse(readFileSync(join(cut, 'runs/wm-train-wm/checkpoint.json'), 'utf8'));
    expect(ck.step).toBeGreaterThanOrEqual(seen);
    expect(ck.step).toBeLessThan(600);
    console.log(`wm train: first metrics line at step ${seen}, Ctrl-C checkpoint at step ${ck.step}`);

    const again = await wmrlProcess(cut, ...TRAIN, '--resume');
    expect(again.code, again.stderr).toBe(0);
    for (const f of FILES) expect(readFileSync(join(cut, f)).equals(readFileSync(join(straight, f))), f).toBe(true);
    // the metrics file was cut back to the checkpoint: every line once, the same values
    expect(metricsOf(cut)).toEqual(metricsOf(straight));

    // a checkpoint of another run is refused
    const other = await wmrlProcess(cut, ...TRAIN, '--lr', '0.002', '--resume');
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(
      /--resume: the checkpoint in runs\/wm-train-wm belongs to a run with different options or data/,
    );
  });

  it('checks flags, outputs and the checkpoint before it touches the metrics file (exit 2)', {
    timeout: 60_000,
  }, async () => {
    const dir = cwd('checks');
    mkdirSync(join(dir, 'm'));
    const metrics = join(dir, 'm/wm.metrics.jsonl');
    writeFileSync(metrics, 'keep\n');
    const resume = await wmrlProcess(dir, ...TRAIN, '--resume');
    expect(resume.code).toBe(2);
    expect(resume.stderr).toContain('--resume: no checkpoint in runs/wm-train-wm');
    mkdirSync(join(dir, 'm/wm.onnx'));
    const folder = await wmrlProcess(dir, ...TRAIN);
    expect(folder.code).toBe(2);
    expect(folder.stderr).toContain('--out: m/wm.onnx is a folder, expected a file path');
    expect(readFileSync(metrics, 'utf8')).toBe('keep\n');
  });

  it('--time-budget chooses the step count once and records it (metrics, summary, checkpoint)', {
    timeout: 60_000,
  }, async () => {
    const dir = cwd('budget');
    const r = await wmrlProcess(
      dir,
      ...TRAIN,
      '--time-budget',
      '0.3',
      '--steps',
      '100000',
      '--eval-every',
      '100000',
      '--checkpoint-every',
      '100000',
      '--json',
    );
    expect(r.code, r.stderr).toBe(0);
    const [budget] = metricsOf(dir);
    expect(budget).toMatchObject({ kind: 'budget', step: 0, time_budget_s: 0.3 });
    expect(budget.steps).toBeGreaterThan(0);
    expect(budget.steps).toBeLessThan(100000);
    expect(JSON.parse(r.stdout).steps).toBe(budget.steps);
    expect(JSON.parse(readFileSync(join(dir, 'runs/wm-train-wm/checkpoint.json'), 'utf8')).info.steps).toBe(
      budget.steps,
    );
  });

  it('refuses a second writer of the same --out (exit 2)', { timeout: 60_000 }, async () => {
    const dir = cwd('busy');
    mkdirSync(join(dir, 'm'));
    writeFileSync(
      join(dir, 'm/.wm.onnx.lock'),
      JSON.stringify({ pid: process.pid, host: hostname(), command: 'wmrl wm train (test)', started: 'now' }),
    );
    const r = await wmrlProcess(dir, ...TRAIN);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      new RegExp(`--out: m/wm.onnx is being written by another wmrl command \\(pid ${process.pid} `),
    );
    expect(existsSync(join(dir, 'm/wm.metrics.jsonl'))).toBe(false);
  });

  it('stops with exit 1 after --max-nonfinite consecutive rejected steps and writes no model', {
    timeout: 60_000,
  }, async () => {
    const dir = cwd('nan');
    const r = await wmrlProcess(dir, ...TRAIN, '--lr', '1e30', '--max-nonfinite', '5');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/training stopped: 5 consecutive steps had a non-finite loss or gradient norm/);
    expect(existsSync(join(dir, 'm/wm.onnx'))).toBe(false);
  });
});
