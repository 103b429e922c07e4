// A world-model env renders every camera its policy reads (front and wrist) from the predicted state, on a
// world model trained before the wrist camera existed (its stored specs name the front camera only).
import { describe, expect, it } from 'vitest';
import { createTabletopEnv, tabletopSpec } from '../../src/physics/index.ts';
import { createRenderer } from '../../src/render/index.ts';
import { assertSameModelSpec, openWorldModelEnv } from '../../src/worldmodel/index.ts';
import { scene, specOf } from './helpers.ts';

const TASK = 'tabletop/pick-place';
const TWO = ['front', 'wrist'];
const PX = 64 * 64 * 3;

describe('world-model env cameras', () => {
  it('renders front and wrist from the predicted state, as physics does at the start', async () => {
    const spec = tabletopSpec(scene, TASK, TWO);
    const wm = await openWorldModelEnv('models/wm-base.onnx', { scene, spec, numEnvs: 1 });
    const real = await createTabletopEnv({ scene, taskId: TASK, numEnvs: 1, cameras: TWO });
    const renderers = TWO.map((c) => createRenderer(scene, c));
    try {
      expect(wm.spec).toEqual(real.spec);
      const start = await wm.reset({ seed: 3 });
      const physics = await real.reset({ seed: 3 });
      for (const c of TWO) expect(start.obs[`image_${c}`]).toEqual(physics.obs[`image_${c}`]);
      const wrist0 = (start.obs.image_wrist as Uint8Array).slice();
      // the arm moves sideways and down: the predicted palm pose carries the wrist camera
      const bins = scene.control.bins;
      const mid = (bins - 1) / 2;
      const action = {
        dx: Int32Array.of(bins - 1),
        dy: Int32Array.of(mid),
        dz: Int32Array.of(0),
        dyaw: Int32Array.of(mid),
        grip: Int32Array.of(0),
      };
      let obs = start.obs;
      for (let t = 0; t < 4; t++) obs = (await wm.step(action)).obs;
      // each image is its camera's rendering of the predicted bodies (palm included)
      const bodies = wm.frame(0);
      expect(bodies.some((b) => b.name === 'palm')).toBe(true);
      TWO.forEach((c, k) => expect(obs[`image_${c}`]).toEqual(renderers[k].render(bodies)));
      let moved = 0;
      const wrist = obs.image_wrist as Uint8Array;
      for (let p = 0; p < PX; p++) if (wrist[p] !== wrist0[p]) moved++;
      expect(moved).toBeGreaterThan(PX / 20);
    } finally {
      wm.close();
      real.close();
    }
  });

  it('a stored spec matches any camera choice, nothing else', () => {
    const stored = specOf(TASK);
    expect(() => assertSameModelSpec(tabletopSpec(scene, TASK, TWO), stored, 'stored spec')).not.toThrow();
    expect(() => assertSameModelSpec(tabletopSpec(scene, TASK, []), stored, 'stored spec')).not.toThrow();
    const other = { ...tabletopSpec(scene, TASK, TWO), maxEpisodeSteps: 7 };
    expect(() => assertSameModelSpec(other, stored, 'stored spec')).toThrow(/stored spec differs/);
  });
});
