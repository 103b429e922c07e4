import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { Frontier } from '../../src/trainer/frontier.ts';
import { resolveConfig, train } from '../../src/trainer/index.ts';
import { metrics, setup } from './code-lock.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-frontier-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const strip = (rows: Record<string, number>[]) =>
  rows.map((x) => Object.fromEntries(Object.entries(x).filter(([k]) => !k.startsWith('time/'))));

describe('Frontier', () => {
  const config = {
    enabled: true,
    start: 0.25,
    step: 0.25,
    band: [0.25, 0.75] as [number, number],
    window: 4,
    later: 0,
    initial: 0,
  };

  it('moves back once the running success at the frontier reaches the band top, forward below its bottom', () => {
    const f = new Frontier(config, 2);
    expect(f.levels()).toEqual([0.25, 0.25]);
    f.observe(0, 0.25, [true, true, false]); // 3 of a window of 4: not yet
    expect(f.levels()).toEqual([0.25, 0.25]);
    f.observe(0, 0.5, [true, true, true, true]); // another level: does not count
    expect(f.levels()).toEqual([0.25, 0.25]);
    f.observe(0, 0.25, [true]); // 3 of 4 = 0.75: back, to more of the trajectory left
    expect(f.levels()).toEqual([0.5, 0.25]);
    f.observe(0, 0.5, [true, false, true, false]); // 0.5, inside the band: stays
    expect(f.levels()).toEqual([0.5, 0.25]);
    f.observe(0, 0.5, [false, false]); // the window's last 4: 1 of 4 = 0.25, still inside
    expect(f.levels()).toEqual([0.5, 0.25]);
    f.observe(0, 0.5, [false]); // 0 of 4: forward again
    expect(f.levels()).toEqual([0.25, 0.25]);
  });

  it('stops at the initial state and at one step of the trajectory left', () => {
    const f = new Frontier({ ...config, start: 0.75 }, 1);
    f.observe(0, 0.75, [true, true, true, true]);
    expect(f.levels()).toEqual([1]);
    expect(f.draw(new Rng(1), 0, true)).toBeNull(); // level 1: the initial state
    f.observe(0, null, [true, true, true, true]);
    expect(f.levels()).toEqual([1]);
    const g = new Frontier(config, 1);
    g.observe(0, 0.25, [false, false, false, false]);
    expect(g.levels()).toEqual([0.25]);
  });

  it('draws the frontier, a share uniformly later and a share at the initial state', () => {
    const f = new Frontier({ ...config, start: 0.75, later: 0.3, initial: 0.2 }, 1);
    const rng = new Rng(3);
    const draws = Array.from({ length: 4000 }, () => f.draw(rng, 0, true));
    const share = (p: (x: number | null) => boolean) => draws.filter(p).length / draws.length;
    expect(share((x) => x === null)).toBeCloseTo(0.2, 1);
    expect(share((x) => x === 0.25)).toBeCloseTo(0.15, 1);
    expect(share((x) => x === 0.5)).toBeCloseTo(0.15, 1);
    expect(share((x) => x === 0.75)).toBeCloseTo(0.5, 1);
    const again = new Rng(3);
    expect(Array.from({ length: 4000 }, () => f.draw(again, 0, true))).toEqual(draws);
  });

  it('off, or for a task without expert starts, every start is the initial state and nothing is drawn', () => {
    const rng = new Rng(5);
    const before = rng.uniform();
    const again = new Rng(5);
    expect(new Frontier({ ...config, enabled: false }, 1).draw(again, 0, true)).toBeNull();
    expect(new Frontier(config, 1).draw(again, 0, false)).toBeNull();
    expect(again.uniform()).toBe(before);
  });

  it('its state round-trips mid-window and goes on as the original; bad input is refused naming the field', () => {
    const f = new Frontier(config, 2);
    f.observe(1, 0.25, [true, true]);
    const back = Frontier.fromState(JSON.parse(JSON.stringify(f.toState())));
    expect(back.toState()).toEqual(f.toState());
    for (const x of [f, back]) x.observe(1, 0.25, [true, false]);
    expect(back.levels()).toEqual([0.25, 0.5]);
    expect(back.toState()).toEqual(f.toState());
    expect(() => Frontier.fromState({ ...f.toState(), position: [1, 0] })).toThrow(/position/);
    expect(() => new Frontier({ band: [0.6, 0.2] }, 1)).toThrow(/band/);
    expect(() => new Frontier({ later: 0.8, initial: 0.5 }, 1)).toThrow(/initial/);
  });
});

describe('the loop with frontier starts (code lock, the expert enters the first digits)', () => {
  const cfg = resolveConfig('smoke', {
    mode: 'real',
    iterations: 8,
    checkpointEvery: 2,
    evolution: { enabled: false },
    frontier: { enabled: true, start: 0.25, step: 0.25, window: 8, band: [0.1, 0.2], initial: 0 },
  });

  it('the frontier moves back and forward, and a run stopped and resumed gives the uninterrupted metrics', {
    timeout: 120_000,
  }, async () => {
    const whole = join(tmp, 'whole');
    await train(setup(), cfg, whole);
    const m = metrics(whole);
    const levels = m.map((x) => x['frontier/level']);
    // back (more left to do) while its success is at or above the band, forward once it falls below
    expect(levels.indexOf(0.5)).toBeGreaterThan(0);
    expect(levels.slice(levels.indexOf(0.5))).toContain(0.25);
    const cut = join(tmp, 'cut');
    let n = 0;
    await train(setup(), cfg, cut, { shouldStop: () => ++n >= 3 }); // after iteration 3: no checkpoint due
    await train(setup(), cfg, cut, { resume: true });
    expect(strip(metrics(cut))).toEqual(strip(m));
  });

  it("world-model groups started at the frontier move it only with worldModel on; anchors' verdicts always do", {
    timeout: 120_000,
  }, async () => {
    const run = async (name: string, worldModel: boolean) => {
      const frontier = { ...cfg.frontier, band: [0.05, 0.1] as [number, number], worldModel };
      // branchShare 0: world-model groups start where anchors do, not from anchors' states
      const c = { ...cfg, mode: 'wmrl' as const, iterations: 4, groupsPerIteration: 4, branchShare: 0, frontier };
      await train(setup(), c, join(tmp, name));
      return metrics(join(tmp, name));
    };
    const anchorsOnly = await run('anchors-only', false);
    const withModel = await run('with-model', true);
    expect(withModel[0]['groups/wm']).toBe(3);
    // one anchor group of 4 rollouts leaves the window of 8 half full; with the 3 world-model groups it fills
    // in the first iteration, and 1 success in 8 moves the frontier back
    expect(anchorsOnly[0]['frontier/level']).toBe(0.25);
    expect(anchorsOnly.map((m) => m['frontier/level'])).toContain(0.5); // once the anchors fill it
    expect(withModel[0]['frontier/level']).toBe(0.5);
  });

  it('frontier and environment evolution together are refused naming the field', () => {
    expect(() => resolveConfig('smoke', { evolution: { enabled: true }, frontier: { enabled: true } })).toThrow(
      /frontier\.enabled/,
    );
  });
});
