// A policy reading the front and wrist cameras, as a user makes and uses one: collect, pretrain --cameras
// front,wrist, eval, and a WMRL iteration (physics and world-model envs render both cameras); bad
// --cameras values exit 2 naming the flag.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJson, wmrlProcess } from './helpers.ts';

const ROOT = join(import.meta.dirname, '../..');
let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'wmrl-cameras-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a front+wrist policy from the command line', () => {
  it('pretrain --cameras front,wrist makes one; eval and train run it', { timeout: 180_000 }, async () => {
    const data = join(dir, 'demos');
    await runJson(['collect', '--task', 'pick-place', '--episodes', '2', '--out', data, '--json']);
    const model = join(dir, 'two.onnx');
    const common = ['--data', data, '--size', 'tiny', '--steps', '4', '--batch', '8', '--log-every', '2'];
    const p = await runJson([
      'pretrain',
      ...common,
      '--cameras',
      'front,wrist',
      '--out',
      model,
      '--run-dir',
      join(dir, 'run'),
      '--json',
    ]);
    expect(p.steps).toBe(4);
    const sidecar = JSON.parse(readFileSync(join(dir, 'two.json'), 'utf8'));
    expect(sidecar.config.cameras).toEqual(['image_front', 'image_wrist']);
    const report = await runJson([
      'eval',
      '--policy',
      model,
      '--task',
      'pick-place',
      '--episodes',
      '2',
      '--out',
      join(dir, 'eval'),
      '--json',
    ]);
    expect(report.results.overall.episodes).toBe(2);
    const train = await wmrlProcess(
      ROOT,
      'train',
      '--mode',
      'wmrl',
      '--preset',
      'smoke',
      '--task',
      'pick-place',
      '--policy',
      model,
      '--iterations',
      '1',
      '--out',
      join(dir, 'train'),
      '--json',
    );
    expect(train.code, train.stderr).toBe(0);
    expect(JSON.parse(train.stdout).iteration).toBe(1);

    const unknown = await wmrlProcess(
      ROOT,
      'pretrain',
      ...common,
      '--cameras',
      'front,side',
      '--out',
      join(dir, 'x.onnx'),
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--cameras: unknown camera "side"; scene "tabletop" has front, wrist/);
    const three = await wmrlProcess(ROOT, 'pretrain', ...common, '--cameras', 'front,wrist,front', '--out', 'y.onnx');
    expect(three.code).toBe(2);
    expect(three.stderr).toMatch(/--cameras: a policy reads at most 2 cameras/);
  });
});
