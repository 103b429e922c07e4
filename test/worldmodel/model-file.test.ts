import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Graph } from '../../src/nn/ir.ts';
import { type WorldModelNetConfig, worldModelForwardBuilder } from '../../src/nn/nets/worldmodel.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { SimulatedCrash } from '../../src/store/index.ts';
import {
  ActionCoder,
  loadWmModel,
  metaPath,
  saveWmModel,
  stateLayout,
  updateWmMeta,
} from '../../src/worldmodel/index.ts';
import { scene, specOf } from './helpers.ts';

const root = mkdtempSync(join(tmpdir(), 'wmrl-wmfile-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const spec = specOf('tabletop/push');
const layout = stateLayout(scene.objects);
const config: WorldModelNetConfig = {
  stateDim: layout.featureDim,
  actionDim: new ActionCoder(spec).dim,
  outDim: layout.stateDim,
  members: 2,
  hidden: [8],
  act: 'silu',
};

function params(seed: number): ParamStore {
  const g = new Graph();
  worldModelForwardBuilder(config)(g);
  return ParamStore.init(g.params, seed);
}
const meta = (command: string) => ({ objects: scene.objects.map((o) => o.name), specs: { [spec.id]: spec }, command });

describe('world-model files: .onnx, .json and .wm.json are one commit', () => {
  it('a crash at every write boundary leaves the old model or the new one, never a new network with old metadata', async () => {
    const labels: string[] = [];
    await saveWmModel(join(root, 'probe.onnx'), config, params(1), meta('v1'), 1, 1, {
      fault: (_k, w) => labels.push(w),
    });
    expect(labels.filter((l) => l.startsWith('rename'))).toEqual([
      'rename probe.onnx',
      'rename probe.json',
      'rename probe.wm.json',
    ]);
    for (let k = 0; k <= labels.length; k++) {
      const dir = join(root, `k${k}`);
      const path = join(dir, 'wm.onnx');
      await saveWmModel(path, config, params(1), meta('v1'), 1, 1);
      const run = saveWmModel(path, config, params(2), meta('v2'), 2, 2, {
        fault: (b) => {
          if (b === k) throw new SimulatedCrash();
        },
      });
      if (k < labels.length) await expect(run).rejects.toThrow(SimulatedCrash);
      else await run;
      const m = await loadWmModel(path);
      const v = k <= labels.indexOf('commit') ? 1 : 2;
      expect(m.meta.command, `crash at ${labels[k] ?? 'none'}`).toBe(`v${v}`);
      const want = params(v);
      for (const name of want.names)
        expect(Buffer.from(m.params.get(name).buffer)).toEqual(Buffer.from(want.get(name).buffer));
      expect(readdirSync(dir).sort()).toEqual(['wm.json', 'wm.onnx', 'wm.wm.json']);
    }
  });

  it('refuses a hand-edited NAME.wm.json; updateWmMeta rewrites it with its hash', async () => {
    const path = join(root, 'edit', 'wm.onnx');
    await saveWmModel(path, config, params(1), meta('v1'), 1, 1);
    const { meta: m } = await loadWmModel(path);
    await updateWmMeta(path, { ...m, report: { eval: { n: 1 } } });
    expect((await loadWmModel(path)).meta.report).toEqual({ eval: { n: 1 } });
    writeFileSync(metaPath(path), JSON.stringify({ ...m, command: 'edited' }));
    await expect(loadWmModel(path)).rejects.toThrow(
      `${metaPath(path)}: does not match parts["wm.wm.json"] in ${join(root, 'edit', 'wm.json')}`,
    );
  });
});
