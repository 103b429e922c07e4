// AgentBrew: retrospective task inference and PMI credit. A rollout that failed its own instruction
// but whose final state satisfies another instruction of the family becomes a positive example for
// that one (relabelling); every step's loss weight is scaled by its pointwise mutual information with
// the instruction, log π(a|s,c) − log mean_c' π(a|s,c'), clipped at 0 and normalised to mean 1 per
// trajectory (steps the instruction did not decide get little weight).
import { z } from 'zod';
import { dexp, dlog } from '../core/dmath.ts';
import type { PolicySampler } from '../policy/sampler.ts';
import type { PolicySample } from './policy-trainer.ts';
import { jointLogp, type StepSample } from './rollouts.ts';

export const AgentBrewSchema = z.object({
  relabel: z
    .boolean()
    .default(false)
    .describe('failed anchor rollouts whose final state satisfies another instruction become its positives'),
  relabelAdvantage: z.number().positive().default(1).describe('advantage of a relabelled rollout’s steps'),
  pmi: z.boolean().default(false).describe("weight each step's loss by its PMI with the instruction"),
});
export type AgentBrewConfig = z.output<typeof AgentBrewSchema>;

/** What a task offers for relabelling and PMI credit (never a held-out object-target pair). */
export interface Instructions {
  /** The family's instructions in the episode of `seed`, one per train pair, its own first. */
  family(seed: number): string[];
  /** Instructions of family(seed) other than its own that a recorded state satisfies. */
  satisfied(seed: number, row: ArrayLike<number>): string[];
}

/** A trajectory's rows in a batch: samples[from, to) of one rollout of `task` on `seed`. */
export interface Span {
  task: number;
  seed: number;
  from: number;
  to: number;
}

/** Per-step weights from log π(a_t|s_t,c) (`own`) and log π(a_t|s_t,c') for every c' of the family
 *  (`family[t]`, c included): max(0, PMI_t), scaled to sum to the trajectory's length (all 1 when
 *  every PMI is at most 0). */
export function pmiWeights(own: readonly number[], family: readonly (readonly number[])[]): number[] {
  const pmi = own.map((lp, t) => {
    const m = Math.max(...family[t]);
    const mean = family[t].reduce((a, x) => a + dexp(x - m), 0) / family[t].length;
    return Math.max(0, lp - (m + dlog(mean)));
  });
  const total = pmi.reduce((a, x) => a + x, 0);
  return total > 0 ? pmi.map((x) => (x * own.length) / total) : own.map(() => 1);
}

/** The instruction text of a sample (the policy's instruction observation). */
const textOf = (s: StepSample, key: string) => (s.obs[key] as string[])[0];
const withText = (s: StepSample, key: string, text: string): StepSample => ({
  ...s,
  obs: { ...s.obs, [key]: [text] },
});

/** The relabelled copy of a failed rollout's samples: `text` as instruction, the sampler's own
 *  log-probs under it as behaviour (the policy that acts this iteration), a fixed positive advantage. */
export async function relabelSamples(
  sampler: PolicySampler,
  samples: readonly StepSample[],
  text: string,
  o: { advantage: number; weight: number; temperature?: number },
): Promise<PolicySample[]> {
  const key = sampler.config.instruction;
  const relabelled = samples.map((s) => withText(s, key, text));
  const logp = relabelled.length ? await jointLogp(sampler, relabelled, o.temperature) : [];
  return relabelled.map((s, k) => ({
    ...s,
    behaviourLogp: logp[k],
    refLogp: 0,
    advantage: o.advantage,
    weight: o.weight,
  }));
}

/** Scales the weights of every span's samples by their PMI weights under `sampler`. */
export async function applyPmi(
  sampler: PolicySampler,
  samples: PolicySample[],
  spans: readonly Span[],
  instructions: (task: number) => Instructions | undefined,
): Promise<void> {
  const key = sampler.config.instruction;
  for (const span of spans) {
    const family = instructions(span.task)?.family(span.seed);
    const rows = samples.slice(span.from, span.to);
    if (!family || family.length < 2 || rows.length === 0) continue;
    const texts = [...new Set([textOf(rows[0], key), ...family])];
    const logps = await Promise.all(
      texts.map((t) =>
        jointLogp(
          sampler,
          rows.map((s) => withText(s, key, t)),
        ),
      ),
    );
    const w = pmiWeights(
      logps[0],
      rows.map((_, t) => logps.map((l) => l[t])),
    );
    rows.forEach((s, t) => (s.weight *= w[t]));
  }
}
