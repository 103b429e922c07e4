import { describe, expect, it } from 'vitest';
import { hashOf } from '../../src/core/hash.ts';
import { createRenderer } from '../../src/render/index.ts';
import { isRed, pixelAt, pixels, pose, sceneWith, toByte, yawQuat } from './helpers.ts';

// A camera looking straight down at the table from `height` above (x to the right, y up in the image).
const topDown = (height: number, fovDeg: number, at: [number, number] = [0, -0.15]) =>
  sceneWith({ name: 'top', position: [at[0], at[1], height], target: [at[0], at[1], 0], up: [0, 1, 0], fovDeg });

function distinctColours(img: Uint8Array): Set<string> {
  const s = new Set<string>();
  for (let i = 0; i < img.length; i += 3) s.add(`${img[i]},${img[i + 1]},${img[i + 2]}`);
  return s;
}

describe('rasteriser', () => {
  it('covers a face made of two triangles without cracks', () => {
    // the view footprint lies inside the table top and away from zones and bins: one colour only
    const scene = topDown(0.5, 40);
    const img = createRenderer(scene, 'top').render([]);
    const colours = distinctColours(img);
    expect(colours.size).toBe(1);
    const [lx, ly, lz] = scene.lightDirection;
    const shade = 0.4 + (0.6 * lz) / Math.sqrt(lx * lx + ly * ly + lz * lz);
    expect([...colours][0]).toBe(scene.table.colour.map((c) => toByte(c * shade)).join(','));
  });

  it('owns pixel centres that lie exactly on a shared edge', () => {
    // a square table seen straight from above: the top face's diagonal runs exactly through the
    // pixel centres (i, 63 - i); each of them must be covered by one of the two triangles
    const scene = sceneWith({ name: 'top', position: [0, 0, 1], target: [0, 0, 0], up: [0, 1, 0], fovDeg: 30 });
    scene.table.halfSize = [0.35, 0.35];
    scene.zones = [];
    scene.bins = [];
    const img = createRenderer(scene, 'top').render([]);
    expect(distinctColours(img).size).toBe(1);
    expect(pixelAt(img, 64, 10, 53)).not.toEqual(scene.background.map(toByte));
  });

  it('projects with the configured vertical field of view', () => {
    // fov 53.13 deg at 0.5 m: tan(fov/2) = 0.5, so the image spans 0.5 m and a 4 cm cube top
    // (0.48 m from the camera) spans 64 * 0.04 / (2 * 0.48 * 0.5) = 5.33 pixels
    const scene = topDown(0.5, 53.13010235415598);
    const img = createRenderer(scene, 'top').render([pose('red_cube', [0, -0.15, 0.02])]);
    const red = pixels(img, 64, isRed);
    const side = (64 * 0.04) / (2 * 0.48 * 0.5);
    expect(red.count).toBeGreaterThanOrEqual(Math.floor(side) ** 2);
    expect(red.count).toBeLessThanOrEqual(Math.ceil(side) ** 2);
    expect(red.col).toBeCloseTo(31.5, 5);
    expect(red.row).toBeCloseTo(31.5, 5);
  });

  it('draws cylinders as 12-sided prisms with the right footprint', () => {
    const scene = topDown(0.5, 53.13010235415598);
    scene.objects[0] = { ...scene.objects[0], shape: 'cylinder', halfExtents: [0.04, 0.04, 0.03] };
    const r = createRenderer(scene, 'top');
    const red = pixels(r.render([pose('red_cube', [0, -0.15, 0.03])]), 64, isRed);
    // top cap: a dodecagon of circumradius 0.04 m at 0.44 m, area 3 r^2 (one pixel = 0.44 / 64 m)
    const rPix = 0.04 / (0.44 / 64);
    const expected = 3 * rPix * rPix;
    expect(Math.abs(red.count - expected) / expected).toBeLessThan(0.1);
    expect(Math.abs(red.col - 31.5)).toBeLessThan(0.3);
    expect(Math.abs(red.row - 31.5)).toBeLessThan(0.3);
    // lying on its side (axis along y) it shows its side facets
    const lying = createRenderer(scene, 'top').render([
      pose('red_cube', [0, -0.15, 0.04], [Math.SQRT1_2, 0, 0, Math.SQRT1_2]),
    ]);
    const lyingRed = pixels(lying, 64, isRed);
    // silhouette: 2 * 0.04 wide (x, widest 0.46 m away) by 2 * 0.03 long (y, longest at the top, 0.42 m)
    const box = ((0.08 * 64) / 0.46) * ((0.06 * 64) / 0.42);
    expect(Math.abs(lyingRed.count - box) / box).toBeLessThan(0.15);
    expect(Math.abs(lyingRed.row - 31.5)).toBeLessThan(0.3);
  });

  it('clips triangles that cross the near plane', () => {
    // camera 5 cm above the table looking along +y: the table extends behind the camera
    const scene = sceneWith({ name: 'low', position: [0, -0.3, 0.05], target: [0, 1, 0.05] });
    const img = createRenderer(scene, 'low').render([]);
    const bg = scene.background.map(toByte).join(',');
    const [lx, ly, lz] = scene.lightDirection;
    const top = scene.table.colour
      .map((c) => toByte(c * (0.4 + (0.6 * lz) / Math.sqrt(lx * lx + ly * ly + lz * lz))))
      .join(',');
    for (let col = 0; col < 64; col++) {
      for (let row = 40; row < 64; row++) expect(pixelAt(img, 64, col, row).join(',')).toBe(top);
      for (let row = 0; row < 32; row++) expect(pixelAt(img, 64, col, row).join(',')).toBe(bg);
    }
  });

  it('culls back faces: a camera inside a box sees through it', () => {
    // the camera sits inside the red cube, looking down: the table is visible, the cube is not
    const scene = topDown(0.02, 40);
    const r = createRenderer(scene, 'top');
    expect(pixels(r.render([pose('red_cube', [0, -0.15, 0.02])]), 64, isRed).count).toBe(0);
    expect(hashOf(r.render([pose('red_cube', [0, -0.15, 0.02], yawQuat(0.3))]))).toBe(hashOf(r.render([])));
  });
});
