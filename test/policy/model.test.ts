import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ortWeb from 'onnxruntime-web';
import { afterAll, describe, expect, it } from 'vitest';
import { Graph } from '../../src/nn/ir.ts';
import { readOnnx } from '../../src/nn/onnx.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { loadPolicy, savePolicy } from '../../src/policy/model.ts';
import { PolicySampler, policyFeeds } from '../../src/policy/sampler.ts';
import { parseVlaConfig, vlaForwardBuilder } from '../../src/policy/vla.ts';
import { TOKENIZER, randomObs, tinyConfig } from './fixtures.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function saved() {
  const cfg = tinyConfig({ imageSize: [16, 16], act: 'relu' });
  const g = new Graph();
  vlaForwardBuilder(cfg)(g);
  const params = ParamStore.init(g.params, 21);
  const dir = await mkdtemp(join(tmpdir(), 'wmrl-policy-'));
  dirs.push(dir);
  const path = join(dir, 'policy.onnx');
  await savePolicy(path, cfg, params, { provenance: { producer: 'test', seed: 21 }, specHash: 'abc' });
  return { cfg, params, dir, path };
}

describe('policy model files', () => {
  it('save -> load gives bit-identical outputs; files are standard opset-18 ONNX + a sidecar', async () => {
    const { cfg, params, dir, path } = await saved();
    expect((await readdir(dir)).sort()).toEqual(['policy.json', 'policy.onnx']);
    const loaded = await loadPolicy(path);
    expect(loaded.config).toEqual(cfg);
    expect(loaded.sidecar.inputs.map((i) => i.name)).toEqual(['image', 'wrist', 'tokens', 'proprio']);
    expect(loaded.sidecar.inputs[0].shape).toEqual(['N', 16, 16, 3]);
    const summary = readOnnx(loaded.model);
    expect(summary.opset).toBe(18);
    expect(summary.ops.every((op) => /^[A-Z][A-Za-z]+$/.test(op))).toBe(true);
    const obs = randomObs(cfg, 7, 3);
    const a = await PolicySampler.create(cfg, params);
    const b = await PolicySampler.create(loaded.config, loaded.params);
    const [fa, fb] = [await a.forward(obs, 7), await b.forward(obs, 7)];
    for (const k of Object.keys(fa.logp))
      expect(Buffer.from(fb.logp[k].buffer)).toEqual(Buffer.from(fa.logp[k].buffer));
    await a.close();
    await b.close();
  });

  it('a file whose parameters do not fit the network names each wrong parameter', async () => {
    const { path, dir } = await saved();
    const side = JSON.parse(await readFile(join(dir, 'policy.json'), 'utf8'));
    side.config.trunk = [12];
    await writeFile(join(dir, 'policy.json'), JSON.stringify(side));
    await expect(loadPolicy(path)).rejects.toThrow(/"vla\.trunk\.0\.w" has shape \[\d+,8\], expected \[\d+,12\]/);
    side.config.trunk = [8];
    side.params = side.params.map((p: { name: string }) =>
      p.name === 'vla.head.grip.w' ? { ...p, name: 'vla.head.gripper.w' } : p,
    );
    await writeFile(join(dir, 'policy.json'), JSON.stringify(side));
    await expect(loadPolicy(path)).rejects.toThrow(/missing initializer "vla\.head\.gripper\.w"/);
    side.params = side.params.filter((p: { name: string }) => p.name !== 'vla.head.gripper.w');
    await writeFile(join(dir, 'policy.json'), JSON.stringify(side));
    await expect(loadPolicy(path)).rejects.toThrow(/missing "vla\.head\.grip\.w"/);
    await writeFile(join(dir, 'policy.json'), JSON.stringify({ ...side, specHash: 5 }));
    await expect(loadPolicy(path)).rejects.toThrow(/specHash/);
  });

  it('loads in onnxruntime-web (wasm backend, in Node) and matches onnxruntime-node within 1e-5', async () => {
    const { cfg, path } = await saved();
    const loaded = await loadPolicy(path);
    ortWeb.env.wasm.numThreads = 1;
    const web = await ortWeb.InferenceSession.create(loaded.model, { executionProviders: ['wasm'] });
    const node = await PolicySampler.create(loaded.config, loaded.params);
    const n = 5;
    const obs = randomObs(cfg, n, 4);
    const feeds = policyFeeds(parseVlaConfig(cfg), TOKENIZER, obs, n);
    const webFeeds = Object.fromEntries(
      Object.entries(feeds).map(([k, t]) => [
        k,
        new ortWeb.Tensor(t.type as 'float32', t.data as Float32Array, t.dims),
      ]),
    );
    const w = await web.run(webFeeds);
    const nodeOut = await node.forward(obs, n);
    let maxDiff = 0;
    for (const [k, lp] of Object.entries(nodeOut.logp)) {
      const wd = w[`logp.${k}`].data as Float32Array;
      lp.forEach((v, i) => (maxDiff = Math.max(maxDiff, Math.abs(v - wd[i]))));
    }
    console.log(`onnxruntime-web vs onnxruntime-node: max |diff| ${maxDiff.toExponential(2)}`);
    expect(maxDiff).toBeLessThanOrEqual(1e-5);
    await web.release();
    await node.close();
  });
});
