// Policy files written while the VLA still built a value head (no loss trained it, nothing read it) load
// without it, and the policy they hold is the same bit for bit: the agent files in models/ and the
// keypoints16 base shipped before role pooling (kept as a fixture) are such files.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { DYN, Graph, type Tensor } from '../../src/nn/ir.ts';
import * as L from '../../src/nn/layers.ts';
import { loadModel, saveModel } from '../../src/nn/modelfile.ts';
import { writeOnnx } from '../../src/nn/onnx.ts';
import * as o from '../../src/nn/ops.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { Session, floatData, tensor } from '../../src/nn/runtime.ts';
import { loadPolicy } from '../../src/policy/model.ts';
import { LEGACY_VALUE_HEAD, POLICY_KIND } from '../../src/policy/model-bytes.ts';
import { PolicySampler, policyFeeds } from '../../src/policy/sampler.ts';
import { VLA_IO, type VlaConfig, parseVlaConfig, vlaForwardBuilder } from '../../src/policy/vla.ts';
import { randomObs, tinyConfig } from './fixtures.ts';

const LEGACY_BASE = 'test/fixtures/legacy/vla-base.onnx';
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** The graph as it was written with a value head: today's network, then a linear layer on the trunk
 *  (the input of the first head's, or the autoregressive projection's, weights) as output "value". */
function legacyBuilder(config: VlaConfig): (g: Graph) => Record<string, Tensor> {
  return (g) => {
    const out = vlaForwardBuilder(config)(g);
    const first = config.autoregressive ? 'vla.ar.proj.w' : `vla.head.${config.actions[0].name}.w`;
    const node = g.nodes.find((n) => {
      const w = n.inputs[1]?.source;
      return n.op === 'MatMul' && w?.kind === 'param' && w.name === first;
    });
    const trunk = node!.inputs[0];
    const value = L.linear(trunk, 'vla.value', 1, { std: 1 / Math.sqrt(trunk.shape[1]) });
    return { ...out, value: o.reshape(value, [DYN]) };
  };
}

/** The stored graph run as it is (value output and all) next to today's sampler on the loaded
 *  parameters: every log-probability must be the same float. */
async function expectSameLogp(path: string, n = 9): Promise<void> {
  const p = await loadPolicy(path);
  const stored = await Session.create(p.model);
  const sampler = await PolicySampler.create(p.config, p.params);
  const obs = randomObs(p.config, n, 5);
  const feeds = policyFeeds(p.config, sampler.tokenizer, obs, n);
  let tokens: Record<string, Int32Array> | undefined;
  if (p.config.autoregressive) {
    const rng = new Rng(6);
    tokens = Object.fromEntries(
      p.config.actions.map((a) => [a.name, Int32Array.from({ length: n }, () => rng.int(a.n))]),
    );
    for (const [name, t] of Object.entries(tokens)) feeds[VLA_IO.action(name)] = tensor('int32', t, [n]);
  }
  const old = await stored.run(feeds);
  expect(Object.keys(old)).toContain('value'); // the stored graph still computes it
  const now = await sampler.forward(obs, n, tokens);
  for (const a of p.config.actions) {
    const before = floatData(old[VLA_IO.logp(a.name)]) as Float32Array;
    expect(Buffer.from(now.logp[a.name].buffer), `${path} logp.${a.name}`).toEqual(Buffer.from(before.buffer));
  }
  await sampler.close();
  await stored.close();
}

describe('policy files with the legacy value head', () => {
  it('a file with value-head parameters and `valueHead: true` loads without them, giving the same log-probabilities', async () => {
    const cfg = tinyConfig({ imageSize: [16, 16] });
    const g = new Graph();
    legacyBuilder(cfg)(g);
    const params = ParamStore.init(g.params, 4);
    expect(params.names).toEqual(expect.arrayContaining([...LEGACY_VALUE_HEAD]));
    const dir = await mkdtemp(join(tmpdir(), 'wmrl-legacy-'));
    dirs.push(dir);
    const path = join(dir, 'policy.onnx');
    await saveModel(path, legacyBuilder(cfg), params, {
      kind: POLICY_KIND,
      config: { ...cfg, valueHead: true },
      provenance: { producer: 'test', seed: 4 },
      specHash: 'abc',
    });
    const loaded = await loadPolicy(path);
    expect(loaded.config).toEqual(cfg);
    expect('valueHead' in loaded.config).toBe(false);
    expect(loaded.params.names).toEqual(params.names.filter((n) => !LEGACY_VALUE_HEAD.includes(n)));
    await expectSameLogp(path);
  });

  it.each([LEGACY_BASE, 'models/agent-base.onnx', 'models/agent-weak.onnx'])(
    '%s (written with the head) loads without it and gives the stored graph its log-probabilities bit for bit',
    async (path) => {
      const sidecar = JSON.parse(await readFile(path.replace(/\.onnx$/, '.json'), 'utf8'));
      expect(sidecar.config.valueHead).toBe(true);
      await expectSameLogp(path);
    },
  );

  it("the keypoints16 base is today's graph plus the legacy value head, byte for byte (its config re-serialises less that key)", async () => {
    const raw = await loadModel(LEGACY_BASE, POLICY_KIND);
    const { valueHead, ...config } = raw.sidecar.config as Record<string, unknown>;
    expect(valueHead).toBe(true);
    const parsed = parseVlaConfig(config as never);
    expect(JSON.stringify(parsed)).toBe(JSON.stringify(config));
    const g = new Graph(raw.params.float);
    for (const [name, t] of Object.entries(legacyBuilder(parsed)(g))) g.output(name, t);
    const bytes = writeOnnx(g, {
      initializers: raw.params.asMap(),
      producer: 'wmrl',
      metadata: { kind: 'vla-policy' },
    });
    expect(Buffer.compare(Buffer.from(bytes), await readFile(LEGACY_BASE))).toBe(0);
  });
});
