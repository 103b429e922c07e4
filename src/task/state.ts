import type { TabletopState } from './types.ts';

/** Flat layout of a TabletopState (recorded episodes, world-model inputs and targets):
 *  [tcp x y z, yaw, finger left, finger right, then per object: pos xyz, quat xyzw, linVel xyz]. */
export const STATE_HEAD = ['tcp_x', 'tcp_y', 'tcp_z', 'tcp_yaw', 'finger_left', 'finger_right'] as const;
export const OBJECT_FIELDS = ['x', 'y', 'z', 'qx', 'qy', 'qz', 'qw', 'vx', 'vy', 'vz'] as const;

export function stateSize(numObjects: number): number {
  return STATE_HEAD.length + OBJECT_FIELDS.length * numObjects;
}

/** Names of every entry of the flat state, e.g. "red_cube.qw". */
export function stateNames(objectNames: readonly string[]): string[] {
  return [...STATE_HEAD, ...objectNames.flatMap((o) => OBJECT_FIELDS.map((f) => `${o}.${f}`))];
}

export function packState(
  s: TabletopState,
  out: Float64Array | Float32Array = new Float64Array(stateSize(s.objects.length)),
  offset = 0,
): Float64Array | Float32Array {
  let k = offset;
  out[k++] = s.eePos[0];
  out[k++] = s.eePos[1];
  out[k++] = s.eePos[2];
  out[k++] = s.eeYaw;
  out[k++] = s.fingers[0];
  out[k++] = s.fingers[1];
  for (const o of s.objects) {
    out[k++] = o.pos[0];
    out[k++] = o.pos[1];
    out[k++] = o.pos[2];
    out[k++] = o.quat[0];
    out[k++] = o.quat[1];
    out[k++] = o.quat[2];
    out[k++] = o.quat[3];
    out[k++] = o.linVel[0];
    out[k++] = o.linVel[1];
    out[k++] = o.linVel[2];
  }
  return out;
}

/** unpackState into an existing state of the same object count (no allocation; hot loops). */
export function unpackStateInto(v: ArrayLike<number>, offset: number, out: TabletopState): TabletopState {
  let k = offset;
  out.eePos[0] = v[k++];
  out.eePos[1] = v[k++];
  out.eePos[2] = v[k++];
  out.eeYaw = v[k++];
  out.fingers[0] = v[k++];
  out.fingers[1] = v[k++];
  for (const o of out.objects) {
    o.pos[0] = v[k++];
    o.pos[1] = v[k++];
    o.pos[2] = v[k++];
    o.quat[0] = v[k++];
    o.quat[1] = v[k++];
    o.quat[2] = v[k++];
    o.quat[3] = v[k++];
    o.linVel[0] = v[k++];
    o.linVel[1] = v[k++];
    o.linVel[2] = v[k++];
  }
  return out;
}

export function unpackState(v: ArrayLike<number>, numObjects: number, offset = 0): TabletopState {
  const need = stateSize(numObjects);
  if (v.length - offset < need)
    throw new RangeError(`unpackState: need ${need} values for ${numObjects} objects, got ${v.length - offset}`);
  let k = offset;
  const eePos: [number, number, number] = [v[k++], v[k++], v[k++]];
  const eeYaw = v[k++];
  const fingers: [number, number] = [v[k++], v[k++]];
  const objects = Array.from({ length: numObjects }, () => ({
    pos: [v[k++], v[k++], v[k++]] as [number, number, number],
    quat: [v[k++], v[k++], v[k++], v[k++]] as [number, number, number, number],
    linVel: [v[k++], v[k++], v[k++]] as [number, number, number],
  }));
  return { eePos, eeYaw, fingers, objects };
}
