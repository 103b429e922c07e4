import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { resolveConfig, train } from '../../src/trainer/index.ts';
import { Evolution } from '../../src/trainer/evolution.ts';
import { metrics, setup } from './code-lock.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-evolution-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('Evolution', () => {
  const config = { enabled: true, levels: [0.25, 0.5, 1], window: 4, advanceAt: 0.5, earlier: 0 };

  it('a task moves to the next generation once the running success at its level passes advanceAt', () => {
    const e = new Evolution(config, 2);
    expect(e.draw(new Rng(1), 0, true)).toBe(0.25);
    e.observe(0, 0.25, [true, false, false]); // 3 of a window of 4: not yet
    expect(e.generations()).toEqual([0, 0]);
    e.observe(0, 0.5, [true, true, true, true]); // another level: does not count
    expect(e.generations()).toEqual([0, 0]);
    e.observe(0, 0.25, [true]); // 2 of 4
    expect(e.generations()).toEqual([1, 0]);
    expect(e.draw(new Rng(1), 0, true)).toBe(0.5);
    e.observe(0, 0.5, [true, true, true, true]);
    expect(e.draw(new Rng(1), 0, true)).toBeNull(); // level 1: the initial state
    expect(e.generations()).toEqual([2, 0]);
  });

  it('scene-level difficulty: a start is the easiest of sceneCandidates[generation] train starts', () => {
    const e = new Evolution({ ...config, sceneCandidates: [8, 2] }, 1);
    expect(e.candidates(0)).toBe(8);
    e.observe(0, 0.25, [true, true, true, true]);
    expect(e.candidates(0)).toBe(2);
    e.observe(0, 0.5, [true, true, true, true]);
    expect(e.candidates(0)).toBe(2); // the last entry holds
    expect(new Evolution({ ...config, enabled: false, sceneCandidates: [8] }, 1).candidates(0)).toBe(1);
  });

  it('off, or for a task without expert starts, every start is the initial state and nothing is drawn', () => {
    const rng = new Rng(5);
    const before = rng.uniform();
    const off = new Evolution({ ...config, enabled: false }, 1);
    const again = new Rng(5);
    expect(off.draw(again, 0, true)).toBeNull();
    expect(new Evolution(config, 1).draw(again, 0, false)).toBeNull();
    expect(again.uniform()).toBe(before);
  });

  it('its state round-trips and a bad state is refused naming the field', () => {
    const e = new Evolution(config, 2);
    e.observe(1, 0.25, [true, true]);
    const back = Evolution.fromState(JSON.parse(JSON.stringify(e.toState())));
    expect(back.toState()).toEqual(e.toState());
    expect(() => Evolution.fromState({ ...e.toState(), generation: [0, -1] })).toThrow(/generation/);
    expect(() => new Evolution({ levels: [0.5, 0.25] }, 1)).toThrow(/ascending/);
  });
});

describe('the loop with environment evolution (code lock, the expert enters the first digits)', () => {
  const cfg = resolveConfig('smoke', {
    mode: 'real',
    iterations: 8,
    checkpointEvery: 2,
    evolution: { enabled: true, levels: [0.25, 0.5, 1], window: 8, advanceAt: 0.25 },
  });

  it('a generation advances, and a run stopped and resumed gives the uninterrupted metrics', {
    timeout: 120_000,
  }, async () => {
    const whole = join(tmp, 'whole');
    await train(setup(), cfg, whole);
    const m = metrics(whole);
    expect(m[0]['evolution/level']).toBeLessThan(1); // groups start on the expert's states
    expect(m.at(-1)!['evolution/generation']).toBeGreaterThan(0);
    const cut = join(tmp, 'cut');
    let n = 0;
    await train(setup(), cfg, cut, { shouldStop: () => ++n >= 3 });
    await train(setup(), cfg, cut, { resume: true });
    const strip = (rows: Record<string, number>[]) =>
      rows.map((x) => Object.fromEntries(Object.entries(x).filter(([k]) => !k.startsWith('time/'))));
    expect(strip(metrics(cut))).toEqual(strip(m));
  });

  it('groups start on the easier train starts while scene candidates are on', { timeout: 60_000 }, async () => {
    const starts = async (sceneCandidates: number[]) => {
      const s = setup();
      const seen: number[] = [];
      const task = s.tasks[0];
      const makeReal = task.makeReal;
      task.difficulty = (seed) => seed % 2; // odd train starts are the hard ones
      task.makeReal = async (n) => {
        const env = await makeReal(n);
        const reset = env.reset.bind(env);
        env.reset = (o) => {
          const seeds = (o?.seed ?? []) as number[];
          seen.push(...seeds.filter((_, i) => o?.mask?.[i] ?? true));
          return reset(o);
        };
        return env;
      };
      const c = { ...cfg, evolution: { ...cfg.evolution, levels: [1], sceneCandidates }, iterations: 6 };
      await train(s, c, join(tmp, `scene${sceneCandidates.join('-')}`));
      return seen.filter((x) => x % 2 === 1).length / seen.length;
    };
    expect(await starts([8])).toBeLessThan(0.1);
    expect(await starts([])).toBeGreaterThan(0.2);
  });

  it('a task without expert starts trains from its initial states, as with evolution off', {
    timeout: 60_000,
  }, async () => {
    const bare = () => {
      const s = setup();
      delete s.tasks[0].expertStart;
      return s;
    };
    const on = join(tmp, 'bare-on');
    const off = join(tmp, 'bare-off');
    await train(bare(), { ...cfg, iterations: 3 }, on);
    await train(bare(), { ...cfg, iterations: 3, evolution: { ...cfg.evolution, enabled: false } }, off);
    const strip = (rows: Record<string, number>[]) =>
      rows.map((x) => Object.fromEntries(Object.entries(x).filter(([k]) => !k.startsWith('time/'))));
    expect(metrics(on).every((m) => m['evolution/level'] === 1)).toBe(true);
    expect(strip(metrics(on))).toEqual(strip(metrics(off)));
  });
});
