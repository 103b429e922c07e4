// The default scene's wrist camera reaching a policy beside the front camera: the scene's cameras, the
// camera helpers, and a 2-camera VLA acting in the physics tabletop on both images.
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import {
  camerasOf,
  checkCameras,
  createTabletopEnv,
  fixedCameras,
  nonDefaultCameras,
  tabletopSpec,
} from '../../src/physics/index.ts';
import { PolicySampler, policyFeeds } from '../../src/policy/sampler.ts';
import { VLA_SIZES_TINY, vlaConfigFromSpec } from '../../src/policy/spec-config.ts';
import { WordTokenizer } from '../../src/policy/tokenizer.ts';
import { sceneWords } from '../../src/policy/presets.ts';
import { Graph } from '../../src/nn/ir.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { vlaForwardBuilder } from '../../src/policy/vla.ts';
import { createRenderer } from '../../src/render/index.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';

const scene = loadSceneFile(DEFAULT_SCENE_PATH);
const TASK = 'tabletop/pick-place';
const PX = 64 * 64 * 3;

/** Share of pixels whose colour differs between two images of one size. */
function changed(a: Uint8Array, b: Uint8Array): number {
  let n = 0;
  for (let p = 0; p < a.length; p += 3) if (a[p] !== b[p] || a[p + 1] !== b[p + 1] || a[p + 2] !== b[p + 2]) n++;
  return n / (a.length / 3);
}

/** A tiny VLA reading `cameras` of the tabletop spec, with seeded weights. */
function tinyPolicy(cameras: string[]) {
  const words = sceneWords(scene);
  const tokenizer = WordTokenizer.fromCorpus(words.corpus, { maxLength: words.maxLength });
  const config = vlaConfigFromSpec(tabletopSpec(scene, TASK, cameras), tokenizer.config, VLA_SIZES_TINY);
  const g = new Graph();
  vlaForwardBuilder(config)(g);
  return { config, tokenizer, params: ParamStore.init(g.params, 3) };
}

describe('the tabletop wrist camera', () => {
  it('is in the default scene beside the unchanged front camera; the default cameras stay front only', () => {
    const front = scene.cameras.find((c) => c.name === 'front')!;
    expect(front).toMatchObject({ mount: 'fixed', position: [0, -0.36, 0.58], target: [0, 0.04, 0], fovDeg: 58 });
    const wrist = scene.cameras.find((c) => c.name === 'wrist')!;
    expect(wrist).toMatchObject({ mount: 'wrist', width: 64, height: 64 });
    expect(fixedCameras(scene)).toEqual(['front']);
    expect(camerasOf(['image_front', 'image_wrist'])).toEqual(['front', 'wrist']);
    expect(() => camerasOf(['image'])).toThrow(/not a tabletop camera image/);
    expect(nonDefaultCameras(scene, ['front'])).toBeUndefined();
    expect(nonDefaultCameras(scene, ['front', 'wrist'])).toEqual(['front', 'wrist']);
    expect(checkCameras(scene, ['front', 'wrist'])).toEqual(['front', 'wrist']);
    expect(() => checkCameras(scene, ['front', 'side'])).toThrow(/--cameras: unknown camera "side"; .* front, wrist/);
    expect(() => checkCameras(scene, ['wrist', 'wrist'])).toThrow(/named twice/);
  });

  it('reaches a 2-camera VLA: both images differ, the wrist view moves with the arm, the front background does not', async () => {
    const { config, tokenizer, params } = tinyPolicy(['front', 'wrist']);
    expect(config.cameras).toEqual(['image_front', 'image_wrist']);
    const env = await createTabletopEnv({ scene, taskId: TASK, numEnvs: 2, cameras: camerasOf(config.cameras) });
    const sampler = await PolicySampler.create(config, params);
    try {
      let { obs } = await env.reset({ seed: [0, 1] });
      const feeds = policyFeeds(config, tokenizer, obs, 2);
      for (const cam of config.cameras) expect(feeds[cam].data).toBe(obs[cam]);
      const front0 = (obs.image_front as Uint8Array).slice(0, PX);
      const wrist0 = (obs.image_wrist as Uint8Array).slice(0, PX);
      expect(changed(front0, wrist0)).toBeGreaterThan(0.5);
      // the arm moves 10 cm to the side and 10 cm down (largest steps), the gripper open
      const bins = scene.control.bins;
      const move = (token: number) => Int32Array.of(token, token);
      const action = {
        dx: move(bins - 1),
        dy: move((bins - 1) / 2),
        dz: move(0),
        dyaw: move((bins - 1) / 2),
        grip: move(0),
      };
      let last = wrist0;
      for (let t = 0; t < 5; t++) {
        obs = (await env.step(action)).obs;
        const now = (obs.image_wrist as Uint8Array).slice(0, PX);
        expect(changed(last, now)).toBeGreaterThan(0.02); // every step moves the wrist view
        last = now;
      }
      const front1 = (obs.image_front as Uint8Array).slice(0, PX);
      const wrist1 = (obs.image_wrist as Uint8Array).slice(0, PX);
      expect(changed(wrist0, wrist1)).toBeGreaterThan(0.1);
      // the front camera is fixed: of its pixels showing the static scene (table, zones, bin, sky) at the
      // start, all but those the moving arm now covers are unchanged
      const statics = createRenderer(scene, 'front').render([]);
      let background = 0;
      let kept = 0;
      for (let p = 0; p < PX; p += 3) {
        if (front0[p] !== statics[p] || front0[p + 1] !== statics[p + 1] || front0[p + 2] !== statics[p + 2]) continue;
        background++;
        if (front1[p] === front0[p] && front1[p + 1] === front0[p + 1] && front1[p + 2] === front0[p + 2]) kept++;
      }
      expect(background / (PX / 3)).toBeGreaterThan(0.8);
      expect(kept / background).toBeGreaterThan(0.9);
      // the policy reads the wrist image: env 0's earlier wrist image (same front image, same text) changes
      // env 0's output and leaves env 1's alone
      const earlier = (obs.image_wrist as Uint8Array).slice();
      earlier.set(wrist0, 0);
      const greedy = (o: typeof obs) => sampler.act(o, 2, [new Rng(1), new Rng(2)], 0);
      const [a, b] = [await greedy(obs), await greedy({ ...obs, image_wrist: earlier })];
      expect(a.logp[0]).not.toBe(b.logp[0]);
      expect(a.logp[1]).toBe(b.logp[1]);
    } finally {
      await sampler.close();
      env.close();
    }
  });
});
