// Shared fixtures for the physics tests: the shipped scene and a state hash.
import { Hasher } from '../../src/core/hash.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';
import type { TabletopState } from '../../src/task/types.ts';

export const scene = loadSceneFile(DEFAULT_SCENE_PATH);

/** Hash of every float of a state (TCP, yaw, fingers, object poses and velocities), bit for bit. */
export function stateHash(states: TabletopState[]): string {
  const h = new Hasher();
  for (const s of states) {
    const v = [...s.eePos, s.eeYaw, ...s.fingers, ...s.objects.flatMap((o) => [...o.pos, ...o.quat, ...o.linVel])];
    h.update(Float64Array.from(v));
  }
  return h.digest();
}
