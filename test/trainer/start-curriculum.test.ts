import { describe, expect, it } from 'vitest';
import { Evolution } from '../../src/trainer/evolution.ts';
import { Frontier } from '../../src/trainer/frontier.ts';
import { startCurriculum } from '../../src/trainer/group-start.ts';
import type { Run } from '../../src/trainer/run.ts';

const evolution = () => new Evolution({ enabled: true, levels: [0.25, 0.5, 1], window: 4, earlier: 0 }, 2);
const frontier = () =>
  new Frontier({ enabled: true, start: 0.25, step: 0.25, band: [0.25, 0.75], window: 4, later: 0, initial: 0 }, 2);
const roundTrip = (c: Evolution | Frontier) => {
  const state = JSON.parse(JSON.stringify(c.toState()));
  return c instanceof Evolution ? Evolution.fromState(state) : Frontier.fromState(state);
};

describe('StartCurriculum', () => {
  it('its state is {config, <position key>, recent}, in this order, as checkpoints have always held it', () => {
    expect(JSON.stringify(evolution().toState())).toBe(
      '{"config":{"enabled":true,"levels":[0.25,0.5,1],"advanceAt":0.5,"window":4,"sceneCandidates":[],' +
        '"earlier":0},"generation":[0,0],"recent":[[],[]]}',
    );
    expect(JSON.stringify(frontier().toState())).toBe(
      '{"config":{"enabled":true,"start":0.25,"step":0.25,"band":[0.25,0.75],"window":4,"later":0,"initial":0,' +
        '"worldModel":false},"position":[1,1],"recent":[[],[]]}',
    );
  });

  it('a window moves the position only once full, then starts anew; mid-window states round-trip', () => {
    for (const c of [evolution(), frontier()]) {
      c.observe(0, 0.25, [true, true, true]);
      const back = roundTrip(c);
      expect(back).toBeInstanceOf(c.constructor);
      expect(back.toState()).toEqual(c.toState());
      for (const x of [c, back]) {
        expect(x.levels()).toEqual([0.25, 0.25]);
        expect(x.toState().recent).toEqual([[1, 1, 1], []]);
        x.observe(0, 0.25, [true]);
        expect(x.levels()).toEqual([0.5, 0.25]);
        expect(x.toState().recent).toEqual([[], []]);
      }
      expect(back.toState()).toEqual(c.toState());
    }
  });

  it("only groups at the task's level count, and evolution's last generation keeps no outcomes", () => {
    const e = evolution();
    const f = frontier();
    for (const c of [e, f]) c.observe(0, 0.5, [true, true, true, true]);
    expect([e.levels(), f.levels()]).toEqual([
      [0.25, 0.25],
      [0.25, 0.25],
    ]);
    e.observe(1, 0.25, [true, true, true, true]);
    e.observe(1, 0.5, [true, true, true, true]);
    e.observe(1, null, [true, false]);
    expect(e.generations()).toEqual([0, 2]);
    expect(e.toState().recent).toEqual([[], []]);
    f.observe(1, 0.25, [false, false, false, false]); // the frontier cannot move below its first step
    expect(f.toState()).toMatchObject({ position: [1, 1], recent: [[], [0, 0, 0, 0]] });
  });

  it('a state of the other curriculum, or with a bad field, is refused naming the field', () => {
    expect(() => Evolution.fromState(frontier().toState())).toThrow(/evolution state: \$\.generation/);
    expect(() => Frontier.fromState(evolution().toState())).toThrow(/frontier state: \$\.position/);
    const recent = { ...frontier().toState(), recent: [[1, 2], []] };
    expect(() => Frontier.fromState(recent)).toThrow(/\$\.recent\[0\]\[1\]/);
    const window = { ...evolution().toState(), config: { window: 0 } };
    expect(() => Evolution.fromState(window)).toThrow(/\$\.config\.window/);
  });

  it('the frontier places groups when on, environment evolution otherwise', () => {
    const state = (on: boolean) =>
      ({ evolution: evolution(), frontier: new Frontier({ enabled: on }, 2) }) as unknown as Run['state'];
    const on = state(true);
    const off = state(false);
    expect(startCurriculum(on)).toBe(on.frontier);
    expect(startCurriculum(off)).toBe(off.evolution);
  });
});
