import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { dsin } from '../../src/core/dmath.ts';
import { Graph } from '../../src/nn/ir.ts';
import {
  WM_NORM,
  type WorldModelNetConfig,
  worldModelForwardBuilder,
  worldModelLossBuilder,
  worldModelNet,
  worldModelStepBuilder,
} from '../../src/nn/nets/worldmodel.ts';
import { loadWorldModel, saveWorldModel } from '../../src/nn/nets/worldmodel-file.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { floatData, tensor } from '../../src/nn/runtime.ts';
import { ForwardSession, TrainSession } from '../../src/nn/train.ts';
import { checkLoss, randValues } from './gradcheck.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const CFG: WorldModelNetConfig = { stateDim: 4, actionDim: 2, members: 3, hidden: [16, 16], act: 'silu' };

/** Toy dynamics: Δ = f(state, action) with a little noise. */
function batch(rng: Rng, k: number, n: number): { s: Float32Array; a: Float32Array; d: Float32Array } {
  const s = new Float32Array(k * n * 4);
  const a = new Float32Array(k * n * 2);
  const d = new Float32Array(k * n * 4);
  for (let i = 0; i < k * n; i++) {
    for (let j = 0; j < 4; j++) s[i * 4 + j] = rng.range(-2, 2) * 3 + 10;
    for (let j = 0; j < 2; j++) a[i * 2 + j] = rng.range(-1, 1);
    d[i * 4] = 0.1 * a[i * 2];
    d[i * 4 + 1] = 0.1 * a[i * 2 + 1];
    d[i * 4 + 2] = 0.05 * dsin(s[i * 4]) + 0.01 * rng.normal();
    d[i * 4 + 3] = 0;
  }
  return { s, a, d };
}

describe('world-model ensemble', () => {
  it('Gaussian NLL loss: gradients match float64 finite differences', async () => {
    const rng = new Rng(3);
    const k = 3;
    const n = 4;
    const values = {
      state: randValues(rng, k * n * 4),
      action: randValues(rng, k * n * 2),
      target: randValues(rng, k * n * 4),
    };
    // Random O(1) weights make this loss large (~350), so roundoff/h dominates at small h: use h = 1e-4.
    const r = await checkLoss(
      (g) => worldModelLossBuilder({ ...CFG, minLogVar: -3, maxLogVar: 1 }, n)(g).loss,
      values,
      { diff: ['state', 'action'], sample: 6, h: 1e-4 },
    );
    console.log(
      `world-model loss FD: max relative error ${r.maxRelErr.toExponential(2)} over ${r.checked} elements (${r.worst})`,
    );
    expect(r.maxRelErr, r.worst).toBeLessThanOrEqual(1e-5);
  });

  it('learns toy dynamics with normalisers; members differ; save -> load gives bit-identical outputs', async () => {
    const n = 64;
    const g0 = new Graph();
    worldModelLossBuilder(CFG, n)(g0);
    const params = ParamStore.init(g0.params, 1);
    params.set(WM_NORM.inMean, Float32Array.from([10, 10, 10, 10, 0, 0]));
    params.set(WM_NORM.inStd, Float32Array.from([3.5, 3.5, 3.5, 3.5, 0.6, 0.6]));
    params.set(WM_NORM.outStd, Float32Array.from([0.06, 0.06, 0.04, 1]));
    const ts = await TrainSession.create(worldModelLossBuilder(CFG, n), params, { optimizer: { maxGradNorm: 10 } });
    const rng = new Rng(2);
    let first = 0;
    let last = 0;
    for (let s = 0; s < 400; s++) {
      const b = batch(rng, 3, n);
      const r = await ts.step(
        {
          state: tensor('float32', b.s, [3, n, 4]),
          action: tensor('float32', b.a, [3, n, 2]),
          target: tensor('float32', b.d, [3, n, 4]),
        },
        3e-3,
      );
      if (s === 0) first = r.loss;
      last = r.loss;
    }
    console.log(`world-model NLL ${first.toFixed(3)} -> ${last.toFixed(3)}`);
    expect(last).toBeLessThan(first - 1.5);
    const trained = ts.params();
    await ts.close();
    // Buffers are fed, never updated.
    expect(Array.from(trained.get(WM_NORM.inStd))).toEqual(Array.from(params.get(WM_NORM.inStd)));

    const dir = await mkdtemp(join(tmpdir(), 'wmrl-wm-'));
    dirs.push(dir);
    const path = join(dir, 'wm.onnx');
    await saveWorldModel(path, CFG, trained, {
      provenance: { producer: 'test', seed: 1, steps: 400 },
      specHash: 'test',
    });
    expect((await readdir(dir)).sort()).toEqual(['wm.json', 'wm.onnx']); // no temp files left behind
    const loaded = await loadWorldModel(path);
    const b = batch(new Rng(9), 1, 5);
    const feeds = { state: tensor('float32', b.s, [5, 4]), action: tensor('float32', b.a, [5, 2]) };
    const f1 = await ForwardSession.create(worldModelForwardBuilder(CFG), trained);
    const f2 = await ForwardSession.create(worldModelForwardBuilder(loaded.config), loaded.params);
    const [o1, o2] = [await f1.run(feeds), await f2.run(feeds)];
    for (const k of ['mean', 'logvar', 'delta_mean', 'delta_var']) {
      expect(o1[k].dims).toEqual([3, 5, 4]);
      expect(Buffer.from(floatData(o2[k]).buffer)).toEqual(Buffer.from(floatData(o1[k]).buffer));
    }
    const mean = floatData(o1.mean);
    expect(mean.slice(0, 20)).not.toEqual(mean.slice(20, 40)); // members are different networks
    // The stepping graph (log-variance half never computed) gives the same Δ mean up to float32 rounding.
    const f3 = await ForwardSession.create(worldModelStepBuilder(CFG), trained);
    const o3 = await f3.run(feeds);
    expect(Object.keys(o3)).toEqual(['delta_mean']);
    const [full, step] = [floatData(o1.delta_mean), floatData(o3.delta_mean)];
    for (let i = 0; i < full.length; i++)
      expect(Math.abs(step[i] - full[i]), `delta_mean[${i}]`).toBeLessThanOrEqual(1e-6 * (1 + Math.abs(full[i])));
    await f3.close();
    await f1.close();
    await f2.close();

    // A sidecar whose normaliser disagrees with the initializers is refused, naming the normaliser.
    const side = JSON.parse(await readFile(join(dir, 'wm.json'), 'utf8'));
    side.normalizers.target.std[0] = 123;
    await writeFile(join(dir, 'wm.json'), JSON.stringify(side));
    await expect(loadWorldModel(path)).rejects.toThrow(/normalizer "target"/);
  });

  it('rejects inputs of the wrong width and an inverted log-variance range', () => {
    const g = new Graph();
    expect(() => worldModelForwardBuilder(CFG)(g)).not.toThrow();
    const net = (s: number, a: number) => () => {
      const gr = new Graph();
      return worldModelNet(gr.input('state', [3, 5, s]), gr.input('action', [3, 5, a]), CFG);
    };
    expect(net(4, 2)).not.toThrow();
    expect(net(5, 2)).toThrow(/state has 5 features, config says 4/);
    expect(net(4, 3)).toThrow(/action has 3 features, config says 2/);
    const g2 = new Graph();
    expect(() => worldModelLossBuilder({ ...CFG, minLogVar: 2, maxLogVar: 1 }, 4)(g2)).toThrow(/minLogVar/);
  });
});
