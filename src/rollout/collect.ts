import type { BatchAction, BatchObs, Env, ResetInfo } from '../env/types.ts';

/** Which episode each env slot is running and how far it is: random draws of a policy derive from
 *  (its seed, keys[i], steps[i]) so they never depend on the batch layout (docs/run-state.md#determinism). */
export interface StepContext {
  /** The episode key of slot i (its seed unless the caller keyed episodes otherwise); -1 = idle. */
  readonly keys: Float64Array;
  /** Steps slot i's episode has taken before this action. */
  readonly steps: Int32Array;
}

/** What a policy returns for one batched step. */
export interface PolicyStep {
  actions: BatchAction;
  /** Model policies: the sampler's log-probability of each chosen token, per action dimension; NaN in a
   *  slot whose token another actor chose (the handover's expert). */
  logp?: Record<string, Float32Array>;
}

/** Anything that maps a batch of observations to a batch of action tokens. `onReset` tells a
 *  stateful policy (e.g. a scripted expert with phase memory) which envs just started an episode. */
export interface Policy {
  onReset?(envIndices: number[], info: ResetInfo): void;
  act(obs: BatchObs, ctx: StepContext): Promise<PolicyStep> | PolicyStep;
}

/** A context for n fresh slots all running episode keys[i] at step 0 (tests, one-off calls). */
export function stepContext(keys: ArrayLike<number>, steps?: ArrayLike<number>): StepContext {
  return { keys: Float64Array.from(keys), steps: steps ? Int32Array.from(steps) : new Int32Array(keys.length) };
}

export interface Episode {
  seed: number;
  instruction: string;
  length: number;
  success: boolean;
  /** Sum of rewards and the process score at the last step. */
  return: number;
  progress: number;
  /** Action tokens, length * numActionDims, step-major, in spec.action order (discrete entries). */
  actions: Int32Array;
  rewards: Float32Array;
  /** Optional privileged states, (length + 1) * stateSize, from `recordState`. */
  states?: Float32Array;
  /** Model policies: log-probability of each executed token, laid out like `actions` (one entry per
   *  token); NaN where the token was not the policy's (a step it gave none for, e.g. the handover's
   *  expert). Absent when no step of the episode had one. */
  logp?: Float32Array;
  /** Learned engines: member variance of `progress` at the last step. */
  progressVar?: number;
  /** Tabletop: the episode ended because an object left the table. */
  offTable?: boolean;
}

export interface CollectOptions {
  /** One episode per seed, returned in this order. */
  seeds: number[];
  /** Episode keys for every random draw (default: the seeds); distinct keys make rollouts from one
   *  seed (a GRPO group) independent. */
  keys?: number[];
  /** Privileged state of env i (flat), recorded after reset and after every step of its episode. */
  recordState?: (envIndex: number, episode: number) => ArrayLike<number>;
  onEpisode?: (episode: Episode, done: number) => void;
  /** Episode k ends (truncated) after horizons[k] steps if the env has not ended it before. */
  horizons?: number[];
  /** Starts episodes[j] in slots[j] instead of env.reset (branching from saved states). */
  resetFrom?: (slots: number[], episodes: number[]) => Promise<{ obs: BatchObs; info: ResetInfo }>;
}

/** Run one episode per seed over the env's parallel slots; a finished slot is reset (masked) with the
 *  next seed. Only slots running an episode step (the env's step mask): idle ones, never started or
 *  left without a next seed, cost nothing. Deterministic: results depend only on the seeds, the env
 *  and the policy. */
export async function collectEpisodes(env: Env, policy: Policy, options: CollectOptions): Promise<Episode[]> {
  const n = env.numEnvs;
  const total = options.seeds.length;
  const dims = env.spec.action.filter((e) => e.kind === 'discrete').map((e) => e.name);
  const results: Episode[] = new Array(total);
  const slot = new Int32Array(n).fill(-1); // episode index each env slot is running, -1 = idle
  const keys = options.keys ?? options.seeds;
  if (keys.length !== total) throw new RangeError(`collectEpisodes: ${keys.length} keys for ${total} seeds`);
  const ctx = { keys: new Float64Array(n).fill(-1), steps: new Int32Array(n) };
  const fresh = () => ({
    actions: [] as number[],
    rewards: [] as number[],
    states: [] as number[],
    logp: [] as number[],
    hasLogp: false,
    instruction: '',
  });
  const buffers = Array.from({ length: n }, fresh);
  let next = 0;
  let done = 0;

  /** Start the next episodes in the given idle slots; returns the new batch observation, or null. */
  const start = async (slots: number[]): Promise<BatchObs | null> => {
    const started = slots.slice(0, total - next);
    if (started.length === 0) return null;
    const seeds = new Array(n).fill(0);
    const mask = new Uint8Array(n);
    for (const i of started) {
      slot[i] = next;
      mask[i] = 1;
      ctx.keys[i] = keys[next];
      ctx.steps[i] = 0;
      seeds[i] = options.seeds[next++];
    }
    const out = options.resetFrom
      ? await options.resetFrom(
          started,
          started.map((i) => slot[i]),
        )
      : await env.reset({ seed: seeds, mask, keys: Array.from(ctx.keys) });
    for (const i of started) {
      buffers[i] = {
        ...fresh(),
        states: options.recordState ? Array.from(options.recordState(i, slot[i])) : [],
        instruction: out.info.instruction?.[i] ?? '',
      };
    }
    policy.onReset?.(started, out.info);
    return out.obs;
  };

  let obs = await start(Array.from({ length: n }, (_, i) => i));
  while (obs && done < total) {
    const { actions: action, logp } = await policy.act(obs, ctx);
    const r = await env.step(action, { mask: slot.map((k) => (k >= 0 ? 1 : 0)) });
    obs = r.obs;
    const finished: number[] = [];
    for (let i = 0; i < n; i++) {
      if (slot[i] < 0) continue;
      const b = buffers[i];
      for (const d of dims) b.actions.push((action[d] as Int32Array)[i]);
      for (const d of dims) b.logp.push(logp ? logp[d][i] : Number.NaN);
      b.hasLogp ||= logp !== undefined;
      ctx.steps[i]++;
      b.rewards.push(r.reward[i]);
      if (options.recordState) for (const x of Array.from(options.recordState(i, slot[i]))) b.states.push(x);
      const cut = options.horizons !== undefined && b.rewards.length >= options.horizons[slot[i]];
      if (!r.terminated[i] && !r.truncated[i] && !cut) continue;
      const episode: Episode = {
        seed: options.seeds[slot[i]],
        instruction: b.instruction,
        length: b.rewards.length,
        success: r.info.success[i] === 1,
        return: b.rewards.reduce((a, x) => a + x, 0),
        progress: r.info.progress[i],
        actions: Int32Array.from(b.actions),
        rewards: Float32Array.from(b.rewards),
        states: options.recordState ? Float32Array.from(b.states) : undefined,
        logp: b.hasLogp ? Float32Array.from(b.logp) : undefined,
        progressVar: r.info.progressVar?.[i],
      };
      if (r.info.offTable) episode.offTable = r.info.offTable[i] === 1;
      results[slot[i]] = episode;
      slot[i] = -1;
      ctx.keys[i] = -1;
      finished.push(i);
      done++;
      options.onEpisode?.(episode, done);
    }
    if (finished.length) obs = (await start(finished)) ?? obs;
  }
  return results;
}
