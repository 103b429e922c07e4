// Expert-corrected rounds: a round adds the learner's rollouts, labelled by the scripted expert at every
// state they visit; rounds are committed whole, continue when more are asked for, refuse other settings,
// and a re-run is byte-identical.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadScene } from '../../src/cli/scene.ts';
import { InputError } from '../../src/core/errors.ts';
import {
  collectDemos,
  DAGGER_FORMAT,
  dagger,
  daggerKey,
  type DaggerOptions,
  DEMOS_FORMAT,
  readDemoFolder,
  writeDemoFolder,
} from '../../src/demos/index.ts';
import { Graph } from '../../src/nn/ir.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { ACTION_NAMES, createTabletopEnv, ScriptedExpert, tabletopSpec } from '../../src/physics/index.ts';
import { loadPolicy, savePolicy } from '../../src/policy/model.ts';
import { PRETRAIN_SIZES, lightSecondConv } from '../../src/policy/presets.ts';
import { specInterfaceHash } from '../../src/policy/spec-config.ts';
import { parseVlaConfig, vlaForwardBuilder } from '../../src/policy/vla.ts';

const scene = loadScene(undefined);
const taskId = 'tabletop/pick-place';
const tmp = mkdtempSync(join(tmpdir(), 'wmrl-dagger-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const data = join(tmp, 'demos');

beforeAll(async () => {
  const demos = await collectDemos(scene, taskId, { episodes: 3, noise: 0.05, seed: 0, seedOffset: 0, numEnvs: 3 });
  const meta = {
    format: DEMOS_FORMAT,
    scene: 'scenes/tabletop.json',
    noise: 0.05,
    seed: 0,
    labels: 'expert',
    observations: 're-simulate',
  } as const;
  writeDemoFolder(data, meta, 'test', scene, demos);
}, 60_000);

const options = (dir: string, over: Partial<DaggerOptions> = {}): DaggerOptions => ({
  scene,
  scenePath: 'scenes/tabletop.json',
  tasks: [taskId],
  data,
  policy: 'models/tiny-policy.onnx',
  dir,
  rounds: 1,
  episodes: 3,
  expertShare: 0.3,
  decay: 0.5,
  seedOffset: 1000,
  seed: 0,
  numEnvs: 3,
  validationEpisodes: 2,
  from: 'previous',
  train: {
    steps: 4,
    batch: 8,
    lr: 0.001,
    weightDecay: 0,
    shift: 0,
    size: 'tiny',
    seed: 0,
    logEvery: 2,
    threads: 1,
    checkpointEvery: 2,
    maxNonfinite: 20,
    counterfactual: true,
    selectEvery: 0,
    selectEpisodes: 1,
  },
  ...over,
});

/** Replays each episode's executed tokens and asks a scripted expert at every visited state. */
async function expertAtVisitedStates(demos: ReturnType<typeof readDemoFolder>['demos']) {
  const A = ACTION_NAMES.length;
  const env = await createTabletopEnv({ scene, taskId, numEnvs: 1, render: false });
  const out: Int32Array[] = [];
  try {
    for (const d of demos) {
      await env.reset({ seed: [d.seed] });
      const expert = new ScriptedExpert(env);
      const labels = new Int32Array(d.length * A);
      for (let t = 0; t < d.length; t++) {
        const clean = expert.act();
        ACTION_NAMES.forEach((n, j) => (labels[t * A + j] = clean[n][0]));
        await env.step(Object.fromEntries(ACTION_NAMES.map((n, j) => [n, Int32Array.of(d.actions[t * A + j])])));
      }
      out.push(labels);
    }
  } finally {
    env.close();
  }
  return out;
}

describe('wmrl dagger rounds', () => {
  it('a round adds the learner’s rollouts, labelled by the expert at every visited state', async () => {
    const dir = join(tmp, 'a');
    const r = await dagger(options(dir), join(tmp, 'a.onnx'));
    expect(r.rounds.map((x) => x.round)).toEqual([0, 1]);
    const { demos } = readDemoFolder(join(dir, 'round-1', 'demos'), scene);
    expect(demos).toHaveLength(3);
    expect(r.rounds[1].labels).toBe(demos.reduce((s, d) => s + d.length, 0));
    const expert = await expertAtVisitedStates(demos);
    let learnerSteps = 0;
    demos.forEach((d, k) => {
      expect(Array.from(d.labels)).toEqual(Array.from(expert[k]));
      for (let j = 0; j < d.actions.length; j++) if (d.actions[j] !== d.labels[j]) learnerSteps++;
    });
    // the (untrained) learner executed most steps, so executed and labelled tokens differ
    expect(learnerSteps).toBeGreaterThan(0);
    // round 1 trained on the expert demonstrations and the new rows
    const metrics = readFileSync(join(dir, 'round-1', 'pretrain', 'metrics.jsonl'), 'utf8');
    expect(metrics.trim().split('\n').length).toBeGreaterThan(0);
    expect(r.rounds[1].validation.tasks[taskId]).toBeGreaterThanOrEqual(0);
    // --out holds the chosen round's weights, its provenance naming the round
    const out = await loadPolicy(join(tmp, 'a.onnx'));
    const chosen = await loadPolicy(r.best.round === 0 ? r.best.policy : join(dir, r.best.policy));
    expect(out.sidecar.provenance.notes).toMatch(new RegExp(`^wmrl dagger: round ${r.best.round} of 1`));
    for (const [name, t] of chosen.params.asMap()) expect(out.params.asMap().get(name)).toEqual(t);
  }, 120_000);

  it('with the expert share at 1 the expert executes every step', async () => {
    const dir = join(tmp, 'b');
    await dagger(options(dir, { expertShare: 1 }), join(tmp, 'b.onnx'));
    const { demos } = readDemoFolder(join(dir, 'round-1', 'demos'), scene);
    for (const d of demos) expect(Array.from(d.actions)).toEqual(Array.from(d.labels));
  }, 120_000);

  it('more rounds continue the committed ones; other settings are refused; a re-run is byte-identical', async () => {
    const dir = join(tmp, 'a');
    const before = statSync(join(dir, 'round-1', 'policy.onnx')).mtimeMs;
    const r = await dagger(options(dir, { rounds: 2 }), join(tmp, 'a2.onnx'));
    expect(r.rounds.map((x) => x.round)).toEqual([0, 1, 2]);
    expect(statSync(join(dir, 'round-1', 'policy.onnx')).mtimeMs).toBe(before);
    await expect(dagger(options(dir, { episodes: 4 }), join(tmp, 'x.onnx'))).rejects.toThrow(InputError);
    await expect(dagger(options(dir, { episodes: 4 }), join(tmp, 'x.onnx'))).rejects.toThrow(/episodes/);
    const again = join(tmp, 'c');
    await dagger(options(again, { rounds: 2 }), join(tmp, 'c.onnx'));
    for (const f of ['round-2/policy.onnx', 'round-2/demos/labels.bin', 'round-2/demos/episodes.bin', 'rounds.json'])
      expect(readFileSync(join(again, f)).equals(readFileSync(join(dir, f))), f).toBe(true);
  }, 240_000);

  it('rounds from a front+wrist policy with the light wrist encoder train the same network', async () => {
    const tiny = await loadPolicy('models/tiny-policy.onnx');
    const config = parseVlaConfig({
      ...tiny.config,
      cameras: ['image_front', 'image_wrist'],
      secondConv: lightSecondConv(PRETRAIN_SIZES.tiny, [64, 64]),
    });
    const g = new Graph();
    vlaForwardBuilder(config)(g);
    const policy = join(tmp, 'light', 'bc.onnx');
    mkdirSync(join(tmp, 'light'), { recursive: true });
    await savePolicy(policy, config, ParamStore.init(g.params, 1), {
      provenance: tiny.sidecar.provenance,
      specHash: specInterfaceHash(tabletopSpec(scene, taskId, ['front', 'wrist'])),
    });
    // --from previous fine-tunes the starting policy, which only works on exactly its network
    const r = await dagger(options(join(tmp, 'light', 'rounds'), { policy }), join(tmp, 'light.onnx'));
    expect(r.rounds.map((x) => x.round)).toEqual([0, 1]);
    const round1 = await loadPolicy(join(tmp, 'light', 'rounds', 'round-1', 'policy.onnx'));
    expect(round1.config).toEqual(config);
  }, 120_000);
});

describe('wmrl dagger keys its rounds by content', () => {
  const dir = join(tmp, 'keyed');
  const policy = join(dir, 'bc.onnx');
  const files = join(dir, 'data');
  const o = (over: Partial<DaggerOptions> = {}) => options(join(dir, 'rounds'), { policy, data: files, ...over });
  const remakePolicy = async (path: string, delta: number) => {
    const p = await loadPolicy('models/tiny-policy.onnx');
    const first = p.params.names[0];
    p.params.set(
      first,
      p.params.get(first).map((x) => x + delta),
    );
    await savePolicy(path, p.config, p.params, { provenance: p.sidecar.provenance, specHash: p.sidecar.specHash });
  };
  beforeAll(async () => {
    mkdirSync(files, { recursive: true });
    for (const f of ['episodes.bin', 'labels.bin']) writeFileSync(join(files, f), f);
    await remakePolicy(policy, 0);
  });

  it('the same files at other paths make the same key; a file re-made at the same path another', async () => {
    const key = daggerKey(o());
    const moved = join(dir, 'moved');
    mkdirSync(join(moved, 'data'), { recursive: true });
    for (const f of ['bc.onnx', 'bc.json', 'data/episodes.bin', 'data/labels.bin'])
      copyFileSync(join(dir, f), join(moved, f));
    expect(daggerKey(o({ policy: join(moved, 'bc.onnx'), data: join(moved, 'data') }))).toEqual(key);
    await remakePolicy(join(moved, 'bc.onnx'), 0.01);
    expect(daggerKey(o({ policy: join(moved, 'bc.onnx') })).policy).not.toBe(key.policy);
    writeFileSync(join(moved, 'data', 'labels.bin'), 'other labels');
    expect(daggerKey(o({ data: join(moved, 'data') })).data).not.toBe(key.data);
    writeFileSync(join(moved, 'data', 'counterfactual.bin'), 'rows');
    expect(daggerKey(o({ data: join(moved, 'data') })).data).not.toBe(daggerKey(o({ data: files })).data);
  });

  it('rounds begun on a bc.onnx re-made at the same path are refused, naming the policy', async () => {
    const rounds = join(dir, 'rounds');
    mkdirSync(rounds, { recursive: true });
    const state = { format: DAGGER_FORMAT, key: daggerKey(o()), rounds: [] };
    writeFileSync(join(rounds, 'rounds.json'), JSON.stringify(state));
    await remakePolicy(policy, 0.01);
    const run = dagger(o(), join(dir, 'out.onnx'));
    await expect(run).rejects.toThrow(InputError);
    await expect(run).rejects.toThrow(/other settings or files \(policy;/);
  });

  it('a missing --data file is bad input naming the flag and the file', () => {
    expect(() => daggerKey(o({ data: join(dir, 'nowhere') }))).toThrow(
      /nowhere.episodes\.bin: cannot read --data file/,
    );
  });
});
