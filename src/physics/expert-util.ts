import { clamp, datan2, wrapAngle } from '../core/dmath.ts';
import type { Vec3 } from '../scene/schema.ts';
import { quatAxes } from '../task/geometry.ts';
import type { TabletopState, TaskInstance } from '../task/types.ts';

/** A tool-centre-point goal: position, yaw and grip (0 open, 1 closed). */
export interface Goal {
  pos: Vec3;
  yaw: number;
  grip: number;
}

/** Per-env phase memory of the scripted expert. */
export interface Memory {
  task: TaskInstance | null;
  phase: string;
  /** Steps spent in the current phase. */
  timer: number;
  /** push: where the object was when the current leg started, the point to back off to, stall tracking. */
  legStart: [number, number] | null;
  hold: Vec3 | null;
  lastObj: Vec3;
  stalled: number;
}

export function freshMemory(task: TaskInstance | null): Memory {
  return { task, phase: 'approach', timer: 0, legStart: null, hold: null, lastObj: [0, 0, 0], stalled: 0 };
}

export function enter(mem: Memory, phase: string): void {
  mem.phase = phase;
  mem.timer = 0;
}

/** Tolerances shared by the scripts. */
export const XY_TOL = 0.004;
export const Z_TOL = 0.005;
export const YAW_TOL = 0.05;

export function nearXY(ee: Vec3, x: number, y: number, tol = XY_TOL): boolean {
  const dx = ee[0] - x,
    dy = ee[1] - y;
  return dx * dx + dy * dy < tol * tol;
}

export function yawClose(a: number, b: number, tol = YAW_TOL): boolean {
  return Math.abs(wrapAngle(a - b)) < tol;
}

/** The yaw equivalent to `target` modulo `period` (a half or quarter turn, for symmetric grippers and
 *  cubes) that is nearest to `current`, kept within +-limit. */
export function nearestEquivalent(target: number, period: number, current: number, limit: number): number {
  const k = (2 * Math.PI) / period;
  let y = current + wrapAngle(k * (target - current)) / k;
  // Past the limit by more than a little: use the other equivalent; a little: clamp (close enough).
  while (y > limit + 0.25) y -= period;
  while (y < -limit - 0.25) y += period;
  return clamp(y, -limit, limit);
}

/** Yaw of an object's x axis. */
export function yawOf(quat: TabletopState['objects'][number]['quat']): number {
  const [ax] = quatAxes(quat);
  return datan2(ax[1], ax[0]);
}
