import { describe, expect, it } from 'vitest';
import { hashOf } from '../../src/core/hash.ts';
import { createRenderer } from '../../src/render/index.ts';
import { IDENTITY, isBlue, isRed, loadScene, pixelAt, pixels, pose, toByte, yawQuat } from './helpers.ts';

const scene = loadScene();
const front = createRenderer(scene, 'front');
const W = front.width;
// camera target of the front camera is the table centre; a cube resting there
const atTarget = (name = 'red_cube', x = 0, y = 0, z = 0.02) => pose(name, [x, y, z]);

describe('createRenderer', () => {
  it('reports the camera size and config', () => {
    expect(front.width).toBe(64);
    expect(front.height).toBe(64);
    expect(front.camera.name).toBe('front');
  });

  it('rejects an unknown camera, unknown or duplicate pose names, and a short buffer', () => {
    expect(() => createRenderer(scene, 'nope')).toThrow(/no camera named "nope"/);
    expect(() => front.render([pose('ghost', [0, 0, 0])])).toThrow(/unknown body "ghost"/);
    expect(() => front.render([atTarget(), atTarget()])).toThrow(/two poses for body "red_cube"/);
    expect(() => front.render([], new Uint8Array(100))).toThrow(/no room/);
    expect(() => front.render([], new Uint8Array(64 * 64 * 3), 3)).toThrow(/no room/);
    expect(() => front.render([pose('red_cube', [0, NaN, 0])])).toThrow(/pose "red_cube": pos\[1\]/);
    expect(() => front.render([pose('red_cube', [0, 0, 0], [0, 0, 0, 0])])).toThrow(
      /pose "red_cube": quat has zero length/,
    );
  });
});

describe('determinism', () => {
  const poses = [
    atTarget('red_cube', -0.1, -0.05),
    pose('green_cube', [0.12, 0.02, 0.02], yawQuat(0.4)),
    pose('blue_cube', [0.2, -0.15, 0.02], yawQuat(-0.3)),
    pose('yellow_cube', [-0.2, 0.04, 0.02], yawQuat(1.1)),
    pose('palm', [0.05, -0.05, 0.2], [1, 0, 0, 0]),
  ];

  it('gives identical bytes for the same poses, across calls and renderer instances', () => {
    const a = hashOf(front.render(poses));
    front.render([atTarget('red_cube', 0.3, 0.1)]); // a different frame in between
    const b = hashOf(front.render(poses));
    const c = hashOf(createRenderer(loadScene(), 'front').render(poses));
    expect(b).toBe(a);
    expect(c).toBe(a);
  });

  it('does not depend on the order of the poses', () => {
    expect(hashOf(front.render([...poses].reverse()))).toBe(hashOf(front.render(poses)));
  });

  it('writes into a shared buffer at an offset without touching the rest', () => {
    const size = 64 * 64 * 3;
    const batch = new Uint8Array(3 * size).fill(7);
    const ret = front.render(poses, batch, size);
    expect(ret).toBe(batch);
    expect(hashOf(batch.subarray(size, 2 * size))).toBe(hashOf(front.render(poses)));
    expect(batch.subarray(0, size).every((v) => v === 7)).toBe(true);
    expect(batch.subarray(2 * size).every((v) => v === 7)).toBe(true);
  });
});

describe('geometry', () => {
  it('shows the background where nothing is drawn', () => {
    const img = front.render([]);
    const bg = scene.background.map(toByte);
    expect(pixelAt(img, W, 0, 0)).toEqual(bg);
    expect(pixelAt(img, W, 63, 0)).toEqual(bg);
    // the table centre is not background, and no red anywhere without the red cube
    expect(pixelAt(img, W, 32, 40)).not.toEqual(bg);
    expect(pixels(img, W, isRed).count).toBe(0);
  });

  it('draws a red cube at the camera target near the image centre, and nothing once it leaves the view', () => {
    const red = pixels(front.render([atTarget()]), W, isRed);
    expect(red.count).toBeGreaterThanOrEqual(6);
    expect(red.count).toBeLessThan(40);
    expect(Math.abs(red.col - 31.5)).toBeLessThan(2);
    expect(Math.abs(red.row - 31.5)).toBeLessThan(3);
    expect(pixels(front.render([atTarget('red_cube', 3, 0)]), W, isRed).count).toBe(0); // far to the right
    expect(pixels(front.render([atTarget('red_cube', 0, -1.5, 0.62)]), W, isRed).count).toBe(0); // behind the camera
  });

  it('does not draw a moving body that has no pose', () => {
    expect(hashOf(front.render([pose('green_cube', [0.2, 0, 0.02])]))).toBe(
      hashOf(front.render([pose('green_cube', [0.2, 0, 0.02]), atTarget('red_cube', 5, 0)])),
    );
  });

  it("moves a body's pixels in the direction of its pose change", () => {
    const at = (x: number, y: number, z: number) => pixels(front.render([atTarget('red_cube', x, y, z)]), W, isRed);
    const base = at(0, 0, 0.02);
    const right = at(0.1, 0, 0.02);
    const farther = at(0, 0.15, 0.02);
    const higher = at(0, 0, 0.12);
    expect(right.col - base.col).toBeGreaterThan(4);
    expect(Math.abs(right.row - base.row)).toBeLessThan(2);
    expect(farther.row).toBeLessThan(base.row - 3); // farther away on the table: higher up in the image
    expect(farther.count).toBeLessThan(base.count); // and smaller
    expect(higher.row).toBeLessThan(base.row - 3);
    expect(Math.abs(higher.col - base.col)).toBeLessThan(1);
  });

  it('rotating a cube about z changes its pixels but not its place', () => {
    const a = front.render([atTarget()]);
    const b = front.render([pose('red_cube', [0, 0, 0.02], yawQuat(0.7))]);
    expect(hashOf(b)).not.toBe(hashOf(a));
    expect(Math.abs(pixels(b, W, isRed).col - pixels(a, W, isRed).col)).toBeLessThan(1);
  });

  it('lets nearer bodies hide farther ones (z-buffer), independent of drawing order', () => {
    // put both cubes on the camera's central line of sight, one halfway, one near the target
    const cam = scene.cameras.find((c) => c.name === 'front')!;
    const along = (t: number) => cam.position.map((p, k) => p + t * (cam.target[k] - p)) as [number, number, number];
    const near = along(0.5);
    const far = along(0.95);
    const redNear = front.render([pose('red_cube', near), pose('blue_cube', far)]);
    expect(isRed(...pixelAt(redNear, W, 32, 32))).toBe(true);
    expect(pixels(redNear, W, isBlue).count).toBe(0);
    const blueNear = front.render([pose('red_cube', far), pose('blue_cube', near)]);
    expect(isBlue(...pixelAt(blueNear, W, 32, 32))).toBe(true);
    expect(pixels(blueNear, W, isRed).count).toBe(0);
    // a cube sitting on a zone hides part of the zone
    const zone = scene.zones[0];
    const onZone = front.render([pose('blue_cube', [zone.centre[0], zone.centre[1], 0.02])]);
    const zoneOnly = front.render([]);
    const orange = (r: number, g: number, b: number) => r > 150 && g > 60 && g < 0.75 * r && b < 0.5 * g;
    expect(pixels(onZone, W, orange).count).toBeLessThan(pixels(zoneOnly, W, orange).count);
    expect(pixels(onZone, W, isBlue).count).toBeGreaterThan(0);
  });

  it('shades faces by the light: the top of a cube is brighter than its front', () => {
    const img = front.render([pose('red_cube', [0, 0, 0.02], IDENTITY)]);
    const reds = new Set<number>();
    for (let i = 0; i < img.length; i += 3) if (isRed(img[i], img[i + 1], img[i + 2])) reds.add(img[i]);
    // light (0.3, -0.5, 1): top face n=(0,0,1) and front face n=(0,-1,0) get different shades
    const shade = (n: [number, number, number]) => {
      const [lx, ly, lz] = scene.lightDirection;
      const l = Math.sqrt(lx * lx + ly * ly + lz * lz);
      return toByte(scene.objects[0].colour[0] * (0.4 + 0.6 * Math.max(0, (n[0] * lx + n[1] * ly + n[2] * lz) / l)));
    };
    expect([...reds].sort()).toEqual([shade([0, 0, 1]), shade([0, -1, 0])].sort());
  });
});
