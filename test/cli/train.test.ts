import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CodeVersionSchema } from '../../src/store/index.ts';
import { spawnWmrl, wmrlProcess } from './helpers.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-train-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const ROOT = join(import.meta.dirname, '../..');
const SMOKE = ['train', '--mode', 'real', '--preset', 'smoke', '--task', 'pick-place'];
const lines = (dir: string) =>
  readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) =>
      Object.fromEntries(
        Object.entries(JSON.parse(l) as Record<string, number>).filter(([k]) => !k.startsWith('time/')),
      ),
    );

describe('wmrl train (tabletop, smoke preset)', () => {
  it('--resume continues exactly: the metrics equal an uninterrupted run (time fields aside)', {
    timeout: 120_000,
  }, async () => {
    const whole = join(tmp, 'whole');
    const cut = join(tmp, 'cut');
    expect((await wmrlProcess(ROOT, ...SMOKE, '--iterations', '2', '--out', whole)).code).toBe(0);
    expect((await wmrlProcess(ROOT, ...SMOKE, '--iterations', '1', '--out', cut)).code).toBe(0);
    const r = await wmrlProcess(ROOT, 'train', '--resume', cut, '--iterations', '2', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).iteration).toBe(2);
    expect(lines(cut)).toEqual(lines(whole));
    // float32 rounding only: the sampler's baked-weight kernels and the trainer's round differently, by CPU
    // (1.19e-5 here on an AVX2 EPYC, under 1e-5 with AVX-512); a wrong weight or row is orders larger
    expect(lines(whole)[1]['losses/logp_gap']).toBeLessThan(1e-4);
  });

  it('wmrl mode with branching, fidelity and refreshes: killed (-9) after its replay wrapped, --resume ends with the metrics and policy.onnx bytes of an uninterrupted run', {
    timeout: 180_000,
  }, async () => {
    const cfg = join(tmp, 'refresh.json');
    const config = { refreshEvery: 300, refreshSteps: 10, fidelityEvery: 2, checkpointEvery: 1, replayCapacity: 150 };
    writeFileSync(cfg, JSON.stringify(config));
    const WM = ['train', '--mode', 'wmrl', '--preset', 'smoke', '--task', 'pick-place', '--config', cfg];
    const whole = join(tmp, 'wm-whole');
    const cut = join(tmp, 'wm-cut');
    expect((await wmrlProcess(ROOT, ...WM, '--iterations', '5', '--out', whole)).code).toBe(0);
    // killed as soon as iteration 3's metrics line is out: before, during or after its checkpoint commit
    const { child, done } = await spawnWmrl(ROOT, ...WM, '--iterations', '5', '--out', cut);
    const written = () =>
      existsSync(join(cut, 'metrics.jsonl')) ? readFileSync(join(cut, 'metrics.jsonl'), 'utf8') : '';
    while (written().split('\n').length <= 3) await sleep(20);
    child.kill('SIGKILL');
    expect((await done).signal).toBe('SIGKILL');
    const r = await wmrlProcess(ROOT, 'train', '--resume', cut);
    expect(r.code, r.stderr).toBe(0);
    const m = lines(whole);
    expect(m.at(-1)!['refresh/count']).toBeGreaterThanOrEqual(2);
    expect(m.every((x) => x['groups/branched'] === 1)).toBe(true);
    expect(m[1]['fidelity/h10/pairs']).toBeGreaterThan(0);
    const replay = JSON.parse(readFileSync(join(whole, 'checkpoint.json'), 'utf8')).info.refresh.replay;
    expect(replay.train).toBeGreaterThan(3 * 120); // 150 - a fifth for validation: wrapped at least 3 times
    expect(m.every((x) => x['refresh/transitions'] <= 120)).toBe(true);
    expect(lines(cut)).toEqual(m);
    expect(readFileSync(join(cut, 'policy.onnx')).equals(readFileSync(join(whole, 'policy.onnx')))).toBe(true);
  });

  it('--resume of a run other code made exits 2 naming setup.json $.code and both versions; --allow-code-change continues and records it', {
    timeout: 120_000,
  }, async () => {
    const dir = join(tmp, 'code');
    expect((await wmrlProcess(ROOT, ...SMOKE, '--iterations', '1', '--out', dir)).code).toBe(0);
    const setupPath = join(dir, 'setup.json');
    const setup = JSON.parse(readFileSync(setupPath, 'utf8'));
    // (the children's versions, not this process's: the tree may change between them where others edit it)
    expect(setup.code).toMatchObject({ source: expect.stringMatching(/^[0-9a-f]{64}$/) });
    writeFileSync(setupPath, JSON.stringify({ ...setup, code: { ...setup.code, source: 'f00d'.repeat(16) } }));
    const refused = await wmrlProcess(ROOT, 'train', '--resume', dir, '--iterations', '2');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /setup\.json: \$\.code: the run was made by source f00df00df00d .*; this is source [0-9a-f]{12} .*--allow-code-change/,
    );
    const { code: _, ...old } = setup; // a run folder from before code versions
    writeFileSync(setupPath, JSON.stringify(old));
    const unknown = await wmrlProcess(ROOT, 'train', '--resume', dir, '--iterations', '2');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/\$\.code: the run was made by unknown code/);
    const allowed = await wmrlProcess(ROOT, 'train', '--resume', dir, '--iterations', '2', '--allow-code-change');
    expect(allowed.code, allowed.stderr).toBe(0);
    const after = JSON.parse(readFileSync(setupPath, 'utf8'));
    expect(after.resumedWith).toEqual([CodeVersionSchema.parse(after.resumedWith[0])]);
    expect(after.resumedWith[0].source).not.toBe('f00d'.repeat(16));
  });

  it('a config file with a wrong field exits 2 naming the field', async () => {
    const bad = join(tmp, 'bad.json');
    writeFileSync(bad, JSON.stringify({ groupSize: 1, debias: { warmup: -3 } }));
    const r = await wmrlProcess(ROOT, ...SMOKE, '--config', bad, '--out', join(tmp, 'never'));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/groupSize/);
    expect(r.stderr).toMatch(/debias\.warmup/);
  });
});
