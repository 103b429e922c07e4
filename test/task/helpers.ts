// Hand-built tasks and states for verifier tests, positioned from the shipped scene's geometry.
import type { Quat, Scene, Vec3 } from '../../src/scene/schema.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';
import { FAMILY_PREDICATES, type TabletopState, type TargetKind, type TaskInstance } from '../../src/task/index.ts';

export const scene: Scene = loadSceneFile(DEFAULT_SCENE_PATH);
export const ID: Quat = [0, 0, 0, 1];
export const yawQuat = (a: number): Quat => [0, 0, Math.sin(a / 2), Math.cos(a / 2)];
export const tiltX = (a: number): Quat => [Math.sin(a / 2), 0, 0, Math.cos(a / 2)];
export const objIndex = (name: string) => scene.objects.findIndex((o) => o.name === name);
/** Half height of the (cube) objects. */
export const H = scene.objects[0].halfExtents[2];
export const OPEN = scene.robot.finger.maxOpening;

const FAMILY_OF: Record<string, TaskInstance['family']> = {
  push: 'push',
  'pick-place': 'pick_place',
  stack: 'stack',
  'put-in-bin': 'put_in_bin',
};

/** A task instance with objects spread on a line in front of the robot. */
export function makeTask(taskId: string, object: string, target: { kind: TargetKind; name: string }): TaskInstance {
  const list = target.kind === 'zone' ? scene.zones : target.kind === 'bin' ? scene.bins : scene.objects;
  const index = list.findIndex((x) => x.name === target.name);
  if (index < 0) throw new Error(`no ${target.kind} ${target.name}`);
  return {
    family: FAMILY_OF[taskId.split('/')[1]],
    taskId,
    seed: 0,
    split: 'train',
    object: objIndex(object),
    target: { kind: target.kind, index },
    instruction: 'test',
    initObjects: scene.objects.map((_, i) => ({ pos: [-0.15 + 0.1 * i, -0.1, H] as Vec3, yaw: 0 })),
    initEe: [0, -0.12, 0.15],
  };
}

export interface StateSpec {
  ee?: Vec3;
  yaw?: number;
  fingers?: [number, number];
  objs?: Record<number, { pos?: Vec3; quat?: Quat; linVel?: Vec3 }>;
}

/** Objects at their initial positions (upright, still), the TCP at initEe with open fingers, then overrides. */
export function makeState(task: TaskInstance, spec: StateSpec = {}): TabletopState {
  return {
    eePos: spec.ee ?? task.initEe,
    eeYaw: spec.yaw ?? 0,
    fingers: spec.fingers ?? [OPEN, OPEN],
    objects: task.initObjects.map((o, i) => ({
      pos: spec.objs?.[i]?.pos ?? o.pos,
      quat: spec.objs?.[i]?.quat ?? ID,
      linVel: spec.objs?.[i]?.linVel ?? [0, 0, 0],
    })),
  };
}

/** The predicate record with the first n of the family's predicates true. */
export function firstN(family: TaskInstance['family'], n: number): Record<string, boolean> {
  return Object.fromEntries(FAMILY_PREDICATES[family].map((name, k) => [name, k < n]));
}
