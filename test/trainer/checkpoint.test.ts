// What a resume refuses: a checkpoint of another run (an older config lacks today's options) and one
// whose parameters today's policy does not build (the old value head among them), as bad input.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import { loadTrainCheckpoint, saveTrainCheckpoint } from '../../src/nn/checkpoint-file.ts';
import type { ParamStore } from '../../src/nn/params.ts';
import { resolveConfig, train } from '../../src/trainer/index.ts';
import { setup } from './code-lock.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-ck-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const FORMAT = 'wmrl-train-checkpoint/3';
const cfg = resolveConfig('smoke', { mode: 'wmrl', iterations: 2, checkpointEvery: 1 });

/** A run cut after one iteration, its checkpoint changed by `edit`, then resumed. */
async function resumeEdited(name: string, edit: (ck: ReturnType<typeof loadTrainCheckpoint>) => void) {
  const dir = join(tmp, name);
  await train(setup(), { ...cfg, iterations: 1 }, dir);
  const ck = loadTrainCheckpoint(dir, FORMAT);
  edit(ck);
  saveTrainCheckpoint(dir, FORMAT, ck);
  return { dir, resumed: train(setup(), cfg, dir, { resume: true }) };
}

function withValueHead(s: ParamStore, width: number): void {
  s.add({ name: 'vla.value.w', shape: [width, 1], trainable: true, decay: true }, new Float32Array(width));
  s.add({ name: 'vla.value.b', shape: [1], trainable: true, decay: false }, new Float32Array(1));
}

describe('resuming a training checkpoint', () => {
  it('refuses one written before an option existed, naming the option', { timeout: 60_000 }, async () => {
    const { resumed } = await resumeEdited('old', (ck) => {
      delete (ck.run.config as Record<string, unknown>).frontier;
    });
    await expect(resumed).rejects.toThrow(InputError);
    await expect(resumed).rejects.toThrow(/different options or data: config.frontier/);
  });

  it('refuses parameters the policy does not build (the old value head), naming the file and them', {
    timeout: 60_000,
  }, async () => {
    const width = setup().policy.config.trunk.at(-1)!;
    const { dir, resumed } = await resumeEdited('value-head', (ck) => {
      withValueHead(ck.params, width);
      withValueHead(ck.extra.reference, width);
    });
    await expect(resumed).rejects.toThrow(InputError);
    await expect(resumed).rejects.toThrow(`${join(dir, 'checkpoint.json')} policy`);
    await expect(resumed).rejects.toThrow(/unexpected "vla.value.w"/);
  });
});
