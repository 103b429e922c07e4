import { readFileSync } from 'node:fs';
import { dcos, dsin } from '../../src/core/dmath.ts';
import { SceneSchema, type CameraConfig, type Scene } from '../../src/scene/schema.ts';
import type { RenderPose } from '../../src/render/index.ts';

export function loadScene(): Scene {
  return SceneSchema.parse(JSON.parse(readFileSync(new URL('../../scenes/tabletop.json', import.meta.url), 'utf8')));
}

/** The tabletop scene with its cameras replaced by `cameras` (defaults filled in). */
export function sceneWith(
  ...cameras: (Partial<CameraConfig> & Pick<CameraConfig, 'name' | 'position' | 'target'>)[]
): Scene {
  const scene = loadScene();
  scene.cameras = cameras.map((c) => ({ mount: 'fixed', up: [0, 0, 1], fovDeg: 55, width: 64, height: 64, ...c }));
  return scene;
}

export function yawQuat(yaw: number): [number, number, number, number] {
  return [0, 0, dsin(yaw / 2), dcos(yaw / 2)];
}

export const IDENTITY: [number, number, number, number] = [0, 0, 0, 1];

export function pose(name: string, pos: [number, number, number], quat = IDENTITY): RenderPose {
  return { name, pos, quat };
}

/** Pixels whose colour satisfies `pred`: count and centroid (column, row). */
export function pixels(img: Uint8Array, width: number, pred: (r: number, g: number, b: number) => boolean) {
  let count = 0,
    sx = 0,
    sy = 0;
  for (let i = 0; i < img.length / 3; i++) {
    if (pred(img[3 * i], img[3 * i + 1], img[3 * i + 2])) {
      count++;
      sx += i % width;
      sy += Math.floor(i / width);
    }
  }
  return { count, col: count ? sx / count : NaN, row: count ? sy / count : NaN };
}

export const isRed = (r: number, g: number, b: number) => r > 60 && r > 1.8 * Math.max(g, b);
export const isBlue = (r: number, g: number, b: number) => b > 60 && b > 1.8 * Math.max(r, g);

export function pixelAt(img: Uint8Array, width: number, col: number, row: number): [number, number, number] {
  const o = 3 * (row * width + col);
  return [img[o], img[o + 1], img[o + 2]];
}

export const toByte = (v: number) => Math.floor(v * 255 + 0.5);
