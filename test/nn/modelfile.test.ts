import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import { Graph } from '../../src/nn/ir.ts';
import { loadModel, saveModel } from '../../src/nn/modelfile.ts';
import { type WorldModelNetConfig, worldModelForwardBuilder } from '../../src/nn/nets/worldmodel.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { SimulatedCrash } from '../../src/store/index.ts';

const root = mkdtempSync(join(tmpdir(), 'wmrl-modelfile-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const CFG: WorldModelNetConfig = { stateDim: 3, actionDim: 2, members: 2, hidden: [8], act: 'silu' };

function params(seed: number): ParamStore {
  const g = new Graph();
  worldModelForwardBuilder(CFG)(g);
  return ParamStore.init(g.params, seed);
}

const save = (path: string, seed: number, extra = '', fault?: (k: number, what: string) => void) =>
  saveModel(path, worldModelForwardBuilder(CFG), params(seed), {
    kind: 'test',
    config: CFG,
    provenance: { producer: 'test', seed },
    specHash: 'spec',
    parts: [{ path: path.replace(/\.onnx$/, '.extra.json'), data: `{"seed": ${seed}${extra}}\n` }],
    commit: fault ? { fault } : undefined,
  });

describe('model files: .onnx + sidecar + extra parts in one commit', () => {
  it('a crash at every write boundary leaves a loadable model: exactly the old one or exactly the new one', async () => {
    const labels: string[] = [];
    await save(join(root, `probe.onnx`), 1, '', (_k, what) => labels.push(what));
    expect(labels.indexOf('commit')).toBe(4);
    for (let k = 0; k <= labels.length; k++) {
      const dir = join(root, `m${n++}`);
      const path = join(dir, 'm.onnx');
      await save(path, 1);
      const run = save(path, 2, '', (b) => {
        if (b === k) throw new SimulatedCrash();
      });
      if (k < labels.length) await expect(run).rejects.toThrow(SimulatedCrash);
      else await run;
      const m = await loadModel(path, 'test');
      const seed = k <= labels.indexOf('commit') ? 1 : 2;
      expect(m.sidecar.provenance.seed, `crash at ${labels[k] ?? 'none'}`).toBe(seed);
      const want = params(seed);
      for (const name of want.names)
        expect(Buffer.from(m.params.get(name).buffer)).toEqual(Buffer.from(want.get(name).buffer));
      expect(new TextDecoder().decode(m.parts['m.extra.json'])).toBe(`{"seed": ${seed}}\n`);
      expect(readdirSync(dir).sort()).toEqual(['m.extra.json', 'm.json', 'm.onnx']);
    }
  });

  it('a kill between the .onnx and the .json rename no longer makes the model unloadable', async () => {
    const path = join(root, 'kill', 'm.onnx');
    await save(path, 1);
    await expect(
      save(path, 2, '', (_b, what) => {
        if (what === 'rename m.json') throw new SimulatedCrash();
      }),
    ).rejects.toThrow(SimulatedCrash);
    expect((await loadModel(path)).sidecar.provenance.seed).toBe(2);
  });

  it('refuses an edited part or .onnx, naming the file and the sidecar field', async () => {
    const path = join(root, 'edit', 'm.onnx');
    await save(path, 1);
    writeFileSync(join(root, 'edit', 'm.extra.json'), '{"seed": 9}\n');
    await expect(loadModel(path)).rejects.toThrow(InputError);
    await expect(loadModel(path)).rejects.toThrow(
      `${join(root, 'edit', 'm.extra.json')}: does not match parts["m.extra.json"] in ${join(root, 'edit', 'm.json')}`,
    );
    await save(path, 1);
    const onnx = readFileSync(path);
    onnx[onnx.length - 1] ^= 1;
    writeFileSync(path, onnx);
    await expect(loadModel(path)).rejects.toThrow(
      `${path}: does not match onnxHash in ${join(root, 'edit', 'm.json')}`,
    );
  });

  it('never writes non-finite parameters; the files already there stay', async () => {
    const path = join(root, 'nan', 'm.onnx');
    await save(path, 1);
    const bad = params(2);
    bad.get(bad.names[0])[0] = Number.NaN;
    await expect(
      saveModel(path, worldModelForwardBuilder(CFG), bad, {
        kind: 'test',
        config: CFG,
        provenance: { producer: 'test', seed: 2 },
        specHash: 'spec',
      }),
    ).rejects.toThrow(`saveModel: refusing to write ${path}: parameter "${bad.names[0]}" [0] is NaN`);
    expect((await loadModel(path)).sidecar.provenance.seed).toBe(1);
    expect(readdirSync(join(root, 'nan')).sort()).toEqual(['m.extra.json', 'm.json', 'm.onnx']);
  });
});
