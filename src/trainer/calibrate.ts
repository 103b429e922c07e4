import type { Debiaser } from './debias.ts';
import type { Denoiser } from './denoise.ts';

// Steps 3 and 4 of an iteration on its anchors graded by the world model, in this order: every
// (r_wm, r_env) pair goes into the debiaser first, so the map has seen this iteration's pairs; then the
// denoiser measures the world model's disagreement with physics on the calibrated residual
// f(r_wm) − r_env, not on the raw one (a distortion the map removes is not noise).

/** An anchor segment graded by the world model: both rewards, and the start step and horizon it was
 *  graded from (the members of a group that reached the same start step are one observation). */
export interface AnchorPair {
  rWm: number;
  rEnv: number;
  elapsed: number;
  horizon: number;
}

/** Feeds each group's debiaser (one per task, or one for all) every pair of the group, then the denoiser
 *  one observation per start step of each group (its members that reached it, at least 2) on f(r_wm)
 *  against r_env, f the group's debiaser's map when `debias` is on, the identity otherwise (the pairs
 *  are added either way). */
export function debiasThenDenoise(
  denoiser: Denoiser,
  groups: readonly { debiaser: Debiaser; pairs: readonly AnchorPair[] }[],
  debias: boolean,
): void {
  for (const { debiaser, pairs } of groups) for (const sg of pairs) debiaser.add(sg.rWm, sg.rEnv);
  for (const { debiaser, pairs: segs } of groups) {
    const f = (r: number) => (debias ? debiaser.map(r) : r);
    for (const t of new Set(segs.map((sg) => `${sg.elapsed}:${sg.horizon}`))) {
      const at = segs.filter((sg) => `${sg.elapsed}:${sg.horizon}` === t);
      if (at.length >= 2)
        denoiser.observe(
          at.map((sg) => f(sg.rWm)),
          at.map((sg) => sg.rEnv),
        );
    }
  }
}
