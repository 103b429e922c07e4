import { describe, expect, it } from 'vitest';
import { packState, stateSize, unpackState } from '../../src/task/state.ts';
import { applyDelta, limitsFromScene, stateLayout } from '../../src/worldmodel/index.ts';
import { scene } from './helpers.ts';

const S = stateSize(scene.objects.length);
const layout = stateLayout(scene.objects);
const limits = limitsFromScene(scene);
const period = scene.control.timestep * scene.control.substeps;

/** Cube 0 resting on the table at (0.1, 0.1), cube 1 falling `above` m over its top at (x, 0.1), the
 *  other two far away; the tool high above. */
function stateWith(x: number, above: number) {
  const s = unpackState(new Float64Array(S), scene.objects.length);
  s.eePos = [-0.2, -0.2, 0.3];
  s.fingers = [0.04, 0.04];
  const spots: [number, number, number][] = [
    [0.1, 0.1, 0.02],
    [x, 0.1, 0.06 + above],
    [-0.2, 0.15, 0.02],
    [0.2, -0.15, 0.02],
  ];
  s.objects.forEach((o, i) => {
    o.pos = spots[i];
    o.quat = [0, 0, 0, 1];
  });
  s.objects[1].linVel = [0, 0, -0.2]; // falling: not held still by the rest gate
  return packState(s) as Float64Array;
}

/** The next state when cube 1 falls by `fall` m over the step (the net's Δ), everything else still. */
function step(state: Float64Array, fall: number) {
  const delta = new Float64Array(S);
  delta[6 + 10 + 2] = -fall;
  const out = new Float64Array(S);
  applyDelta(layout, limits, state, 0, delta, 0, out, 0);
  return unpackState(out, scene.objects.length).objects[1];
}

describe('applyDelta: support snap', () => {
  it('a cube predicted to sink into the cube below lands on it, with no downward velocity', () => {
    const cube = step(stateWith(0.1, 0.005), 0.015); // predicted 10 mm into the cube below
    expect(cube.pos[2]).toBeCloseTo(0.06, 12);
    expect(cube.linVel[2]).toBe(0);
    // just above it (within supportTol) it lands too
    expect(step(stateWith(0.1, 0.01), 0.008).pos[2]).toBeCloseTo(0.06, 12);
  });

  it('leaves a cube falling freely above the support, or beside it, to the net', () => {
    const high = step(stateWith(0.1, 0.03), 0.01);
    expect(high.pos[2]).toBeCloseTo(0.08, 12);
    expect(high.linVel[2]).toBeCloseTo(-0.01 / period, 9);
    const beside = step(stateWith(0.1 + 0.025, 0.005), 0.015); // centre off the top face
    expect(beside.pos[2]).toBeCloseTo(0.05, 12);
  });

  it('without supportTol, the predicted state is left as it was', () => {
    const out = new Float64Array(S);
    const delta = new Float64Array(S);
    delta[6 + 10 + 2] = -0.015;
    applyDelta(layout, { ...limits, supportTol: undefined }, stateWith(0.1, 0.005), 0, delta, 0, out, 0);
    expect(out[6 + 10 + 2]).toBeCloseTo(0.05, 12);
    expect(out[6 + 10 + 9]).toBeCloseTo(-0.015 / period, 9);
  });
});
