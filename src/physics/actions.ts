import type { BatchAction } from '../env/types.ts';
import type { Scene } from '../scene/schema.ts';

type Control = Scene['control'];

/** Action token names, in spec order. */
export const ACTION_NAMES = ['dx', 'dy', 'dz', 'dyaw', 'grip'] as const;
export type ActionName = (typeof ACTION_NAMES)[number];

/** One env's continuous command: TCP translation (m), yaw change (rad), and grip closure in [0, 1]
 *  (0 = open, 1 = closed). */
export interface ContinuousAction {
  dx: number;
  dy: number;
  dz: number;
  dyaw: number;
  grip: number;
}
export type ActionTokens = Record<ActionName, number>;

/** Value of bin `token` of `n` bins spread evenly over [-max, max]; the middle bin is exactly 0. */
export function binValue(token: number, n: number, max: number): number {
  return (max * (2 * token - (n - 1))) / (n - 1);
}

/** Nearest of `n` bins over [-max, max] to `value` (values outside the range clamp to the end bins). */
export function nearestBin(value: number, n: number, max: number): number {
  const t = Math.round(((value / max + 1) * (n - 1)) / 2);
  return t < 0 ? 0 : t > n - 1 ? n - 1 : t;
}

/** Tokens -> continuous command. Throws a RangeError naming the dimension for an out-of-range token. */
export function decodeAction(control: Control, tokens: ActionTokens): ContinuousAction {
  for (const name of ACTION_NAMES) {
    const n = name === 'grip' ? control.gripperBins : control.bins;
    const t = tokens[name];
    if (!Number.isInteger(t) || t < 0 || t >= n)
      throw new RangeError(`action.${name} = ${t} is not a bin index in [0, ${n})`);
  }
  return {
    dx: binValue(tokens.dx, control.bins, control.maxTranslation),
    dy: binValue(tokens.dy, control.bins, control.maxTranslation),
    dz: binValue(tokens.dz, control.bins, control.maxTranslation),
    dyaw: binValue(tokens.dyaw, control.bins, control.maxYaw),
    grip: tokens.grip / (control.gripperBins - 1),
  };
}

/** Continuous command -> nearest tokens (each dimension clamped to its range). */
export function encodeAction(control: Control, action: ContinuousAction): ActionTokens {
  const g = Math.round(action.grip * (control.gripperBins - 1));
  return {
    dx: nearestBin(action.dx, control.bins, control.maxTranslation),
    dy: nearestBin(action.dy, control.bins, control.maxTranslation),
    dz: nearestBin(action.dz, control.bins, control.maxTranslation),
    dyaw: nearestBin(action.dyaw, control.bins, control.maxYaw),
    grip: g < 0 ? 0 : g > control.gripperBins - 1 ? control.gripperBins - 1 : g,
  };
}

/** An empty batched action (all zeros) for `numEnvs` envs. */
export function emptyAction(numEnvs: number): BatchAction {
  const a: BatchAction = {};
  for (const name of ACTION_NAMES) a[name] = new Int32Array(numEnvs);
  return a;
}

/** Writes env i's tokens into a batched action. */
export function putTokens(action: BatchAction, i: number, tokens: ActionTokens): void {
  for (const name of ACTION_NAMES) action[name][i] = tokens[name];
}
