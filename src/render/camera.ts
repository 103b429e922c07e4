import { dcos, dsin } from '../core/dmath.ts';
import type { CameraConfig } from '../scene/schema.ts';

/** World-to-camera transform: camera x right, y up, z forward (depth). Rows of `rot` are the camera
 *  axes in world coordinates; a world point p maps to rot * (p - eye). */
export interface CameraPose {
  eye: Float64Array; // 3
  rot: Float64Array; // 3x3 row-major
}

/** Focal length in pixels for the vertical field of view: (height / 2) / tan(fov / 2). */
export function focalPixels(camera: CameraConfig): number {
  const half = (camera.fovDeg * Math.PI) / 360;
  return (camera.height / 2) * (dcos(half) / dsin(half));
}

/** Writes the look-at basis for eye/target/up into `out`; throws naming the camera field when the
 *  view direction is degenerate or parallel to `up`. */
export function lookAt(
  out: CameraPose,
  ex: number,
  ey: number,
  ez: number,
  tx: number,
  ty: number,
  tz: number,
  ux: number,
  uy: number,
  uz: number,
  cameraName: string,
): void {
  let fx = tx - ex,
    fy = ty - ey,
    fz = tz - ez;
  const fl = Math.sqrt(fx * fx + fy * fy + fz * fz);
  if (!(fl > 1e-12)) throw new Error(`camera "${cameraName}": target coincides with position`);
  fx /= fl;
  fy /= fl;
  fz /= fl;
  // right = forward x up
  let rx = fy * uz - fz * uy,
    ry = fz * ux - fx * uz,
    rz = fx * uy - fy * ux;
  const rl = Math.sqrt(rx * rx + ry * ry + rz * rz);
  if (!(rl > 1e-9)) throw new Error(`camera "${cameraName}": up is parallel to the view direction`);
  rx /= rl;
  ry /= rl;
  rz /= rl;
  // true up = right x forward
  const vx = ry * fz - rz * fy,
    vy = rz * fx - rx * fz,
    vz = rx * fy - ry * fx;
  const r = out.rot;
  r[0] = rx;
  r[1] = ry;
  r[2] = rz;
  r[3] = vx;
  r[4] = vy;
  r[5] = vz;
  r[6] = fx;
  r[7] = fy;
  r[8] = fz;
  out.eye[0] = ex;
  out.eye[1] = ey;
  out.eye[2] = ez;
}

/** Row-major rotation matrix of a quaternion (x, y, z, w), normalised first. */
export function quatToMatrix(out: Float64Array, o: number, x: number, y: number, z: number, w: number): void {
  const n = Math.sqrt(x * x + y * y + z * z + w * w);
  if (!(n > 0)) throw new Error('quaternion has zero length');
  x /= n;
  y /= n;
  z /= n;
  w /= n;
  out[o] = 1 - 2 * (y * y + z * z);
  out[o + 1] = 2 * (x * y - z * w);
  out[o + 2] = 2 * (x * z + y * w);
  out[o + 3] = 2 * (x * y + z * w);
  out[o + 4] = 1 - 2 * (x * x + z * z);
  out[o + 5] = 2 * (y * z - x * w);
  out[o + 6] = 2 * (x * z - y * w);
  out[o + 7] = 2 * (y * z + x * w);
  out[o + 8] = 1 - 2 * (x * x + y * y);
}

/** Wrist camera: position/target/up are in the palm frame (pos, rotation matrix m). */
export function wristPose(
  out: CameraPose,
  camera: CameraConfig,
  pos: Float64Array,
  po: number,
  rot: Float64Array,
  ro: number,
): void {
  const [a, b, c] = camera.position;
  const [d, e, f] = camera.target;
  const [g, h, i] = camera.up;
  const px = pos[po],
    py = pos[po + 1],
    pz = pos[po + 2];
  const m0 = rot[ro],
    m1 = rot[ro + 1],
    m2 = rot[ro + 2],
    m3 = rot[ro + 3],
    m4 = rot[ro + 4],
    m5 = rot[ro + 5];
  const m6 = rot[ro + 6],
    m7 = rot[ro + 7],
    m8 = rot[ro + 8];
  lookAt(
    out,
    px + m0 * a + m1 * b + m2 * c,
    py + m3 * a + m4 * b + m5 * c,
    pz + m6 * a + m7 * b + m8 * c,
    px + m0 * d + m1 * e + m2 * f,
    py + m3 * d + m4 * e + m5 * f,
    pz + m6 * d + m7 * e + m8 * f,
    m0 * g + m1 * h + m2 * i,
    m3 * g + m4 * h + m5 * i,
    m6 * g + m7 * h + m8 * i,
    camera.name,
  );
}
