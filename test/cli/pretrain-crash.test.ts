// pretrain as a user runs it (child processes): Ctrl-C writes a final checkpoint and exits 130, --resume
// then finishes to the same bytes as an uninterrupted run; bad outputs, a second writer and a diverging
// run are refused before or instead of writing files.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { interruptAfterFirstMetrics, wmrlProcess } from './helpers.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-pretrain-crash-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const data = join(tmp, 'demos');
const TRAIN = [
  '--data',
  data,
  '--out',
  'm/bc.onnx',
  '--run-dir',
  'run',
  '--steps',
  '120',
  '--batch',
  '8',
  '--size',
  'tiny',
  '--log-every',
  '1',
  '--checkpoint-every',
  '40',
  '--no-counterfactual',
];
const cwd = (name: string) => {
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  return dir;
};

beforeAll(async () => {
  const c = await wmrlProcess(tmp, 'collect', '--task', 'pick-place', '--episodes', '2', '--out', data);
  expect(c.code, c.stderr).toBe(0);
}, 60_000);

describe('pretrain: crash safety', () => {
  it('Ctrl-C writes a final checkpoint and exits 130; --resume finishes byte-identical to an uninterrupted run', {
    timeout: 120_000,
  }, async () => {
    const straight = cwd('straight');
    const r = await wmrlProcess(straight, 'pretrain', ...TRAIN);
    expect(r.code, r.stderr).toBe(0);

    const cut = cwd('cut');
    const metrics = join(cut, 'run', 'metrics.jsonl');
    const { seen, end } = await interruptAfterFirstMetrics(cut, metrics, 'pretrain', ...TRAIN);
    expect(end.code, end.stderr).toBe(130);
    expect(end.stderr).toMatch(/interrupted at step \d+: checkpoint in run \(continue with --resume\)/);
    const ck = JSON.parse(readFileSync(join(cut, 'run', 'checkpoint.json'), 'utf8'));
    expect(ck.step).toBeGreaterThanOrEqual(seen);
    expect(ck.step).toBeLessThan(120);
    console.log(`pretrain: first metrics line at step ${seen}, Ctrl-C checkpoint at step ${ck.step}`);
    expect(existsSync(join(cut, 'm', 'bc.onnx'))).toBe(false);

    const again = await wmrlProcess(cut, 'pretrain', ...TRAIN, '--resume');
    expect(again.code, again.stderr).toBe(0);
    for (const f of ['m/bc.onnx', 'm/bc.json'])
      expect(readFileSync(join(cut, f)).equals(readFileSync(join(straight, f))), f).toBe(true);
    // the resumed metrics file holds each step once, in order
    const steps = readFileSync(join(cut, 'run', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).step);
    expect(steps).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
  });

  it('refuses outputs that cannot be written, and a second writer of the run folder, before any work (exit 2)', {
    timeout: 60_000,
  }, async () => {
    const dir = cwd('bad-out');
    mkdirSync(join(dir, 'm', 'bc.onnx'), { recursive: true });
    const r = await wmrlProcess(dir, 'pretrain', ...TRAIN);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error: --out: m/bc.onnx is a folder, expected a file path');
    expect(existsSync(join(dir, 'run'))).toBe(false);

    const busy = cwd('busy');
    mkdirSync(join(busy, 'run'));
    writeFileSync(
      join(busy, 'run', '.wmrl.lock'),
      JSON.stringify({
        pid: process.pid,
        host: (await import('node:os')).hostname(),
        command: 'wmrl pretrain (test)',
        started: 'now',
      }),
    );
    writeFileSync(join(busy, 'run', 'metrics.jsonl'), '{"step":1}\n');
    const b = await wmrlProcess(busy, 'pretrain', ...TRAIN);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(
      new RegExp(`--run-dir: run is being written by another wmrl command \\(pid ${process.pid} `),
    );
    expect(readFileSync(join(busy, 'run', 'metrics.jsonl'), 'utf8')).toBe('{"step":1}\n');
  });

  it('stops with exit 1 after --max-nonfinite consecutive rejected steps and writes no model', {
    timeout: 60_000,
  }, async () => {
    const dir = cwd('nan');
    const r = await wmrlProcess(dir, 'pretrain', ...TRAIN, '--lr', '1e30', '--max-nonfinite', '5');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/training stopped: 5 consecutive steps had a non-finite loss or gradient norm/);
    expect(existsSync(join(dir, 'm', 'bc.onnx'))).toBe(false);
  });
});
