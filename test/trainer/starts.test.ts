import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { StartSelector, type BranchPoint } from '../../src/trainer/index.ts';

const RANGE = 1_000_000;

describe('start selection', () => {
  it('uniform draws exactly what rng.int(range) draws (runs without selection are unchanged)', () => {
    const s = new StartSelector({}, 1);
    const a = new Rng(3);
    const b = new Rng(3);
    for (let k = 0; k < 20; k++) expect(s.drawStart(a, 0, RANGE)).toBe(b.int(RANGE));
  });

  it('uncertain: starts seen all-success or all-failure are drawn less than uncertain ones; the state round-trips', () => {
    const s = new StartSelector({ mode: 'uncertain', pool: 4, floor: 0 }, 1);
    const rng = new Rng(1);
    const seen = new Map<number, number>();
    for (let k = 0; k < 400; k++) {
      const x = s.drawStart(rng, 0, RANGE);
      seen.set(x, (seen.get(x) ?? 0) + 1);
    }
    const [p0, p1, p2] = [...seen.keys()].sort((a, b) => a - b);
    expect(seen.size).toBe(4);
    s.observe(0, p0, RANGE, 80, 80); // settled: solved
    s.observe(0, p1, RANGE, 0, 80); // settled: hopeless
    s.observe(0, p2, RANGE, 40, 80); // uncertain
    const after = new Map<number, number>();
    const copy = StartSelector.fromState(JSON.parse(JSON.stringify(s.toState())));
    const r1 = new Rng(2);
    const r2 = new Rng(2);
    for (let k = 0; k < 2000; k++) {
      const x = s.drawStart(r1, 0, RANGE);
      expect(copy.drawStart(r2, 0, RANGE)).toBe(x);
      after.set(x, (after.get(x) ?? 0) + 1);
    }
    expect(after.get(p2)!).toBeGreaterThan(10 * (after.get(p0) ?? 0));
    expect(after.get(p2)!).toBeGreaterThan(10 * (after.get(p1) ?? 0));
  });

  it("uncertain: branch points where the anchor's Φ moved are preferred", () => {
    const s = new StartSelector({ mode: 'uncertain', still: 0 }, 1);
    const pool: BranchPoint[] = Array.from({ length: 10 }, (_, k) => ({
      task: 0,
      seed: 1,
      elapsed: k,
      row: [k],
      moved: k === 7,
    }));
    const rng = new Rng(4);
    for (let k = 0; k < 50; k++) expect(s.drawPoint(rng, pool).elapsed).toBe(7);
  });
});
