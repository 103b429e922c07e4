// Rollout groups as self-contained jobs: (policy, env, start seed, rollout keys) in, trajectories out;
// every random draw comes from (run seed, rollout key, step), so a job's result never depends on the
// process, the batch it shares or its slot. Also: the reservoir of steps that enter the loss, the
// world model's grading of physics rollouts (the same start, the anchor's own actions), and the
// reference policy's log-probs.
import { DRAW, drawRng } from '../core/rng.ts';
import type { BatchAction, BatchObs, Env } from '../env/types.ts';
import type { PolicySampler } from '../policy/sampler.ts';
import { samplerPolicy } from '../policy/sampler.ts';
import { collectEpisodes, type Policy } from '../rollout/index.ts';
import { obsRow, stackObs } from './policy-trainer.ts';

/** One group of G rollouts from one start. */
export interface GroupJob {
  kind: 'anchor' | 'model';
  task: number;
  /** The env seed of the start (an initial state of the train split). */
  start: number;
  /** One key per rollout: its random draws and its identity. */
  keys: number[];
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
  /** Trajectory reward: the process score Φ at the rollout's last step (1 on success). */
  reward: number;
  success: boolean;
  length: number;
  /** Executed tokens, length x dims, step-major. */
  actions: Int32Array;
  samples: StepSample[];
}

/** The sampler acting at temperature 1, keeping a uniform reservoir of `k` steps per rollout key. */
function recordingPolicy(sampler: PolicySampler, seed: number, k: number): Policy & { reservoirs: Map<number, StepSample[]> } {
  const inner = samplerPolicy(sampler, { seed, temperature: 1 });
  const dims = sampler.config.actions.map((a) => a.name);
  const reservoirs = new Map<number, StepSample[]>();
  return {
    reservoirs,
    async act(obs, ctx) {
      const step = await inner.act(obs, ctx);
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

/** Runs every rollout of `jobs` (all on one task) in `env`; returns them group by group. */
export async function runGroups(env: Env, sampler: PolicySampler, jobs: readonly GroupJob[], o: { seed: number; samplesPerRollout: number }): Promise<Rollout[][]> {
  const policy = recordingPolicy(sampler, o.seed, o.samplesPerRollout);
  const seeds = jobs.flatMap((j) => j.keys.map(() => j.start));
  const keys = jobs.flatMap((j) => j.keys);
  const episodes = await collectEpisodes(env, policy, { seeds, keys });
  let k = 0;
  return jobs.map((j) => j.keys.map((key) => {
    const e = episodes[k++];
    return { key, seed: e.seed, reward: e.progress, success: e.success, length: e.length, actions: e.actions, samples: (policy.reservoirs.get(key) ?? []).filter(Boolean) };
  }));
}

/** The world model's reward for physics rollouts graded the way world-model groups are: from the same
 *  start (same seed and key), the rollout's own actions replayed for its own length; Φ at its last step. */
export async function gradeInModel(model: Env, rollouts: readonly Rollout[]): Promise<number[]> {
  const n = model.numEnvs;
  const dims = model.spec.action.map((e) => e.name);
  const out: number[] = [];
  for (let at = 0; at < rollouts.length; at += n) {
    const chunk = rollouts.slice(at, at + n);
    const pad = (i: number) => chunk[Math.min(i, chunk.length - 1)];
    await model.reset({ seed: Array.from({ length: n }, (_, i) => pad(i).seed), keys: Array.from({ length: n }, (_, i) => pad(i).key) });
    const longest = Math.max(...chunk.map((r) => r.length));
    const reward = new Array<number>(chunk.length).fill(0);
    for (let t = 0; t < longest; t++) {
      const action: BatchAction = Object.fromEntries(dims.map((d, j) => [d, Int32Array.from({ length: n }, (_, i) => {
        const r = pad(i);
        return t < r.length ? r.actions[t * dims.length + j] : 0;
      })]));
      const step = await model.step(action);
      chunk.forEach((r, i) => { if (t === r.length - 1) reward[i] = step.info.progress[i]; });
    }
    out.push(...reward);
  }
  return out;
}

/** The joint log-prob (float32 per dimension, summed in config order) of each sample's tokens under `sampler`. */
export async function jointLogp(sampler: PolicySampler, samples: readonly StepSample[], chunk = 64): Promise<number[]> {
  const out: number[] = [];
  const names = Object.keys(samples[0]?.obs ?? {});
  for (let at = 0; at < samples.length; at += chunk) {
    const rows = samples.slice(at, at + chunk);
    const f = await sampler.forward(stackObs(rows.map((r) => r.obs), names), rows.length);
    rows.forEach((r, b) => {
      let joint = 0;
      for (const a of sampler.config.actions) joint += f.logp[a.name][b * a.n + r.tokens[a.name]];
      out.push(joint);
    });
  }
  return out;
}
