// Policies defined by the spec alone: uniform random tokens, token noise around another policy, and
// one batch of tokens taking some envs' tokens from another.
// Every draw comes from (seed, episode key, step), so results never depend on the batch layout.
import { DRAW, drawRng, type Rng } from '../core/rng.ts';
import { actionBins, type EnvSpec } from '../core/spec.ts';
import type { BatchAction } from '../env/types.ts';
import type { Policy, StepContext } from './collect.ts';

/** Replaces each token of env i by a uniform one with probability p (in spec order: one uniform draw
 *  per dimension, then the token if replaced). Mutates `action`. */
export function noiseTokens(
  dims: readonly { name: string; n: number }[],
  action: BatchAction,
  i: number,
  p: number,
  rng: Rng,
): void {
  for (const d of dims) if (rng.uniform() < p) (action[d.name] as Int32Array)[i] = rng.int(d.n);
}

/** Uniform random tokens. */
export function randomPolicy(spec: EnvSpec, seed: number): Policy {
  const dims = actionBins(spec);
  return {
    act(_obs, ctx: StepContext) {
      const n = ctx.keys.length;
      const actions: BatchAction = Object.fromEntries(dims.map((d) => [d.name, new Int32Array(n)]));
      for (let i = 0; i < n; i++) {
        const rng = drawRng(seed, ctx.keys[i], ctx.steps[i], DRAW.randomPolicy);
        for (const d of dims) (actions[d.name] as Int32Array)[i] = rng.int(d.n);
      }
      return { actions };
    },
  };
}

/** `policy` with each executed token replaced by a uniform one with probability `noise`. */
export function withTokenNoise(policy: Policy, spec: EnvSpec, noise: number, seed: number): Policy {
  if (!(noise >= 0 && noise <= 1)) throw new RangeError(`noise must be in [0, 1], got ${noise}`);
  const dims = actionBins(spec);
  if (noise === 0) return policy;
  return {
    onReset: policy.onReset?.bind(policy),
    async act(obs, ctx) {
      const step = await policy.act(obs, ctx);
      const actions: BatchAction = Object.fromEntries(
        dims.map((d) => [d.name, Int32Array.from(step.actions[d.name] as Int32Array)]),
      );
      for (let i = 0; i < ctx.keys.length; i++)
        noiseTokens(dims, actions, i, noise, drawRng(seed, ctx.keys[i], ctx.steps[i], DRAW.tokenNoise));
      return { actions };
    },
  };
}

/** `own`'s tokens with env i's taken from `other` wherever `take[i]` (new arrays; neither input changes). */
export function takeSlots(own: BatchAction, other: BatchAction, take: readonly boolean[]): BatchAction {
  const actions: BatchAction = {};
  for (const [name, tokens] of Object.entries(own)) {
    const mixed = Int32Array.from(tokens as Int32Array);
    take.forEach((t, i) => {
      if (t) mixed[i] = (other[name] as Int32Array)[i];
    });
    actions[name] = mixed;
  }
  return actions;
}
