// Rollout groups as self-contained jobs: (policy, env, start, rollout keys) in, trajectories out; every
// random draw comes from (run seed, rollout key, step), so a job's result never depends on the process,
// the batch it shares or its slot. Also: the reservoir of steps that enter the loss, branching from
// real states, the world model's grading of physics rollouts on segments, and the reference log-probs.
import { DRAW, drawRng } from '../core/rng.ts';
import { type BatchAction, type BatchObs, canBranch, type Env, type EpisodeStart } from '../env/types.ts';
import type { PolicySampler } from '../policy/sampler.ts';
import { samplerPolicy, temperedLogp } from '../policy/sampler.ts';
import { collectEpisodes, type CollectOptions, type Policy } from '../rollout/index.ts';
import { obsRow, stackObs } from './policy-trainer.ts';

/** A real state an anchor rollout visited: where world-model groups branch. */
export interface BranchPoint {
  /** Index of the task in the setup. */
  task: number;
  /** Env seed of the episode (its task instance). */
  seed: number;
  /** Steps the episode had taken when it was in this state. */
  elapsed: number;
  /** The state as the task's `record` wrote it. */
  row: number[];
  /** Whether the anchor's Φ changed over the next `horizon` steps from here (start selection). */
  moved?: boolean;
  /** The engine's exact copy of the state (a physics start; never kept in the pool). */
  exact?: Uint8Array;
  /** real-branch: how the anchor rollout got here, so that physics can replay it to the exact state. */
  origin?: BranchOrigin;
}

/** An anchor rollout's start (its exact copy where it did not start from an initial state) and its
 *  actions (step-major), shared by the branch points it visited. */
export interface BranchOrigin {
  elapsed: number;
  row: number[];
  exact?: Uint8Array;
  actions: Int32Array;
}

/** What a task offers so that world-model rollouts can start from real states (its engines capture
 *  and start from rows through the Env contract's Branchable capability). */
export interface Branching {
  /** The score of a captured row in the episode of `seed`, as info.progress reports it (the reward). */
  progress(seed: number, row: ArrayLike<number>): number;
}

/** The env's capture() row of `slot` (anchors record it after reset and every step). */
export function recordRow(env: Env): (slot: number) => ArrayLike<number> {
  if (!canBranch(env)) throw new TypeError(`${env.spec.id}: branching needs an env with capture() and resetFrom()`);
  return (slot) => env.capture(slot).row;
}

/** Whether a group's rollouts record their states: physics always (branch points, grading, the refresh),
 *  a world model when the request asks (the repeat penalty); only where the task can branch. */
export const recordsStates = (physics: boolean, asked: boolean | undefined, task: { branching?: Branching }) =>
  (physics || !!asked) && !!task.branching;

/** resetFrom of a branchable env, as collectEpisodes calls it. */
function branchFrom(env: Env, start: (episode: number) => EpisodeStart): CollectOptions['resetFrom'] {
  if (!canBranch(env)) throw new TypeError(`${env.spec.id}: branching needs an env with capture() and resetFrom()`);
  return (slots, episodes) => env.resetFrom(slots, episodes.map(start));
}

/** One group of G rollouts from one start. */
export interface GroupJob {
  kind: 'anchor' | 'model';
  task: number;
  /** The env seed of the start (an initial state of the train split) and its index among train starts. */
  start: number;
  startIndex?: number;
  /** One key per rollout: its random draws and its identity. */
  keys: number[];
  /** Model groups: start from this real state instead of the initial state, for `horizon` steps. */
  branch?: BranchPoint;
  horizon?: number;
  /** Environment evolution: the share of the expert's trajectory left at the start (absent: all of it). */
  level?: number;
}

/** One step that enters the loss: the observation as a batch of one, the tokens, the sampler's joint log-prob. */
export interface StepSample {
  obs: BatchObs;
  tokens: Record<string, number>;
  behaviourLogp: number;
}

export interface Rollout {
  key: number;
  seed: number;
  /** Trajectory reward: the episode's score (info.progress) at the rollout's last step (1 on success). */
  reward: number;
  /** Learned engines: member variance of that reward. */
  rewardVar: number;
  success: boolean;
  length: number;
  /** Steps the episode had taken at the rollout's first state (0 unless it started from a branch). */
  start: number;
  /** Executed tokens, length x dims, step-major. */
  actions: Int32Array;
  /** Recorded states ((length + 1) rows) when the job asked for them. */
  states?: Float32Array;
  samples: StepSample[];
}

/** The sampler acting at `temperature`, keeping a uniform reservoir of `k` steps per rollout key. The
 *  stored log-probs are those of the tempered policy that drew the tokens, as the PPO graph at the same
 *  temperature computes them, so a row's ratio starts at 1. */
function recordingPolicy(
  sampler: PolicySampler,
  o: RunGroupsOptions,
): Policy & { reservoirs: Map<number, StepSample[]> } {
  const { seed, samplesPerRollout: k, clock } = o;
  const inner = samplerPolicy(sampler, { seed, temperature: o.temperature ?? 1 });
  const dims = sampler.config.actions.map((a) => a.name);
  const reservoirs = new Map<number, StepSample[]>();
  return {
    reservoirs,
    async act(obs, ctx) {
      const t0 = performance.now();
      const step = await inner.act(obs, ctx);
      if (clock) clock.policy += (performance.now() - t0) / 1000;
      const n = ctx.keys.length;
      for (let i = 0; i < n; i++) {
        const key = ctx.keys[i];
        if (key < 0) continue;
        const t = ctx.steps[i];
        const slot = t < k ? t : drawRng(seed, key, t, DRAW.reservoir).int(t + 1);
        if (slot >= k) continue;
        let joint = 0; // summed in float64 in config order, as PolicySampler.act and the PPO graph do
        for (const d of dims) joint += step.logp![d][i];
        const tokens = Object.fromEntries(dims.map((d) => [d, (step.actions[d] as Int32Array)[i]]));
        if (!reservoirs.has(key)) reservoirs.set(key, []);
        reservoirs.get(key)![slot] = { obs: obsRow(obs, n, i), tokens, behaviourLogp: joint };
      }
      return step;
    },
  };
}

export interface RunGroupsOptions {
  seed: number;
  samplesPerRollout: number;
  /** Sampling temperature of the rollouts (absent: 1). */
  temperature?: number;
  /** Anchors: record every state (for branch points, segment grading and the world-model refresh). */
  record?: (slot: number) => ArrayLike<number>;
  /** Seconds of policy inference are added to clock.policy (reported only). */
  clock?: { policy: number };
}

/** Runs every rollout of `jobs` (all on one task) in `env`; returns them group by group. */
export async function runGroups(
  env: Env,
  sampler: PolicySampler,
  jobs: readonly GroupJob[],
  o: RunGroupsOptions,
): Promise<Rollout[][]> {
  const policy = recordingPolicy(sampler, o);
  const flat = jobs.flatMap((j) => j.keys.map((key) => ({ job: j, key })));
  const options: CollectOptions = {
    seeds: flat.map((r) => r.job.branch?.seed ?? r.job.start),
    keys: flat.map((r) => r.key),
    recordState: o.record,
  };
  if (jobs.some((j) => j.horizon !== undefined)) options.horizons = flat.map((r) => r.job.horizon ?? Infinity);
  if (jobs.some((j) => j.branch)) {
    options.resetFrom = branchFrom(env, (k) => {
      const { job, key } = flat[k];
      if (!job.branch) throw new Error('runGroups: branched and initial-state jobs must run in separate calls');
      const { seed, elapsed, row, exact } = job.branch;
      return exact ? { seed, key, elapsed, row, exact } : { seed, key, elapsed, row };
    });
  }
  const episodes = await collectEpisodes(env, policy, options);
  let k = 0;
  return jobs.map((j) =>
    j.keys.map((key) => {
      const e = episodes[k++];
      return {
        key,
        seed: e.seed,
        reward: e.progress,
        rewardVar: e.progressVar ?? 0,
        success: e.success,
        length: e.length,
        start: j.branch?.elapsed ?? 0,
        actions: e.actions,
        states: e.states,
        samples: (policy.reservoirs.get(key) ?? []).filter(Boolean),
      };
    }),
  );
}

/** Branch points of a recorded rollout: its states every `every` steps before its end (elapsed counts
 *  from the episode's start); with `moved`, whether Φ changed over the next `moved.horizon` steps; with
 *  `origin`, how to replay the rollout to them (`exact`: the rollout's exact start, if not an initial state). */
export function branchPoints(
  task: number,
  r: Rollout,
  every: number,
  moved?: { horizon: number; progress: Branching['progress'] },
  origin?: { exact?: Uint8Array },
): BranchPoint[] {
  if (!r.states) throw new Error('branchPoints: the rollout recorded no states');
  const width = r.states.length / (r.length + 1);
  const row = (t: number) => r.states!.subarray(t * width, (t + 1) * width);
  const from: BranchOrigin | undefined = origin && {
    elapsed: r.start,
    row: Array.from(row(0)),
    ...(origin.exact && { exact: origin.exact }),
    actions: r.actions,
  };
  const out: BranchPoint[] = [];
  for (let t = 0; t < r.length; t += every) {
    const p: BranchPoint = { task, seed: r.seed, elapsed: r.start + t, row: Array.from(row(t)) };
    if (from) p.origin = from;
    if (moved)
      p.moved = moved.progress(r.seed, row(Math.min(r.length, t + moved.horizon))) !== moved.progress(r.seed, row(t));
    out.push(p);
  }
  return out;
}

/** Each branch point captured exactly (with the engine's copy where it has one) in `env`: its anchor
 *  rollout replayed from the rollout's start with the same actions; `steps`: the replays' env steps.
 *  The engine is deterministic, so the replay passes through the recorded state; a replay that does not
 *  is an error. */
export async function exactStates(
  env: Env,
  points: readonly BranchPoint[],
): Promise<{ starts: EpisodeStart[]; steps: number }> {
  if (!canBranch(env)) throw new TypeError(`${env.spec.id}: branching needs an env with capture() and resetFrom()`);
  const out: EpisodeStart[] = [];
  let steps = 0;
  const dims = env.spec.action.map((e) => e.name);
  for (const fromInitial of [true, false]) {
    const at = points.flatMap((p, k) => (!p.origin!.exact === fromInitial ? [k] : []));
    if (!at.length) continue;
    const origin = (m: number) => points[at[m]].origin!;
    const replay: Policy = {
      act: (_obs, ctx) => ({
        actions: Object.fromEntries(
          dims.map((d, j) => [
            d,
            Int32Array.from(ctx.keys, (m, i) => (m < 0 ? 0 : origin(m).actions[ctx.steps[i] * dims.length + j])),
          ]),
        ),
      }),
    };
    const record = (slot: number, m: number): ArrayLike<number> => {
      const c = env.capture(slot);
      const p = points[at[m]];
      if (c.elapsed === p.elapsed) {
        if (c.row.length !== p.row.length || p.row.some((v, j) => v !== Math.fround(c.row[j])))
          throw new Error(`exactStates: the replay of seed ${p.seed} left the recorded state at step ${p.elapsed}`);
        out[at[m]] ??= env.capture(slot, { exact: true });
      }
      return c.row;
    };
    const replayed = await collectEpisodes(env, replay, {
      seeds: at.map((k) => points[k].seed),
      keys: at.map((_, m) => m),
      horizons: at.map((k) => Math.max(1, points[k].elapsed - points[k].origin!.elapsed)),
      recordState: record,
      resetFrom: fromInitial
        ? undefined
        : branchFrom(env, (m) => {
            const { elapsed, row, exact } = origin(m);
            return { seed: points[at[m]].seed, key: m, elapsed, row, exact };
          }),
    });
    steps += replayed.reduce((n, e) => n + e.length, 0);
  }
  return { starts: out, steps };
}

/** A segment of a physics rollout graded in the world model: r_wm from the start state with the
 *  rollout's own actions replayed, r_env the real score at the same step, phi0 the real score at its start. */
export interface GradedSegment {
  rollout: number;
  elapsed: number;
  horizon: number;
  steps: number;
  rWm: number;
  rEnv: number;
  phi0: number;
}

/** Grades physics rollouts the way world-model groups run: from their recorded states every `every`
 *  steps, `horizon` steps of their own actions (Infinity: to the rollout's end). Without branching
 *  only whole episodes can be graded (from the initial state, through the model's reset). */
export async function gradeSegments(
  model: Env,
  branching: Branching | undefined,
  rollouts: readonly Rollout[],
  o: { every: number; horizon: number },
): Promise<GradedSegment[]> {
  if (!branching && (Number.isFinite(o.every) || Number.isFinite(o.horizon)))
    throw new Error("gradeSegments: segments need the task's branching");
  const D = model.spec.action.length;
  const dims = model.spec.action.map((e) => e.name);
  const segs = rollouts.flatMap((r, k) => {
    const starts = branching ? branchPoints(0, r, o.every) : [{ task: 0, seed: r.seed, elapsed: r.start, row: [] }];
    // t: the step of the rollout where the segment starts
    return starts.map((p) => ({
      r,
      k,
      p,
      t: p.elapsed - r.start,
      len: Math.min(o.horizon, r.length - p.elapsed + r.start),
    }));
  });
  if (!segs.length) return [];
  const replay: Policy = {
    act(_obs, ctx) {
      const actions: BatchAction = Object.fromEntries(
        dims.map((d, j) => [
          d,
          Int32Array.from(ctx.keys, (key, i) => {
            if (key < 0) return 0;
            const s = segs[key];
            return s.r.actions[(s.t + Math.min(ctx.steps[i], s.len - 1)) * D + j];
          }),
        ]),
      );
      return { actions };
    },
  };
  const episodes = await collectEpisodes(model, replay, {
    seeds: segs.map((s) => s.r.seed),
    keys: segs.map((_, k) => k),
    horizons: segs.map((s) => s.len),
    resetFrom:
      branching &&
      branchFrom(model, (k) => ({
        seed: segs[k].r.seed,
        key: segs[k].r.key,
        elapsed: segs[k].p.elapsed,
        row: segs[k].p.row,
      })),
  });
  const rowAt = (r: Rollout, t: number) =>
    r.states!.subarray((t * r.states!.length) / (r.length + 1), ((t + 1) * r.states!.length) / (r.length + 1));
  return segs.map((s, k) => ({
    rollout: s.k,
    elapsed: s.p.elapsed,
    horizon: o.horizon,
    steps: episodes[k].length,
    rWm: episodes[k].progress,
    rEnv: branching ? branching.progress(s.r.seed, rowAt(s.r, s.t + s.len)) : s.r.reward,
    phi0: branching ? branching.progress(s.r.seed, s.p.row) : 0,
  }));
}

/** The joint log-prob (float32 per dimension, summed in config order) of each sample's tokens under
 *  `sampler` at `temperature` (temperedLogp). */
export async function jointLogp(
  sampler: PolicySampler,
  samples: readonly StepSample[],
  temperature = 1,
  chunk = 64,
): Promise<number[]> {
  const out: number[] = [];
  const names = Object.keys(samples[0]?.obs ?? {});
  for (let at = 0; at < samples.length; at += chunk) {
    const rows = samples.slice(at, at + chunk);
    // the sampled tokens too: an autoregressive policy's slot t depends on the tokens before it
    const tokens = Object.fromEntries(
      sampler.config.actions.map((a) => [a.name, Int32Array.from(rows, (r) => r.tokens[a.name])]),
    );
    const f = await sampler.forward(
      stackObs(
        rows.map((r) => r.obs),
        names,
      ),
      rows.length,
      tokens,
    );
    rows.forEach((r, b) => {
      let joint = 0;
      for (const a of sampler.config.actions)
        joint += Math.fround(temperedLogp(f.logp[a.name], b * a.n, a.n, temperature, r.tokens[a.name]));
      out.push(joint);
    });
  }
  return out;
}
