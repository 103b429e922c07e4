import { dcos, dsin } from '../core/dmath.ts';

/** Mutable quaternion (x, y, z, w): the shape Rapier's Rotation takes, so one object is reused per body. */
export interface MutQuat {
  x: number;
  y: number;
  z: number;
  w: number;
}
export interface MutVec {
  x: number;
  y: number;
  z: number;
}

/** Quaternion of the row-major 3x3 rotation m[o..o+8] (Shepperd's method: only sqrt, no trig). */
export function quatFromMat(m: ArrayLike<number>, o: number, out: MutQuat): MutQuat {
  const m00 = m[o],
    m01 = m[o + 1],
    m02 = m[o + 2];
  const m10 = m[o + 3],
    m11 = m[o + 4],
    m12 = m[o + 5];
  const m20 = m[o + 6],
    m21 = m[o + 7],
    m22 = m[o + 8];
  const tr = m00 + m11 + m22;
  if (tr > 0) {
    const s = 2 * Math.sqrt(tr + 1);
    out.w = 0.25 * s;
    out.x = (m21 - m12) / s;
    out.y = (m02 - m20) / s;
    out.z = (m10 - m01) / s;
  } else if (m00 > m11 && m00 > m22) {
    const s = 2 * Math.sqrt(1 + m00 - m11 - m22);
    out.w = (m21 - m12) / s;
    out.x = 0.25 * s;
    out.y = (m01 + m10) / s;
    out.z = (m02 + m20) / s;
  } else if (m11 > m22) {
    const s = 2 * Math.sqrt(1 + m11 - m00 - m22);
    out.w = (m02 - m20) / s;
    out.x = (m01 + m10) / s;
    out.y = 0.25 * s;
    out.z = (m12 + m21) / s;
  } else {
    const s = 2 * Math.sqrt(1 + m22 - m00 - m11);
    out.w = (m10 - m01) / s;
    out.x = (m02 + m20) / s;
    out.y = (m12 + m21) / s;
    out.z = 0.25 * s;
  }
  return out;
}

/** Rotation about world z by `yaw`. */
export function quatFromYaw(yaw: number): MutQuat {
  return { x: 0, y: 0, z: dsin(yaw / 2), w: dcos(yaw / 2) };
}
