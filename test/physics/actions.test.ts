import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { binValue, decodeAction, encodeAction, nearestBin } from '../../src/physics/actions.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';

const control = loadSceneFile(DEFAULT_SCENE_PATH).control;

describe('action tokens', () => {
  it('spreads bins evenly with an exact zero in the middle', () => {
    const n = control.bins;
    expect(binValue(0, n, 0.02)).toBe(-0.02);
    expect(binValue(n - 1, n, 0.02)).toBe(0.02);
    expect(binValue((n - 1) / 2, n, 0.02)).toBe(0);
    for (let t = 0; t < n; t++) expect(nearestBin(binValue(t, n, 0.3), n, 0.3)).toBe(t);
  });

  it('encodes to the nearest bin and clamps out-of-range values', () => {
    const n = control.bins;
    const step = (2 * control.maxTranslation) / (n - 1);
    expect(nearestBin(0.4 * step, n, control.maxTranslation)).toBe((n - 1) / 2);
    expect(nearestBin(0.6 * step, n, control.maxTranslation)).toBe((n - 1) / 2 + 1);
    expect(nearestBin(1, n, control.maxTranslation)).toBe(n - 1);
    expect(nearestBin(-1, n, control.maxTranslation)).toBe(0);
  });

  it('round-trips tokens through decode and encode', () => {
    const rng = new Rng(3);
    for (let k = 0; k < 200; k++) {
      const tokens = {
        dx: rng.int(control.bins),
        dy: rng.int(control.bins),
        dz: rng.int(control.bins),
        dyaw: rng.int(control.bins),
        grip: rng.int(control.gripperBins),
      };
      expect(encodeAction(control, decodeAction(control, tokens))).toEqual(tokens);
    }
    const open = decodeAction(control, { dx: 5, dy: 5, dz: 5, dyaw: 5, grip: 0 });
    expect(open).toEqual({ dx: 0, dy: 0, dz: 0, dyaw: 0, grip: 0 });
    expect(decodeAction(control, { dx: 0, dy: 5, dz: 5, dyaw: 10, grip: control.gripperBins - 1 })).toMatchObject({
      dx: -control.maxTranslation,
      dyaw: control.maxYaw,
      grip: 1,
    });
  });

  it('names the dimension of a bad token', () => {
    expect(() => decodeAction(control, { dx: 0, dy: 0, dz: control.bins, dyaw: 0, grip: 0 })).toThrow(/action\.dz/);
    expect(() => decodeAction(control, { dx: 0, dy: 0, dz: 0, dyaw: 0, grip: 1.5 })).toThrow(/action\.grip/);
  });
});
