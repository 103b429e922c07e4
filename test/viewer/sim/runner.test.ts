import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as ortNode from 'onnxruntime-node';
import * as ortWeb from 'onnxruntime-web';
import { beforeAll, describe, expect, it } from 'vitest';
import type { OrtBinding } from '../../../src/nn/runtime.ts';
import { createTabletopEnv } from '../../../src/physics/env.ts';
import { ACTION_NAMES } from '../../../src/physics/actions.ts';
import { camerasOf, tabletopSpec } from '../../../src/tabletop/spec.ts';
import { loadPolicy } from '../../../src/policy/model.ts';
import { PolicySampler, samplerPolicy } from '../../../src/policy/sampler.ts';
import type { Env } from '../../../src/env/types.ts';
import { collectEpisodes } from '../../../src/rollout/collect.ts';
import { parseSceneText } from '../../../src/scene/load.ts';
import { splitSeed } from '../../../src/task/families.ts';
import { sampleTask } from '../../../src/task/sample.ts';
import { openWorldModelEnv } from '../../../src/worldmodel/model-file.ts';
import {
  type Dynamics,
  type InPageAssets,
  InPageRunner,
  type ModelBytes,
  type StepView,
  matchInstruction,
} from '../../../viewer/src/sim/runner.ts';
import { instructionMismatch } from '../../../viewer/src/sim/instruction.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const read = (name: string) => new Uint8Array(readFileSync(join(ROOT, name)));
const modelBytes = (stem: string, parts: string[] = []): ModelBytes => ({
  name: `models/${stem}.onnx`,
  onnx: read(`models/${stem}.onnx`),
  sidecar: readFileSync(join(ROOT, `models/${stem}.json`), 'utf8'),
  parts: Object.fromEntries(parts.map((p) => [p, read(`models/${p}`)])),
});
const scene = parseSceneText(readFileSync(join(ROOT, 'scenes/tabletop.json'), 'utf8'), 'scenes/tabletop.json');
const assets: InPageAssets = {
  scene,
  policy: modelBytes('vla-base'),
  worldModel: modelBytes('wm-base', ['wm-base.wm.json']),
};

const TASKS = ['tabletop/push', 'tabletop/pick-place'];
const SEED = splitSeed(scene, 'train', 7);
const STEPS = 10;
const BINDINGS: Record<string, OrtBinding> = { web: ortWeb, node: ortNode };
const DYNAMICS: Dynamics[] = ['physics', 'world-model'];

/** Step 0..STEPS (or to the end) of one episode per task, by binding and dynamics. */
const views: Record<string, Record<Dynamics, Record<string, StepView[]>>> = {};

async function episode(runner: InPageRunner, task: string, opts: { instruction?: string } = {}): Promise<StepView[]> {
  const out = [await runner.reset({ task, seed: SEED, ...opts })];
  while (out.length <= STEPS && !out.at(-1)!.done) out.push(await runner.step());
  return out;
}

const tokenRows = (vs: StepView[]) => vs.slice(1).map((v) => ACTION_NAMES.map((n) => v.tokens[n]));

beforeAll(async () => {
  // onnxruntime-web in Node: the wasm backend, one thread (no worker threads); no wasmPaths needed.
  ortWeb.env.wasm.numThreads = 1;
  for (const [b, ort] of Object.entries(BINDINGS)) {
    views[b] = {} as Record<Dynamics, Record<string, StepView[]>>;
    for (const dynamics of DYNAMICS) {
      const runner = await InPageRunner.create(assets, { dynamics, ort });
      views[b][dynamics] = {};
      for (const task of TASKS) views[b][dynamics][task] = await episode(runner, task);
      await runner.close();
    }
  }
}, 240_000);

describe('InPageRunner (viewer/src/sim): the shipped policy and world model from bytes', () => {
  it.each(DYNAMICS)(
    '%s: onnxruntime-web and onnxruntime-node take the same tokens and reach the same poses',
    (dynamics) => {
      for (const task of TASKS) {
        const [web, node] = [views.web[dynamics][task], views.node[dynamics][task]];
        expect(web.length).toBe(node.length);
        expect(tokenRows(web)).toEqual(tokenRows(node));
        let maxDiff = 0;
        web.forEach((v, t) =>
          v.bodies.forEach((b, k) => {
            expect(b.name).toBe(node[t].bodies[k].name);
            [...b.pos, ...b.quat].forEach(
              (x, j) =>
                (maxDiff = Math.max(maxDiff, Math.abs(x - [...node[t].bodies[k].pos, ...node[t].bodies[k].quat][j]))),
            );
          }),
        );
        console.log(
          `${dynamics} ${task}: ${web.length - 1} steps, max |pose diff| web vs node ${maxDiff.toExponential(2)}`,
        );
        // physics poses depend only on the tokens (Rapier is deterministic); the world model's predicted
        // states carry the two ORT builds' float32 differences
        if (dynamics === 'physics') expect(maxDiff).toBe(0);
        else expect(maxDiff).toBeLessThan(1e-4);
      }
    },
  );

  it.each(DYNAMICS)(
    '%s: tokens equal the Node rollout path (collectEpisodes + samplerPolicy) for the same seed and key',
    async (dynamics) => {
      const loaded = await loadPolicy(join(ROOT, 'models/vla-base.onnx'));
      const sampler = await PolicySampler.create(loaded.config, loaded.params);
      const policy = samplerPolicy(sampler, { seed: 0, temperature: 1 });
      const cameras = camerasOf(loaded.config.cameras);
      for (const task of TASKS) {
        const spec = tabletopSpec(scene, task, cameras);
        const env: Env =
          dynamics === 'physics'
            ? await createTabletopEnv({ scene, taskId: task, numEnvs: 1, cameras })
            : await openWorldModelEnv(join(ROOT, 'models/wm-base.onnx'), { scene, spec, numEnvs: 1 });
        const [ep] = await collectEpisodes(env, policy, { seeds: [SEED], keys: [SEED], horizons: [STEPS] });
        env.close();
        const rows = Array.from({ length: ep.length }, (_, t) =>
          Array.from(ep.actions.subarray(t * ACTION_NAMES.length, (t + 1) * ACTION_NAMES.length)),
        );
        const runner = views.node[dynamics][task];
        expect(tokenRows(runner)).toEqual(rows);
        expect(runner.at(-1)!.progress).toBe(ep.progress);
        expect(runner[0].instruction).toBe(ep.instruction);
      }
      await sampler.close();
    },
  );

  it('step views: the policy camera images, instruction override, frozen after the end', async () => {
    const runner = await InPageRunner.create(assets, { dynamics: 'physics' });
    const v0 = await runner.reset({ task: TASKS[0], seed: SEED });
    expect([v0.step, v0.imageWidth, v0.imageHeight, v0.image.length]).toEqual([0, 64, 64, 64 * 64 * 3]);
    expect(v0.tokens).toEqual({});
    expect(v0.image.some((x) => x > 0)).toBe(true);
    // every camera the policy reads is rendered (front, and wrist for a two-camera policy), each its own image
    const { config } = JSON.parse(assets.policy.sidecar) as { config: { cameras: string[] } };
    expect(v0.views.map((v) => v.camera)).toEqual(camerasOf(config.cameras));
    expect(v0.views[0].data).toEqual(v0.image);
    for (const v of v0.views) expect([v.data.length, v.data.some((x) => x > 0)]).toEqual([64 * 64 * 3, true]);
    if (v0.views.length > 1) expect(v0.views[1].data).not.toEqual(v0.views[0].data);
    // the episode's own text as an override reads the same tokens; another text is shown and read
    const same = await episode(runner, TASKS[0], { instruction: v0.instruction });
    expect(tokenRows(same)).toEqual(tokenRows(views.node.physics[TASKS[0]]));
    const other = await runner.reset({
      task: TASKS[0],
      seed: SEED,
      instruction: 'push the blue cube to the purple zone',
    });
    expect(other.instruction).toBe('push the blue cube to the purple zone');
    await runner.close();
    const fresh = await InPageRunner.create(assets, { dynamics: 'physics' });
    await expect(fresh.step()).rejects.toThrow(/before reset/);
    await fresh.close();
  });
});

describe('matchInstruction', () => {
  const name = (t: ReturnType<typeof sampleTask>) => [scene.objects[t.object].name, t.target.kind, t.target.index];

  it("maps each family's own instructions to that family and a train seed with the same object and target", () => {
    for (const family of scene.tasks) {
      for (let k = 0; k < 6; k++) {
        const t = sampleTask(scene, family.id, splitSeed(scene, 'train', k));
        const m = matchInstruction(scene, t.instruction);
        expect(m, t.instruction).not.toBeNull();
        expect(m!.task, t.instruction).toBe(family.id);
        expect(name(sampleTask(scene, m!.task, m!.seed))).toEqual(name(t));
        expect(m!.seed).toBeGreaterThanOrEqual(scene.splits.train[0]);
      }
    }
  });

  it('reads free phrasing and other words for the same things', () => {
    const m = matchInstruction(scene, 'Please: drop the RED BLOCK into the gray bin!');
    expect(m?.task).toBe('tabletop/put-in-bin');
    expect(name(sampleTask(scene, m!.task, m!.seed))).toEqual(['red_cube', 'bin', 0]);
    const s = matchInstruction(scene, 'stack the red cube on the blue cube');
    expect(name(sampleTask(scene, s!.task, s!.seed))).toEqual(['red_cube', 'object', 2]);
  });

  it('places a word that names one thing only: "the bin", "the red one", "orange"', () => {
    for (const text of [
      'put the red cube in the bin',
      'toss the red cube into the bin',
      'drop the red one in the box',
    ]) {
      const m = matchInstruction(scene, text);
      expect(m, text).toMatchObject({ task: 'tabletop/put-in-bin', object: 'red_cube', target: 'grey_bin' });
    }
    const z = matchInstruction(scene, 'shove the green block over to orange');
    expect(z).toMatchObject({ task: 'tabletop/push', object: 'green_cube', target: 'orange_zone' });
    // "cube" and "zone" name several things: they place nothing on their own
    expect(matchInstruction(scene, 'put the cube in the zone')).toBeNull();
  });

  it('says which part it could not place', () => {
    expect(instructionMismatch(scene, 'put the cube in the bin')).toMatch(/^no object named: say which \(red cube, /);
    expect(instructionMismatch(scene, 'push the red cube')).toMatch(/^no target named/);
    expect(instructionMismatch(scene, 'put the red cube in the bin')).toBeNull();
  });

  it("null for junk, a missing target, or a pair held out of the family's training set", () => {
    expect(matchInstruction(scene, 'hello world')).toBeNull();
    expect(matchInstruction(scene, '')).toBeNull();
    expect(matchInstruction(scene, 'push the red cube')).toBeNull();
    expect(matchInstruction(scene, 'put the red cube on the red cube')).toBeNull();
    expect(matchInstruction(scene, 'push the yellow cube to the purple zone')).toBeNull(); // push's held-out pair
  });
});
