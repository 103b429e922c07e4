// The world model's success verdict against physics on the trainer's segments: branched from the real
// states of physics rollouts every `every` steps, stepped with the rollouts' own actions for `horizon`
// steps (or to the rollout's end), and compared with physics' success at the same step. Counts
// (TP/FP/FN/TN), precision and recall with Wilson intervals, and which part of the final stage the
// world model's state misses on each false negative.
import { wilson } from '../core/stats.ts';
import type { BatchAction } from '../env/types.ts';
import { collectEpisodes, type Policy } from '../rollout/collect.ts';
import type { Scene } from '../scene/schema.ts';
import { sampleTask } from '../task/sample.ts';
import { packState, stateSize, unpackState } from '../task/state.ts';
import { finalMisses } from './verdict-misses.ts';
import type { WorldModelEnv } from './env.ts';

/** A physics rollout: its actions (length x dims, step-major) and states ((length + 1) rows, each at least
 *  the flat state; extra columns are ignored). */
export interface VerdictRollout {
  seed: number;
  length: number;
  success: boolean;
  actions: Int32Array;
  states: Float32Array | Float64Array;
}

export interface SegmentVerdict {
  rollout: number;
  /** Rollout step the segment starts at, and its steps (horizon, or fewer at the rollout's end). */
  elapsed: number;
  steps: number;
  /** Physics succeeded at the segment's last step (success ends an episode, so only there). */
  env: boolean;
  /** The world model ended the segment in success (ensemble-mean state, as the trainer grades). */
  wm: boolean;
  /** Steps the world model ran (its success step when `wm`). */
  wmSteps: number;
  /** Highest member vote (share of members whose next state succeeds) over the segment's steps. */
  vote: number;
  /** The world model's state at its last step (flat). */
  wmFinal: Float64Array;
}

/** Every `every` steps of each rollout, a segment of min(horizon, steps left) steps. */
export function verdictSegments(rollouts: readonly VerdictRollout[], every: number, horizon: number) {
  if (!(every >= 1) || !(horizon >= 1))
    throw new RangeError(`verdict: every ${every} and horizon ${horizon} must be >= 1`);
  return rollouts.flatMap((r, k) =>
    Array.from({ length: Math.ceil(r.length / every) }, (_, j) => {
      const t = j * every;
      const steps = Math.min(horizon, r.length - t);
      return { rollout: k, elapsed: t, steps, env: r.success && t + steps === r.length };
    }),
  );
}

/** Grades the segments of `rollouts` in `wm` (an env of the rollouts' task). */
export async function gradeVerdicts(
  wm: WorldModelEnv,
  rollouts: readonly VerdictRollout[],
  o: { every: number; horizon: number },
): Promise<SegmentVerdict[]> {
  const segs = verdictSegments(rollouts, o.every, o.horizon);
  if (!segs.length) return [];
  const S = stateSize(wm.scene.objects.length);
  const dims = wm.spec.action.map((e) => e.name);
  const D = dims.length;
  const row = (r: VerdictRollout, t: number) => {
    const width = r.states.length / (r.length + 1);
    return Float64Array.from(r.states.subarray(t * width, t * width + S));
  };
  const replay: Policy = {
    act(_obs, ctx) {
      const pick = (j: number) =>
        Int32Array.from(ctx.keys, (key, i) => {
          if (key < 0) return 0;
          const s = segs[key];
          return rollouts[s.rollout].actions[(s.elapsed + Math.min(ctx.steps[i], s.steps - 1)) * D + j];
        });
      return { actions: Object.fromEntries(dims.map((d, j) => [d, pick(j)])) as BatchAction };
    },
  };
  const finals = new Array<Float64Array>(segs.length);
  const episodes = await collectEpisodes(wm, replay, {
    seeds: segs.map((s) => rollouts[s.rollout].seed),
    keys: segs.map((_, k) => k),
    horizons: segs.map((s) => s.steps),
    resetFrom: (slots, eps) =>
      wm.resetFrom(
        slots,
        eps.map((k) => ({
          seed: rollouts[segs[k].rollout].seed,
          elapsed: segs[k].elapsed,
          row: row(rollouts[segs[k].rollout], segs[k].elapsed),
        })),
      ),
    // keeps only each segment's latest state (float64), nothing per step
    recordState: (i, k) => {
      finals[k] = packState(wm.state(i), new Float64Array(S)) as Float64Array;
      return [];
    },
  });
  return segs.map((s, k) => ({
    ...s,
    wm: episodes[k].success,
    wmSteps: episodes[k].length,
    vote: Math.max(0, ...episodes[k].rewards),
    wmFinal: finals[k],
  }));
}

export interface VerdictCounts {
  segments: number;
  tp: number;
  fp: number;
  fn: number;
  tn: number;
  /** TP / (TP + FP) and TP / (TP + FN) with Wilson 95% intervals (rate 0, [0, 1] when undefined). */
  precision: { rate: number; low: number; high: number; n: number };
  recall: { rate: number; low: number; high: number; n: number };
}

export function verdictCounts(pairs: readonly { env: boolean; wm: boolean }[]): VerdictCounts {
  let tp = 0,
    fp = 0,
    fn = 0,
    tn = 0;
  for (const p of pairs) {
    if (p.wm && p.env) tp++;
    else if (p.wm) fp++;
    else if (p.env) fn++;
    else tn++;
  }
  return {
    segments: pairs.length,
    tp,
    fp,
    fn,
    tn,
    precision: { ...wilson(tp, tp + fp), n: tp + fp },
    recall: { ...wilson(tp, tp + fn), n: tp + fn },
  };
}

export interface FamilyVerdict extends VerdictCounts {
  family: string;
  rollouts: number;
  physics_successes: number;
  /** True positives whose world-model success came at physics' success step. */
  tp_same_step: number;
  /** The verdict taken over members instead of the mean state: success once any step's member vote
   *  reaches 1/2 (majority) or exceeds 0 (any member). */
  members: { majority: VerdictCounts; any: VerdictCounts };
  /** False negatives: how many miss each part of the final stage in the world model's last state, and
   *  how many miss that part alone. */
  fn_misses: Record<string, number>;
  fn_only: Record<string, number>;
  /** Medians over false negatives of the world model's last state: task object speed (m/s) and the
   *  height error against where the final stage wants it (m). */
  fn_median: { speed: number; z_error: number };
}

const median = (xs: number[]) => {
  if (!xs.length) return 0;
  const s = xs.slice().sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** The per-family summary of graded segments of one task's rollouts. */
export function familyVerdict(
  scene: Scene,
  taskId: string,
  rollouts: readonly VerdictRollout[],
  segs: readonly SegmentVerdict[],
): FamilyVerdict {
  const M = scene.objects.length;
  const misses: Record<string, number> = {},
    only: Record<string, number> = {};
  const speeds: number[] = [],
    zErr: number[] = [];
  let family = '';
  for (const s of segs.filter((x) => x.env && !x.wm)) {
    const task = sampleTask(scene, taskId, rollouts[s.rollout].seed);
    const m = finalMisses(scene, task, unpackState(s.wmFinal, M));
    const failed = Object.keys(m.holds).filter((k) => !m.holds[k]);
    for (const k of failed) misses[k] = (misses[k] ?? 0) + 1;
    if (failed.length === 1) only[failed[0]] = (only[failed[0]] ?? 0) + 1;
    speeds.push(m.speed);
    zErr.push(m.zError);
  }
  family = rollouts.length ? sampleTask(scene, taskId, rollouts[0].seed).family : taskId;
  return {
    family,
    rollouts: rollouts.length,
    physics_successes: rollouts.filter((r) => r.success).length,
    ...verdictCounts(segs),
    tp_same_step: segs.filter((s) => s.env && s.wm && s.wmSteps === s.steps).length,
    members: {
      majority: verdictCounts(segs.map((s) => ({ env: s.env, wm: s.vote >= 0.5 }))),
      any: verdictCounts(segs.map((s) => ({ env: s.env, wm: s.vote > 0 }))),
    },
    fn_misses: misses,
    fn_only: only,
    fn_median: { speed: median(speeds), z_error: median(zErr) },
  };
}
