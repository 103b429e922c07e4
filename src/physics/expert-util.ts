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

/** Per-env memory of the scripted expert. Every decision on the expert's own path is read from the state
 *  (an expert with fresh memory at every step picks the same tokens); memory only helps recover from
 *  states it does not reach itself: a failed grasp rising until open, a close that never grips given up,
 *  and the other pair of faces tried after a missed grasp. */
export interface Memory {
  task: TaskInstance | null;
  /** The phase of the last action, and how many actions in a row had it. */
  phase: string;
  timer: number;
  /** pick: the tool yaw of the last grasp that failed; the next one takes the other pair of faces. */
  missedYaw: number | null;
}

export function freshMemory(task: TaskInstance | null): Memory {
  return { task, phase: 'approach', timer: 0, missedYaw: null };
}

/** Records the phase of this step's action (the timer counts consecutive actions in one phase). */
export function label(mem: Memory, phase: string): void {
  if (mem.phase === phase) mem.timer++;
  else {
    mem.phase = phase;
    mem.timer = 1;
  }
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

/** Yaw of an object's x axis; for a box tipped onto a side, of the body axis that lies flat instead
 *  (the y axis turned back a quarter turn, or the z axis), so a cube on its side still has face yaws. */
export function yawOf(quat: TabletopState['objects'][number]['quat']): number {
  const [ax, ay, az] = quatAxes(quat);
  if (Math.abs(ax[2]) < 0.5) return datan2(ax[1], ax[0]);
  if (Math.abs(ay[2]) < 0.5) return wrapAngle(datan2(ay[1], ay[0]) - Math.PI / 2);
  return datan2(az[1], az[0]);
}
