import type { Quat, Scene, SceneObject, Vec3 } from '../scene/schema.ts';

// Geometry facts the verifiers and the sampler share. Quaternions are [x, y, z, w]; the table top
// is z = 0; zones are flat rectangles (centre, halfSize) on it; bins have an inner footprint
// (centre, halfSize), walls `wallThickness` thick outside it and `height` tall (see bodies.ts).

/** Columns of the rotation matrix of a (not necessarily normalised) quaternion: the body's
 *  local x, y and z axes in the world frame. A zero quaternion counts as the identity. */
export function quatAxes(q: Quat): [Vec3, Vec3, Vec3] {
  const n = Math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  const [x, y, z, w] = n > 1e-12 ? [q[0] / n, q[1] / n, q[2] / n, q[3] / n] : [0, 0, 0, 1];
  return [
    [1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)],
    [2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)],
    [2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)],
  ];
}

/** Half extent of the object along the unit world direction `dir` (support function). Allocation-free
 *  (verifiers and world-model steps call it per object per step): each body axis is quatAxes'
 *  column dotted with `dir`, same arithmetic in the same order. */
export function supportAlong(obj: SceneObject, quat: Quat, dir: Vec3): number {
  const n = Math.sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]);
  const ok = n > 1e-12;
  const x = ok ? quat[0] / n : 0,
    y = ok ? quat[1] / n : 0,
    z = ok ? quat[2] / n : 0,
    w = ok ? quat[3] / n : 1;
  const c2 = Math.abs(2 * (x * z + w * y) * dir[0] + 2 * (y * z - w * x) * dir[1] + (1 - 2 * (x * x + y * y)) * dir[2]);
  const h = obj.halfExtents;
  if (obj.shape !== 'box') return h[0] * Math.sqrt(Math.max(0, 1 - c2 * c2)) + h[2] * c2;
  const c0 = Math.abs((1 - 2 * (y * y + z * z)) * dir[0] + 2 * (x * y + w * z) * dir[1] + 2 * (x * z - w * y) * dir[2]);
  const c1 = Math.abs(2 * (x * y - w * z) * dir[0] + (1 - 2 * (x * x + z * z)) * dir[1] + 2 * (y * z + w * x) * dir[2]);
  return c0 * h[0] + c1 * h[1] + c2 * h[2];
}

const UP: Vec3 = [0, 0, 1];

/** Height of the object's centre above a flat surface it rests on in this orientation. */
export function restHeight(obj: SceneObject, quat: Quat): number {
  return supportAlong(obj, quat, UP);
}

/** Cosine of the angle between the vertical and the nearest axis the object may stand on
 *  (any face axis of a box, only the axis of a cylinder). 1 = perfectly flat. */
export function uprightness(obj: SceneObject, quat: Quat): number {
  const axes = quatAxes(quat);
  if (obj.shape === 'cylinder') return Math.abs(axes[2][2]);
  return Math.max(Math.abs(axes[0][2]), Math.abs(axes[1][2]), Math.abs(axes[2][2]));
}

/** Radius of the circle that holds the object's footprint whatever its yaw. */
export function footprintRadius(obj: SceneObject): number {
  const [hx, hy] = obj.halfExtents;
  return obj.shape === 'box' ? Math.sqrt(hx * hx + hy * hy) : hx;
}

/** Distance in the xy plane from a point to an axis-aligned rectangle (0 inside). */
export function distToRect(x: number, y: number, centre: readonly number[], half: readonly number[]): number {
  const dx = Math.max(0, Math.abs(x - centre[0]) - half[0]);
  const dy = Math.max(0, Math.abs(y - centre[1]) - half[1]);
  return Math.sqrt(dx * dx + dy * dy);
}

/** Outer half size of a bin (inner footprint plus walls). */
export function binOuterHalf(bin: Scene['bins'][number]): [number, number] {
  return [bin.halfSize[0] + bin.wallThickness, bin.halfSize[1] + bin.wallThickness];
}

export function distXY(a: readonly number[], b: readonly number[]): number {
  const dx = a[0] - b[0];
  const dy = a[1] - b[1];
  return Math.sqrt(dx * dx + dy * dy);
}

export function dist3(a: Vec3, b: Vec3): number {
  const dx = a[0] - b[0];
  const dy = a[1] - b[1];
  const dz = a[2] - b[2];
  return Math.sqrt(dx * dx + dy * dy + dz * dz);
}
