// The PPO-clipped GRPO loss of the VLA on the exact sampled action tokens: one row = one sampled step.
// Loss = -mean_w(min(r A, clip(r, 1-eps, 1+eps_high) A)) + beta_kl mean_w(k3 KL to the reference)
//        - beta_ent mean_w(joint entropy), r = exp(logp - behaviour logp), mean_w = sum(w x) / sum(w),
// with sum(w) over the whole batch given as an input, so a slice of the batch gives its share.
// eps, eps_high, beta_kl and beta_ent are scalar graph inputs, so one session serves any schedule of them.
// At a rollout temperature T the policy optimised is the tempered one, log softmax(logp / T), as the
// rollouts drew from it: behaviour and reference log-probs come at the same T (as verl computes them).
import type { Graph, Tensor } from '../nn/ir.ts';
import * as o from '../nn/ops.ts';
import type { LossBuild } from '../nn/train.ts';
import { type VlaConfig, actionScores, vlaActionInputs, vlaInputs, vlaNet } from '../policy/vla.ts';

/** Graph input and metric output names (besides vlaInputs and action.<dim>). */
export const PPO_IO = {
  /** The sampler's stored joint log-prob of the row's tokens (sum over dimensions), float [B]. */
  behaviourLogp: 'ppo.behaviour_logp',
  /** The frozen reference policy's joint log-prob of the same tokens, float [B]. */
  refLogp: 'ppo.ref_logp',
  /** Standardised (and weighted) advantage, float [B]. */
  advantage: 'ppo.advantage',
  /** Row weight; 0 masks a row out (padding), float [B]. */
  weight: 'ppo.weight',
  /** The weights' sum over the whole batch, float scalar: every mean divides by it, so the losses of
   *  a batch's row slices add up to the batch's loss (data-parallel steps). */
  weightTotal: 'ppo.weight_total',
  clip: 'ppo.clip',
  clipHigh: 'ppo.clip_high',
  klCoef: 'ppo.kl_coef',
  entropyCoef: 'ppo.entropy_coef',
  // metrics, all computed with the parameters before the update
  policyLoss: 'ppo.policy_loss',
  kl: 'ppo.kl',
  entropy: 'ppo.entropy',
  clipFraction: 'ppo.clip_fraction',
  approxKl: 'ppo.approx_kl',
  /** Per-row joint log-prob [B] (float sum over dimensions). */
  logp: 'ppo.logp',
  /** Per-row log-prob [B] of dimension `name`'s token: summed in float64 like PolicySampler.act,
   *  they give the train side of the train/inference log-prob gap. */
  logpDim: (name: string) => `ppo.logp.${name}`,
} as const;

export interface PpoCoefficients {
  /** Clip range eps of the ratio (below 1; above it too unless clipHigh is given). */
  clip: number;
  /** The clip range above 1 (DAPO's clip-higher: a likelier token's ratio may grow further); absent: clip. */
  clipHigh?: number;
  /** beta_KL: weight of the KL to the reference policy. */
  klCoef: number;
  /** beta_ent: weight of the entropy bonus. */
  entropyCoef: number;
}

/** Defaults: PPO's eps = 0.2, GRPO's beta_KL = 0.04 (DeepSeekMath), a small entropy bonus. */
export const PPO_DEFAULTS: PpoCoefficients = { clip: 0.2, klCoef: 0.04, entropyCoef: 1e-3 };

/** Log-ratios are capped at 20 before exp: a row far off-policy must not overflow to Inf, whose
 *  0 * Inf in the backward pass would turn the whole step NaN. */
const MAX_LOG_RATIO = 20;
const expCapped = (x: Tensor): Tensor => o.exp(o.minimum(x, MAX_LOG_RATIO));

/** The loss and its metrics for a static batch of `batch` rows, of the policy at `temperature`. */
export function ppoLossBuilder(config: VlaConfig, batch: number, temperature = 1): (g: Graph) => LossBuild {
  return (g) => {
    const net = vlaNet(vlaInputs(g, config, batch), config);
    const sc = actionScores(net, vlaActionInputs(g, config, batch), temperature);
    const behaviour = g.input(PPO_IO.behaviourLogp, [batch]);
    // The reference enters as data, not as a second copy of the network in this graph: it is frozen,
    // so a row's reference log-prob never changes across epochs and minibatches and is computed once
    // (by a reference PolicySampler, weights baked in) instead of in every train step; vlaNet's fixed
    // parameter names could not hold two copies in one graph anyway; and k3 needs only the sampled
    // tokens' log-prob, not the whole distribution.
    const ref = g.input(PPO_IO.refLogp, [batch]);
    const adv = g.input(PPO_IO.advantage, [batch]);
    const w = g.input(PPO_IO.weight, [batch]);
    const eps = g.input(PPO_IO.clip, []);
    const epsHigh = g.input(PPO_IO.clipHigh, []);
    const klCoef = g.input(PPO_IO.klCoef, []);
    const entCoef = g.input(PPO_IO.entropyCoef, []);
    const total = g.input(PPO_IO.weightTotal, []);
    const mean = (x: Tensor): Tensor => o.div(o.sumAll(o.mul(w, x)), total);

    const logRatio = o.sub(sc.logp, behaviour);
    const ratio = expCapped(logRatio);
    const clipped = o.minimum(o.maximum(ratio, o.sub(1, eps)), o.add(epsHigh, 1));
    // Min sends a tie's gradient to its second operand: inside the range that is clip(r) = r, which
    // passes it on; beyond the range in the advantage's direction the clipped term wins and the row
    // gets no gradient (grad.ts: Min/Max).
    const surrogate = o.minimum(o.mul(ratio, adv), o.mul(clipped, adv));
    const policyLoss = o.neg(mean(surrogate));
    // k3 (Schulman 2020, as in GRPO): with d = ref - logp, KL(pi || ref) ~ exp(d) - d - 1. Unbiased
    // like k1 (-d) but >= 0 for every row and of much lower variance while the policies are close,
    // the regime the KL term keeps them in. Its gradient is (1 - exp(d)) dlogp.
    const d = o.sub(ref, sc.logp);
    const kl = mean(o.sub(o.sub(expCapped(d), d), 1));
    const entropy = mean(sc.entropy);
    const loss = o.sub(o.add(policyLoss, o.mul(klCoef, kl)), o.mul(entCoef, entropy));

    const outside = o.add(
      o.cast(o.less(ratio, o.sub(1, eps)), g.float),
      o.cast(o.greater(ratio, o.add(epsHigh, 1)), g.float),
    );
    const clipFraction = mean(outside);
    // k3 of KL(behaviour || current) from the behaviour's samples: (r - 1) - log r.
    const approxKl = mean(o.sub(o.sub(ratio, 1), logRatio));
    const metrics: Record<string, Tensor> = {
      [PPO_IO.policyLoss]: policyLoss,
      [PPO_IO.kl]: kl,
      [PPO_IO.entropy]: entropy,
      [PPO_IO.clipFraction]: clipFraction,
      [PPO_IO.approxKl]: approxKl,
      [PPO_IO.logp]: sc.logp,
    };
    for (const a of config.actions) metrics[PPO_IO.logpDim(a.name)] = sc.perDim[a.name];
    return { loss, metrics };
  };
}
