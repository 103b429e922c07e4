import { describe, expect, it } from 'vitest';
import { packState, stateNames, stateSize, unpackState, unpackStateInto } from '../../src/task/state.ts';
import type { TabletopState } from '../../src/task/types.ts';

describe('flat state layout', () => {
  const s: TabletopState = {
    eePos: [0.1, -0.2, 0.15],
    eeYaw: 0.3,
    fingers: [0.01, 0.02],
    objects: [
      { pos: [1, 2, 3], quat: [0, 0, 0.6, 0.8], linVel: [0.5, 0, -0.5] },
      { pos: [4, 5, 6], quat: [0, 0, 0, 1], linVel: [0, 0, 0] },
    ],
  };
  it('round-trips exactly and names every entry', () => {
    const v = packState(s);
    expect(v.length).toBe(stateSize(2));
    expect(unpackState(v, 2)).toEqual(s);
    const names = stateNames(['red_cube', 'blue_cube']);
    expect(names.length).toBe(v.length);
    expect(v[names.indexOf('red_cube.qw')]).toBe(0.8);
    expect(v[names.indexOf('blue_cube.z')]).toBe(6);
  });
  it('writes at an offset and rejects short input', () => {
    const buf = new Float64Array(3 + stateSize(2));
    packState(s, buf, 3);
    expect(unpackState(buf, 2, 3)).toEqual(s);
    expect(() => unpackState(new Float64Array(10), 2)).toThrow(/need 26 values for 2 objects, got 10/);
  });
  it('unpacks in place into an existing state (same values, same objects)', () => {
    const buf = new Float64Array(5 + stateSize(2));
    packState(s, buf, 5);
    const into = unpackState(new Float64Array(stateSize(2)), 2);
    const first = into.objects[1];
    expect(unpackStateInto(buf, 5, into)).toBe(into);
    expect(into).toEqual(s);
    expect(into.objects[1]).toBe(first);
  });
});
