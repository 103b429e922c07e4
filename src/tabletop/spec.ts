import { InputError } from '../core/errors.ts';
import { EnvSpecSchema, formatZodError, type EnvSpec } from '../core/spec.ts';
import type { Scene } from '../scene/schema.ts';
import { findTask } from '../task/families.ts';

/** Proprioception entries, in order: tool-centre-point x, y, z (m), tool yaw (rad), left and right
 *  finger opening (m from closed), gripper command (0 = open ... 1 = closed). */
export const PROPRIO = ['tcp_x', 'tcp_y', 'tcp_z', 'tcp_yaw', 'finger_left', 'finger_right', 'grip_command'] as const;
/** One bound for every proprio entry: positions stay within the table (< 0.5 m), yaw within +-pi/2. */
export const PROPRIO_BOUND = 2;
export const INSTRUCTION_MAX = 96;

/** Fixed cameras of the scene (the default observation cameras). */
export function fixedCameras(scene: Scene): string[] {
  return scene.cameras.filter((c) => c.mount === 'fixed').map((c) => c.name);
}

/** Observation name of a camera's image. */
export const imageName = (camera: string): string => `image_${camera}`;

/** The scene cameras behind image observation names (image_<camera>), e.g. a VLA config's `cameras`: what
 *  an env must render for that policy. Throws an InputError on a name that is not image_<camera>. */
export function camerasOf(imageNames: readonly string[]): string[] {
  return imageNames.map((n) => {
    if (!n.startsWith('image_') || n.length === 6)
      throw new InputError(`cameras: observation "${n}" is not a tabletop camera image (image_<camera>)`);
    return n.slice(6);
  });
}

/** `cameras` checked as the cameras of one VLA policy: scene cameras, none twice, at most 2, one image
 *  size. Throws an InputError naming `flag`. */
export function checkCameras(scene: Scene, cameras: readonly string[], flag = '--cameras'): string[] {
  const have = scene.cameras.map((c) => c.name);
  const unknown = cameras.find((c) => !have.includes(c));
  if (unknown !== undefined)
    throw new InputError(`${flag}: unknown camera "${unknown}"; scene "${scene.name}" has ${have.join(', ')}`);
  if (new Set(cameras).size !== cameras.length) throw new InputError(`${flag}: a camera is named twice`);
  if (cameras.length > 2) throw new InputError(`${flag}: a policy reads at most 2 cameras, got ${cameras.length}`);
  const sizes = new Set(
    cameras.map((n) => scene.cameras.find((c) => c.name === n)!).map((c) => `${c.width}x${c.height}`),
  );
  if (sizes.size > 1)
    throw new InputError(`${flag}: the cameras must have one image size, got ${[...sizes].join(', ')}`);
  return [...cameras];
}

/** `cameras`, or undefined where they are the scene's default (fixedCameras): callers that record
 *  options (run keys, job payloads) leave the default out, so what was recorded before stays the same. */
export function nonDefaultCameras(scene: Scene, cameras: readonly string[] | undefined): string[] | undefined {
  if (!cameras) return undefined;
  return cameras.join(',') === fixedCameras(scene).join(',') ? undefined : [...cameras];
}

/** The env spec of a tabletop task. Reward: 1 on the step the task verifier reports success, else 0;
 *  info.terms carries "success" (0/1) and "progress" (the verifier's process score, satisfied / S). */
export function tabletopSpec(scene: Scene, taskId: string, cameras: readonly string[]): EnvSpec {
  const task = findTask(scene, taskId);
  const c = scene.control;
  const observation = [
    ...cameras.map((name) => {
      const cam = scene.cameras.find((x) => x.name === name);
      if (!cam)
        throw new RangeError(
          `cameras: scene "${scene.name}" has no camera "${name}" (have ` +
            `${scene.cameras.map((x) => x.name).join(', ')})`,
        );
      return { kind: 'image' as const, name: imageName(name), shape: [cam.height, cam.width, 3] };
    }),
    { kind: 'box' as const, name: 'proprio', shape: [PROPRIO.length], low: -PROPRIO_BOUND, high: PROPRIO_BOUND },
    { kind: 'text' as const, name: 'instruction', maxLength: INSTRUCTION_MAX },
  ];
  const move = (name: string, max: number) => ({ kind: 'discrete' as const, name, n: c.bins, low: -max, high: max });
  const action = [
    move('dx', c.maxTranslation),
    move('dy', c.maxTranslation),
    move('dz', c.maxTranslation),
    move('dyaw', c.maxYaw),
    { kind: 'discrete' as const, name: 'grip', n: c.gripperBins, low: 0, high: 1 },
  ];
  const parsed = EnvSpecSchema.safeParse({
    id: task.id,
    observation,
    action,
    maxEpisodeSteps: task.maxEpisodeSteps,
    rewardTerms: ['success', 'progress'],
  });
  if (!parsed.success)
    throw new RangeError(`tabletop spec for "${taskId}" is invalid:\n${formatZodError(parsed.error, 'spec')}`);
  return parsed.data;
}
