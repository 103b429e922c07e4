import type { Quat, Vec3 } from '../scene/schema.ts';

/** The privileged tabletop state: everything verifiers, the expert and the world model see.
 *  Plain data so the world model can predict it and the same verifiers can score predictions. */
export interface TabletopState {
  /** Tool centre point position and yaw. */
  eePos: Vec3;
  eeYaw: number;
  /** Opening of each finger (0 = closed, robot.finger.maxOpening = open): the distance from the TCP to
   *  that finger's inner face. Fingers slide along world direction (cos eeYaw, sin eeYaw, 0). */
  fingers: [number, number];
  /** One entry per scene object, in scene.objects order. */
  objects: { pos: Vec3; quat: Quat; linVel: Vec3 }[];
}

/** Seed ranges: training data, model selection (validation), reported evaluation (heldout). */
export const SPLITS = ['train', 'validation', 'heldout'] as const;
export type Split = (typeof SPLITS)[number];

export type TargetKind = 'zone' | 'bin' | 'object';

/** One sampled episode: which object goes where, the instruction and the initial layout. */
export interface TaskInstance {
  family: 'push' | 'pick_place' | 'stack' | 'put_in_bin';
  /** Env id, e.g. "tabletop/push". */
  taskId: string;
  seed: number;
  split: Split;
  /** Index into scene.objects of the object to manipulate. */
  object: number;
  target: { kind: TargetKind; index: number };
  instruction: string;
  /** Initial object positions (on the table) and yaws, in scene.objects order. */
  initObjects: { pos: Vec3; yaw: number }[];
  /** Initial tool-centre-point position. */
  initEe: Vec3;
}

/** Verifier output for one state: named sub-predicates, success, and Φ = satisfied / S. */
export interface TaskScore {
  success: boolean;
  progress: number;
  predicates: Record<string, boolean>;
}
