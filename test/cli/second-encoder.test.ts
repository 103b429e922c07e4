// `wmrl pretrain --cameras front,wrist --second-encoder light` as a user runs it: the policy file's config
// carries the second camera's own encoder (secondConv), so eval loads and runs it as it is; the choice is
// part of the resume key only when it is not the default; light without two cameras and unknown kinds exit 2
// naming the flag.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPolicy } from '../../src/policy/model.ts';
import { runJson, wmrlProcess } from './helpers.ts';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'wmrl-second-encoder-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('pretrain --second-encoder', () => {
  it('light makes a front+wrist policy with its own wrist encoder that eval runs; the run key names it', {
    timeout: 180_000,
  }, async () => {
    const data = join(dir, 'demos');
    await runJson(['collect', '--task', 'pick-place', '--episodes', '2', '--out', data, '--json']);
    const common = ['--data', data, '--size', 'tiny', '--steps', '4', '--batch', '8', '--log-every', '2'];
    const two = ['--cameras', 'front,wrist'];
    const model = join(dir, 'light.onnx');
    const run = join(dir, 'run');
    const p = await runJson([
      'pretrain',
      ...common,
      ...two,
      '--second-encoder',
      'light',
      '--out',
      model,
      '--run-dir',
      run,
      '--json',
    ]);
    expect(p.steps).toBe(4);
    const sidecar = JSON.parse(readFileSync(join(dir, 'light.json'), 'utf8'));
    expect(sidecar.config.cameras).toEqual(['image_front', 'image_wrist']);
    // tiny's encoder ends on an 8x8 map: the patches, then one stride-2 conv
    expect(sidecar.config.secondConv).toEqual([
      { out: 16, k: 4, stride: 4, pad: 0 },
      { out: 16, k: 3, stride: 2, pad: 1 },
    ]);
    expect(sidecar.provenance.notes).toMatch(/light second-camera encoder/);
    expect((await loadPolicy(model)).params.names.filter((n) => n.startsWith('vla.cam1.conv'))).toHaveLength(4);
    const report = await runJson([
      'eval',
      '--policy',
      model,
      '--task',
      'pick-place',
      '--episodes',
      '1',
      '--out',
      join(dir, 'eval'),
      '--json',
    ]);
    expect(report.results.overall.episodes).toBe(1);

    // the run folder belongs to the light network: shared (the default) is another run
    const other = await wmrlProcess(dir, 'pretrain', ...common, ...two, '--out', model, '--run-dir', run, '--resume');
    expect(other.code, other.stderr).toBe(2);
    expect(other.stderr).toMatch(/--resume: .*different options or data: secondEncoder/);
    // and a shared run's key has no secondEncoder: the flag spelled out resumes a run made without it
    const plain = join(dir, 'plain.onnx');
    const run2 = join(dir, 'run2');
    await runJson(['pretrain', ...common, ...two, '--out', plain, '--run-dir', run2, '--json']);
    expect(JSON.parse(readFileSync(join(dir, 'plain.json'), 'utf8')).config.secondConv).toBeUndefined();
    const again = await wmrlProcess(
      dir,
      'pretrain',
      ...common,
      ...two,
      '--second-encoder',
      'shared',
      '--out',
      join(dir, 'plain2.onnx'),
      '--run-dir',
      run2,
      '--resume',
    );
    expect(again.code, again.stderr).toBe(0);

    const heavy = await wmrlProcess(dir, 'pretrain', ...common, ...two, '--second-encoder', 'heavy', '--out', 'y.onnx');
    expect(heavy.code).toBe(2);
    expect(heavy.stderr).toMatch(/--second-encoder: .*"shared"\|"light" \(got "heavy"\)/);
    const one = await wmrlProcess(
      dir,
      'pretrain',
      ...common,
      '--second-encoder',
      'light',
      '--out',
      join(dir, 'x.onnx'),
    );
    expect(one.code).toBe(2);
    expect(one.stderr).toMatch(
      /--second-encoder: light is the second camera's own encoder, but the policy reads 1 camera \(front\)/,
    );
  });
});
