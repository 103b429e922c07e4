// The arm's forward kinematics and DLS IK (pure math, browser-safe): shared by physics (drives the
// kinematic links) and the world model (poses the arm at a predicted tool pose for rendering).
import { dcos, dsin } from '../core/dmath.ts';
import type { Scene } from './schema.ts';

type Robot = Scene['robot'];

const AXIS_INDEX = { x: 0, y: 1, z: 2 } as const;
/** Rotation rows are weighted by this many metres per radian in the IK error and Jacobian. */
const ROT_WEIGHT = 0.2;
/** DLS damping (squared below) and the largest joint change of one IK iteration (rad). */
const DAMPING = 0.02;
const MAX_DQ = 0.25;

/** Forward kinematics and damped-least-squares IK of the 6-joint chain with the tool pointing down.
 *  Joint frame i: origin p_i = p_{i-1} + R_{i-1} origin_i, rotation R_i = R_{i-1} Rot(axis_i, q_i).
 *  All buffers are preallocated: fk() and solve() allocate nothing. */
export class ArmKinematics {
  readonly n = 6;
  /** Joint frame origins (6 x 3) after fk(). */
  readonly pos = new Float64Array(18);
  /** Joint frame rotations (6 x 3x3, row-major) after fk(). */
  readonly rot = new Float64Array(54);
  /** Tool centre point after fk(). */
  readonly tcp = new Float64Array(3);
  readonly lower = new Float64Array(6);
  readonly upper = new Float64Array(6);
  private readonly axes: Uint8Array;
  private readonly origins: Float64Array;
  private readonly base: Float64Array;
  private readonly tcpOffset: Float64Array;
  private readonly jac = new Float64Array(36); // 6 rows (x y z, weighted rx ry rz) x 6 joints
  private readonly err = new Float64Array(6);
  private readonly a = new Float64Array(36);
  private readonly y = new Float64Array(6);
  private readonly dq = new Float64Array(6);

  constructor(robot: Robot) {
    this.axes = Uint8Array.from(robot.joints.map((j) => AXIS_INDEX[j.axis]));
    this.origins = Float64Array.from(robot.joints.flatMap((j) => j.origin));
    this.base = Float64Array.from(robot.base);
    this.tcpOffset = Float64Array.from(robot.tcpOffset);
    robot.joints.forEach((j, i) => {
      this.lower[i] = j.limit[0];
      this.upper[i] = j.limit[1];
    });
  }

  fk(q: ArrayLike<number>): void {
    const { pos, rot, origins } = this;
    let px = this.base[0],
      py = this.base[1],
      pz = this.base[2];
    // previous rotation, starts as identity
    let r0 = 1,
      r1 = 0,
      r2 = 0,
      r3 = 0,
      r4 = 1,
      r5 = 0,
      r6 = 0,
      r7 = 0,
      r8 = 1;
    for (let i = 0; i < 6; i++) {
      const ox = origins[3 * i],
        oy = origins[3 * i + 1],
        oz = origins[3 * i + 2];
      px += r0 * ox + r1 * oy + r2 * oz;
      py += r3 * ox + r4 * oy + r5 * oz;
      pz += r6 * ox + r7 * oy + r8 * oz;
      const c = dcos(q[i]),
        s = dsin(q[i]);
      // right-multiply by the elementary rotation: mixes two columns
      const ax = this.axes[i];
      if (ax === 0) {
        const a1 = r1,
          a4 = r4,
          a7 = r7;
        r1 = c * a1 + s * r2;
        r4 = c * a4 + s * r5;
        r7 = c * a7 + s * r8;
        r2 = -s * a1 + c * r2;
        r5 = -s * a4 + c * r5;
        r8 = -s * a7 + c * r8;
      } else if (ax === 1) {
        const a0 = r0,
          a3 = r3,
          a6 = r6;
        r0 = c * a0 - s * r2;
        r3 = c * a3 - s * r5;
        r6 = c * a6 - s * r8;
        r2 = s * a0 + c * r2;
        r5 = s * a3 + c * r5;
        r8 = s * a6 + c * r8;
      } else {
        const a0 = r0,
          a3 = r3,
          a6 = r6;
        r0 = c * a0 + s * r1;
        r3 = c * a3 + s * r4;
        r6 = c * a6 + s * r7;
        r1 = -s * a0 + c * r1;
        r4 = -s * a3 + c * r4;
        r7 = -s * a6 + c * r7;
      }
      pos[3 * i] = px;
      pos[3 * i + 1] = py;
      pos[3 * i + 2] = pz;
      const o = 9 * i;
      rot[o] = r0;
      rot[o + 1] = r1;
      rot[o + 2] = r2;
      rot[o + 3] = r3;
      rot[o + 4] = r4;
      rot[o + 5] = r5;
      rot[o + 6] = r6;
      rot[o + 7] = r7;
      rot[o + 8] = r8;
    }
    const tx = this.tcpOffset[0],
      ty = this.tcpOffset[1],
      tz = this.tcpOffset[2];
    this.tcp[0] = px + r0 * tx + r1 * ty + r2 * tz;
    this.tcp[1] = py + r3 * tx + r4 * ty + r5 * tz;
    this.tcp[2] = pz + r6 * tx + r7 * ty + r8 * tz;
  }

  /** Orientation error (weighted) of the last frame against R_d = Rz(yaw) Rx(pi), written to err[3..5];
   *  returns its unweighted squared norm. Uses e = 1/2 sum_k r_k x d_k over the frame's columns. */
  private orientationError(cy: number, sy: number): number {
    const r = this.rot;
    // desired columns: x_d = (cy, sy, 0), y_d = (sy, -cy, 0), z_d = (0, 0, -1)
    const ax = r[45],
      ay = r[48],
      az = r[51];
    const bx = r[46],
      by = r[49],
      bz = r[52];
    let ex = -az * sy + bz * cy;
    let ey = az * cy + bz * sy;
    const ez = ax * sy - ay * cy - bx * cy - by * sy;
    // z column against (0, 0, -1): r x d = (-ay, ax, 0)
    ex += -r[50];
    ey += r[47];
    ex *= 0.5;
    ey *= 0.5;
    this.err[3] = ROT_WEIGHT * ex;
    this.err[4] = ROT_WEIGHT * ey;
    this.err[5] = ROT_WEIGHT * 0.5 * ez;
    return ex * ex + ey * ey + 0.25 * ez * ez;
  }

  /** Damped-least-squares iterations from q (updated in place, kept within joint limits) toward the tool
   *  centre point `target` with the tool pointing down at `yaw`. Returns the final position error (m). */
  solve(q: Float64Array, target: ArrayLike<number>, yaw: number, iterations: number, tol = 1e-6): number {
    const cy = dcos(yaw),
      sy = dsin(yaw);
    let posErr = Infinity;
    for (let it = 0; it <= iterations; it++) {
      this.fk(q);
      const err = this.err;
      err[0] = target[0] - this.tcp[0];
      err[1] = target[1] - this.tcp[1];
      err[2] = target[2] - this.tcp[2];
      posErr = Math.sqrt(err[0] * err[0] + err[1] * err[1] + err[2] * err[2]);
      const rotErr2 = this.orientationError(cy, sy);
      if (it === iterations || (posErr < tol && rotErr2 < tol * tol)) break;
      this.jacobian();
      this.dlsStep(q);
    }
    return posErr;
  }

  /** Current tool yaw from the last frame's x axis (valid while the tool points down). */
  yawOf(): [number, number] {
    return [this.rot[45], this.rot[48]];
  }

  private jacobian(): void {
    const { jac, pos, rot, tcp } = this;
    for (let i = 0; i < 6; i++) {
      const o = 9 * i + this.axes[i];
      const wx = rot[o],
        wy = rot[o + 3],
        wz = rot[o + 6];
      const rx = tcp[0] - pos[3 * i],
        ry = tcp[1] - pos[3 * i + 1],
        rz = tcp[2] - pos[3 * i + 2];
      jac[i] = wy * rz - wz * ry;
      jac[6 + i] = wz * rx - wx * rz;
      jac[12 + i] = wx * ry - wy * rx;
      jac[18 + i] = ROT_WEIGHT * wx;
      jac[24 + i] = ROT_WEIGHT * wy;
      jac[30 + i] = ROT_WEIGHT * wz;
    }
  }

  /** q += J^T (J J^T + lambda^2 I)^-1 err, step-limited and clamped to the joint limits. */
  private dlsStep(q: Float64Array): void {
    const { jac, a, y, err, dq } = this;
    for (let r = 0; r < 6; r++) {
      for (let c = 0; c <= r; c++) {
        let s = 0;
        for (let k = 0; k < 6; k++) s += jac[6 * r + k] * jac[6 * c + k];
        a[6 * r + c] = s;
      }
      a[6 * r + r] += DAMPING * DAMPING;
    }
    choleskySolve6(a, err, y);
    let maxStep = 0;
    for (let k = 0; k < 6; k++) {
      let s = 0;
      for (let r = 0; r < 6; r++) s += jac[6 * r + k] * y[r];
      dq[k] = s;
      if (Math.abs(s) > maxStep) maxStep = Math.abs(s);
    }
    const scale = maxStep > MAX_DQ ? MAX_DQ / maxStep : 1;
    for (let k = 0; k < 6; k++) {
      const v = q[k] + scale * dq[k];
      q[k] = v < this.lower[k] ? this.lower[k] : v > this.upper[k] ? this.upper[k] : v;
    }
  }
}

/** Solves A x = b for a symmetric positive definite 6x6 A given by its lower triangle (overwritten). */
function choleskySolve6(a: Float64Array, b: Float64Array, x: Float64Array): void {
  for (let j = 0; j < 6; j++) {
    let d = a[6 * j + j];
    for (let k = 0; k < j; k++) d -= a[6 * j + k] * a[6 * j + k];
    d = Math.sqrt(d);
    a[6 * j + j] = d;
    for (let i = j + 1; i < 6; i++) {
      let s = a[6 * i + j];
      for (let k = 0; k < j; k++) s -= a[6 * i + k] * a[6 * j + k];
      a[6 * i + j] = s / d;
    }
  }
  for (let i = 0; i < 6; i++) {
    let s = b[i];
    for (let k = 0; k < i; k++) s -= a[6 * i + k] * x[k];
    x[i] = s / a[6 * i + i];
  }
  for (let i = 5; i >= 0; i--) {
    let s = x[i];
    for (let k = i + 1; k < 6; k++) s -= a[6 * k + i] * x[k];
    x[i] = s / a[6 * i + i];
  }
}

/** Fingertips reach this far past the tool centre point. */
export const TIP_BELOW_TCP = 0.015;

/** Where the gripper sits in the last joint's frame: the palm centre, and how far below it the
 *  finger centres hang. Shared by the physics rig and the world model's renderer poses. */
export function gripperGeometry(robot: Scene['robot']): { palmOffset: [number, number, number]; fingerDrop: number } {
  const [tx, ty, tz] = robot.tcpOffset;
  const fhz = robot.finger.halfExtents[2];
  const phz = robot.palm.halfExtents[2];
  return { palmOffset: [tx, ty, tz - (fhz - TIP_BELOW_TCP) - fhz - phz], fingerDrop: phz + fhz };
}
