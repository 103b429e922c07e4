import { entrySize, type EnvSpec } from '../core/spec.ts';
import type { BatchAction } from './types.ts';

/** Throws a RangeError naming the bad entry when `action` does not match the spec's action entries. */
export function assertAction(spec: EnvSpec, numEnvs: number, action: BatchAction): void {
  for (const entry of spec.action) {
    const v = action[entry.name];
    const at = `${spec.id} action.${entry.name}`;
    if (v === undefined)
      throw new RangeError(`${at} is missing (expected entries: ${spec.action.map((e) => e.name).join(', ')})`);
    const size = numEnvs * entrySize(entry);
    if (v.length !== size) throw new RangeError(`${at} has length ${v.length}, expected ${size}`);
    if (entry.kind === 'discrete') {
      if (!(v instanceof Int32Array)) throw new RangeError(`${at} must be an Int32Array of bin indices`);
      for (let i = 0; i < v.length; i++)
        if (v[i] < 0 || v[i] >= entry.n) throw new RangeError(`${at}[${i}] = ${v[i]} is outside [0, ${entry.n})`);
    } else if (!(v instanceof Float32Array)) throw new RangeError(`${at} must be a Float32Array`);
  }
}
