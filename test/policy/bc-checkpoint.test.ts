import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { CodeLockEnv } from '../../src/env/toys.ts';
import { Graph } from '../../src/nn/ir.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { sha256Hex, SimulatedCrash } from '../../src/store/index.ts';
import { type BcCheckpoint, loadBcCheckpoint, saveBcCheckpoint } from '../../src/policy/bc-checkpoint.ts';
import { vlaConfigFromSpec } from '../../src/policy/spec-config.ts';
import { WordTokenizer } from '../../src/policy/tokenizer.ts';
import { vlaForwardBuilder } from '../../src/policy/vla.ts';

const root = mkdtempSync(join(tmpdir(), 'wmrl-bcck-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

const SIZES = {
  conv: [{ out: 4, k: 3, stride: 2, pad: 1 }],
  imageFeatures: 16,
  embedDim: 8,
  proprioHidden: 4,
  trunk: [32],
};
const config = vlaConfigFromSpec(
  new CodeLockEnv(1).spec,
  WordTokenizer.fromCorpus(['enter 0 1 2 3 4 5'], { maxLength: 6 }).config,
  SIZES,
);

/** A checkpoint whose every value depends on `step`. */
function checkpoint(step: number): BcCheckpoint {
  const g = new Graph();
  vlaForwardBuilder(config)(g);
  const params = ParamStore.init(g.params, step);
  const rng = new Rng(step, 5);
  const m = new Map<string, Float32Array>();
  const v = new Map<string, Float32Array>();
  for (const p of g.params.filter((q) => q.trainable)) {
    m.set(
      p.name,
      Float32Array.from(params.get(p.name), () => rng.normal()),
    );
    v.set(
      p.name,
      Float32Array.from(params.get(p.name), () => rng.uniform()),
    );
  }
  return { step, config, run: { seed: 1 }, params, optimizer: { step, m, v } };
}

function expectCheckpoint(got: BcCheckpoint, want: BcCheckpoint, what: string): void {
  expect(got.step, what).toBe(want.step);
  expect(got.optimizer.step, what).toBe(want.optimizer.step);
  for (const name of want.params.names)
    expect(Buffer.from(got.params.get(name).buffer), `${what}: ${name}`).toEqual(
      Buffer.from(want.params.get(name).buffer),
    );
  for (const [name, a] of want.optimizer.m)
    expect(Buffer.from(got.optimizer.m.get(name)!.buffer), what).toEqual(Buffer.from(a.buffer));
  for (const [name, a] of want.optimizer.v)
    expect(Buffer.from(got.optimizer.v.get(name)!.buffer), what).toEqual(Buffer.from(a.buffer));
}

describe('BC checkpoints: checkpoint.bin + checkpoint.json in one commit', () => {
  it('a crash at every write boundary, then recovery and load, gives exactly the previous or exactly the new checkpoint', () => {
    const labels: string[] = [];
    saveBcCheckpoint(join(root, 'probe'), checkpoint(1), { fault: (_k, what) => labels.push(what) });
    const [older, newer] = [checkpoint(10), checkpoint(20)];
    for (let k = 0; k <= labels.length; k++) {
      const dir = join(root, `c${n++}`);
      saveBcCheckpoint(dir, older);
      const save = () =>
        saveBcCheckpoint(dir, newer, {
          fault: (b) => {
            if (b === k) throw new SimulatedCrash();
          },
        });
      if (k < labels.length) expect(save).toThrow(SimulatedCrash);
      else save();
      const got = loadBcCheckpoint(dir);
      expectCheckpoint(got, k <= labels.indexOf('commit') ? older : newer, `crash at ${labels[k] ?? 'none'}`);
      expect(readdirSync(dir).sort()).toEqual(['checkpoint.bin', 'checkpoint.json']);
    }
  });

  it('refuses random bytes of the right size in checkpoint.bin, naming the file and the field', () => {
    const dir = join(root, 'random');
    saveBcCheckpoint(dir, checkpoint(3));
    const bin = join(dir, 'checkpoint.bin');
    const size = readFileSync(bin).length;
    const rng = new Rng(77);
    writeFileSync(
      bin,
      Uint8Array.from({ length: size }, () => rng.int(256)),
    );
    expect(() => loadBcCheckpoint(dir)).toThrow(
      `${bin}: sha256 does not match binSha256 in ${join(dir, 'checkpoint.json')}`,
    );
  });

  it('refuses non-finite values on load and never writes them', () => {
    const dir = join(root, 'nan');
    const ck = checkpoint(4);
    saveBcCheckpoint(dir, ck);
    const bad = checkpoint(5);
    const name = bad.params.names[0];
    bad.params.get(name)[2] = Number.POSITIVE_INFINITY;
    expect(() => saveBcCheckpoint(dir, bad)).toThrow(
      `saveTrainCheckpoint: refusing to write params "${name}"[2] = Infinity`,
    );
    expectCheckpoint(loadBcCheckpoint(dir), ck, 'after the refused save');
    // A .bin with a NaN and a matching hash (written by something else) is refused on load.
    const bin = join(dir, 'checkpoint.bin');
    const bytes = new Float32Array(new Uint8Array(readFileSync(bin)).buffer);
    bytes[bytes.length - 1] = Number.NaN;
    const raw = new Uint8Array(bytes.buffer);
    writeFileSync(bin, raw);
    const json = JSON.parse(readFileSync(join(dir, 'checkpoint.json'), 'utf8'));
    writeFileSync(join(dir, 'checkpoint.json'), JSON.stringify({ ...json, binSha256: sha256Hex(raw) }));
    expect(() => loadBcCheckpoint(dir)).toThrow(
      /checkpoint\.bin: AdamW v ".*"\[\d+\] is NaN \(a checkpoint must hold finite values\)/,
    );
  });

  it('refuses a checkpoint of another format or a truncated one, naming the field', () => {
    const dir = join(root, 'format');
    saveBcCheckpoint(dir, checkpoint(6));
    const path = join(dir, 'checkpoint.json');
    const json = JSON.parse(readFileSync(path, 'utf8'));
    writeFileSync(path, JSON.stringify({ ...json, format: 'wmrl-bc-checkpoint/1' }));
    expect(() => loadBcCheckpoint(dir)).toThrow(
      `${path}: format: "wmrl-bc-checkpoint/1", expected "wmrl-bc-checkpoint/2"`,
    );
    const { binSha256: _, ...old } = json;
    writeFileSync(path, JSON.stringify(old));
    expect(() => loadBcCheckpoint(dir)).toThrow(`${path}: $.binSha256`);
  });
  it('a checkpoint written while the policy had a value head loads without its parameters', () => {
    const dir = join(root, `c${n++}`);
    const want = checkpoint(3);
    const legacy = checkpoint(3);
    const width = SIZES.trunk.at(-1)!;
    legacy.params.add(
      { name: 'vla.value.w', shape: [width, 1], trainable: true, decay: true },
      new Float32Array(width),
    );
    legacy.params.add({ name: 'vla.value.b', shape: [1], trainable: true, decay: false }, new Float32Array(1));
    for (const moments of [legacy.optimizer.m, legacy.optimizer.v]) {
      moments.set('vla.value.w', new Float32Array(width));
      moments.set('vla.value.b', new Float32Array(1));
    }
    saveBcCheckpoint(dir, legacy);
    const got = loadBcCheckpoint(dir);
    expect(got.params.names).toEqual(want.params.names);
    expectCheckpoint(got, want, 'legacy');
  });
});
