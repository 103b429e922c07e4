import { describe, expect, it } from 'vitest';
import { type AnchorPair, debiasThenDenoise } from '../../src/trainer/calibrate.ts';
import { Debiaser } from '../../src/trainer/debias.ts';
import { Denoiser, residualScale } from '../../src/trainer/denoise.ts';

// The loop's steps 3 and 4 (src/trainer/loop.ts calls debiasThenDenoise): the anchor pairs go into the
// debiaser first, then the denoiser measures disagreement on the calibrated residual f(r_wm) − r_env.
// The world model here is physics under a monotone distortion, r_wm = 0.3 + 0.5·r_env: once the map
// has this iteration's pairs it undoes the distortion exactly (each r_wm falls in a bin of its own),
// so the calibrated residual is 0; on raw rewards s² = 0.5² = 0.25.

const ENV = [0, 0.25, 0.5, 0.75, 1, 0, 1, 0.5];
const wm = (e: number) => 0.3 + 0.5 * e;
/** One anchor group: every member graded from the episode start (elapsed 0, whole episode). */
const group: AnchorPair[] = ENV.map((e) => ({ rWm: wm(e), rEnv: e, elapsed: 0, horizon: Infinity }));

/** A debiaser whose first fit comes with the 8th pair: this iteration's pairs are the ones it fits on. */
const fresh = () => new Debiaser({ warmup: ENV.length, refitEvery: 1 });

describe('debias, then denoise on the calibrated residual', () => {
  it('the denoiser observes f(r_wm) with f fitted on this iteration’s pairs, not raw r_wm', () => {
    const debiaser = fresh();
    const denoiser = new Denoiser();
    debiasThenDenoise(denoiser, [{ debiaser, pairs: group }], true);
    expect(debiaser.report().pairs).toBe(ENV.length);
    expect(debiaser.report().refits).toBe(1);
    for (const p of group) expect(debiaser.map(p.rWm)).toBeCloseTo(p.rEnv, 12);
    // The first observation sets η² to its s²: the calibrated one, 0.
    const { eta2, groupsSeen } = denoiser.report();
    expect(groupsSeen).toBe(1);
    expect(eta2).toBeCloseTo(0, 12);
    // What the swapped order (observe, then add) would have measured: the raw residual.
    expect(
      residualScale(
        group.map((p) => p.rWm),
        ENV,
      ),
    ).toBeCloseTo(0.25, 12);
  });

  it('equals adding every pair by hand and then observing the mapped rewards', () => {
    const ref = fresh();
    for (const p of group) ref.add(p.rWm, p.rEnv);
    const expected = new Denoiser();
    expected.observe(
      group.map((p) => ref.map(p.rWm)),
      ENV,
    );

    const denoiser = new Denoiser();
    debiasThenDenoise(denoiser, [{ debiaser: fresh(), pairs: group }], true);
    expect(denoiser.toState()).toEqual(expected.toState());
  });

  it('without debiasing it still feeds the debiaser, and the denoiser sees the raw residual', () => {
    const debiaser = fresh();
    const denoiser = new Denoiser();
    debiasThenDenoise(denoiser, [{ debiaser, pairs: group }], false);
    expect(debiaser.report().pairs).toBe(ENV.length);
    expect(denoiser.report().eta2).toBeCloseTo(0.25, 12);
  });

  it('one observation per start step of a group, of the members that reached it (at least 2)', () => {
    const later: AnchorPair[] = [
      { rWm: wm(0), rEnv: 0, elapsed: 5, horizon: 10 },
      { rWm: wm(1), rEnv: 1, elapsed: 5, horizon: 10 },
      { rWm: wm(1), rEnv: 1, elapsed: 15, horizon: 10 }, // alone at its start step: not observed
    ];
    const denoiser = new Denoiser();
    const debiaser = fresh();
    debiasThenDenoise(
      denoiser,
      [
        { debiaser, pairs: group },
        { debiaser, pairs: later },
      ],
      true,
    );
    expect(denoiser.report().groupsSeen).toBe(2);
  });

  it("each group goes to its own debiaser (one per task): a task's map is fitted on its anchors only", () => {
    const [a, b] = [fresh(), fresh()];
    const other = ENV.map((e) => ({ rWm: 1 - 0.5 * e, rEnv: e, elapsed: 0, horizon: Infinity }));
    debiasThenDenoise(
      new Denoiser(),
      [
        { debiaser: a, pairs: group },
        { debiaser: b, pairs: other },
      ],
      true,
    );
    expect([a.report().pairs, b.report().pairs]).toEqual([ENV.length, ENV.length]);
    for (const p of group) expect(a.map(p.rWm)).toBeCloseTo(p.rEnv, 12);
    // b's world model ranks the other way round: PAV pools every bin, f is the mean of r_env
    for (const r of [0.5, 0.75, 1]) expect(b.map(r)).toBeCloseTo(0.5, 12);
  });
});
