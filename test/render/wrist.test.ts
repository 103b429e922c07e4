import { describe, expect, it } from 'vitest';
import { hashOf } from '../../src/core/hash.ts';
import { createRenderer } from '../../src/render/index.ts';
import { isRed, pixels, pose, sceneWith, toByte } from './helpers.ts';

// Palm pointing down: 180 degrees about x maps palm-local +z to world -z (and local y to world -y).
const DOWN: [number, number, number, number] = [1, 0, 0, 0];
const scene = sceneWith(
  { name: 'front', position: [0, -0.72, 0.62], target: [0, 0, 0] },
  { name: 'wrist', mount: 'wrist', position: [0, 0, 0], target: [0, 0, 0.2], up: [0, 1, 0], fovDeg: 70 },
);
const wrist = createRenderer(scene, 'wrist');

describe('wrist camera', () => {
  it('needs the palm pose', () => {
    expect(() => wrist.render([pose('red_cube', [0, 0, 0.02])])).toThrow(/no pose named "palm"/);
  });

  it('sees a cube just below the palm at the image centre', () => {
    const img = wrist.render([pose('palm', [0.1, -0.05, 0.2], DOWN), pose('red_cube', [0.1, -0.05, 0.02])]);
    const red = pixels(img, 64, isRed);
    expect(red.count).toBeGreaterThan(50);
    expect(Math.abs(red.col - 31.5)).toBeLessThan(1);
    expect(Math.abs(red.row - 31.5)).toBeLessThan(1);
    // the rest of the view is table top (one colour), not background
    const corner = [...img.subarray(3 * (5 * 64 + 5), 3 * (5 * 64 + 5) + 3)];
    expect([...img.subarray(3 * (58 * 64 + 58), 3 * (58 * 64 + 58) + 3)]).toEqual(corner);
    expect(corner).not.toEqual(scene.background.map(toByte));
    expect(corner).toEqual([
      ...createRenderer(scene, 'front')
        .render([])
        .subarray(3 * (40 * 64 + 32), 3 * (40 * 64 + 32) + 3),
    ]);
  });

  it('moves with the palm, not with the world', () => {
    const cube = pose('red_cube', [0.1, -0.05, 0.02]);
    const base = pixels(wrist.render([pose('palm', [0.1, -0.05, 0.2], DOWN), cube]), 64, isRed);
    // the camera looks down with image-right = world -x: moving the palm by +x moves the cube right
    const moved = pixels(wrist.render([pose('palm', [0.15, -0.05, 0.2], DOWN), cube]), 64, isRed);
    expect(moved.col - base.col).toBeGreaterThan(5);
    // moving palm and cube together keeps the cube where it was in the image
    const both = wrist.render([pose('palm', [0.15, -0.05, 0.2], DOWN), pose('red_cube', [0.15, -0.05, 0.02])]);
    const together = pixels(both, 64, isRed);
    expect(together.count).toBe(base.count);
    expect(together.col).toBe(base.col);
    // a cube far from below the palm is out of view
    expect(
      pixels(wrist.render([pose('palm', [0.1, -0.05, 0.2], DOWN), pose('red_cube', [-0.3, 0.2, 0.02])]), 64, isRed)
        .count,
    ).toBe(0);
  });

  it('is deterministic and does not change the fixed camera', () => {
    const poses = [pose('palm', [0.02, 0.01, 0.15], [0.9, 0.1, 0.05, 0.2]), pose('red_cube', [0, 0, 0.02])];
    expect(hashOf(wrist.render(poses))).toBe(hashOf(createRenderer(scene, 'wrist').render(poses)));
    expect(hashOf(createRenderer(scene, 'front').render(poses))).toBe(
      hashOf(createRenderer(scene, 'front').render(poses)),
    );
  });
});
