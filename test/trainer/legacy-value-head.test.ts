// A run checkpointed while the policy still had a value head (its parameters in the policy, the reference
// and the optimizer's moments) resumes as the same run.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTrainCheckpoint, saveTrainCheckpoint } from '../../src/nn/checkpoint-file.ts';
import type { ParamStore } from '../../src/nn/params.ts';
import { resolveConfig, train } from '../../src/trainer/index.ts';
import { metrics, setup } from './code-lock.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-legacy-ck-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const strip = (m: Record<string, number>[]) =>
  m.map((x) => Object.fromEntries(Object.entries(x).filter(([k]) => !k.startsWith('time/'))));

/** Adds the old value head's parameters (trunk width `width`) to a store. */
function withValueHead(s: ParamStore, width: number): void {
  s.add({ name: 'vla.value.w', shape: [width, 1], trainable: true, decay: true }, new Float32Array(width).fill(0.5));
  s.add({ name: 'vla.value.b', shape: [1], trainable: true, decay: false }, new Float32Array([0.25]));
}

describe('a checkpoint written with the legacy value head', () => {
  it('resumes, and the run goes on as one that never had it', { timeout: 60_000 }, async () => {
    const cfg = resolveConfig('smoke', { mode: 'wmrl', iterations: 3, checkpointEvery: 1 });
    const whole = join(tmp, 'whole');
    await train(
      setup((p) => 0.8 * p, 0.2),
      cfg,
      whole,
    );
    const cut = join(tmp, 'cut');
    await train(
      setup((p) => 0.8 * p, 0.2),
      { ...cfg, iterations: 2 },
      cut,
    );
    const format = JSON.parse(readFileSync(join(cut, 'checkpoint.json'), 'utf8')).format;
    const ck = loadTrainCheckpoint(cut, format);
    const width = setup().policy.config.trunk.at(-1)!;
    withValueHead(ck.params, width);
    withValueHead(ck.extra.reference, width);
    for (const moments of [ck.optimizer.m, ck.optimizer.v]) {
      moments.set('vla.value.w', new Float32Array(width).fill(1e-3));
      moments.set('vla.value.b', new Float32Array([1e-3]));
    }
    saveTrainCheckpoint(cut, format, ck);
    expect(JSON.parse(readFileSync(join(cut, 'checkpoint.json'), 'utf8')).trainable).toContain('vla.value.w');
    await train(
      setup((p) => 0.8 * p, 0.2),
      cfg,
      cut,
      { resume: true },
    );
    expect(strip(metrics(cut))).toEqual(strip(metrics(whole)));
    expect(readFileSync(join(cut, 'policy.onnx'))).toEqual(readFileSync(join(whole, 'policy.onnx')));
  });
});
