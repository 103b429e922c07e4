// The world-model network: an ensemble of K MLPs in one graph, (state, action) -> normalised Δstate
// mean and log-variance. Input and target normalisers are non-trainable parameters stored with the
// model. Browser-safe; src/worldmodel builds its environment on top of this.
import { z } from 'zod';
import { DYN, type Graph, type Tensor } from '../ir.ts';
import * as o from '../ops.ts';
import { type Activation, activate, gaussianNll, softClamp } from '../layers.ts';

export const WorldModelNetSchema = z.object({
  stateDim: z.number().int().positive(),
  actionDim: z.number().int().positive(),
  /** Size of the predicted Δ (defaults to stateDim). */
  outDim: z.number().int().positive().optional(),
  members: z.number().int().positive(),
  hidden: z.array(z.number().int().positive()).min(1),
  act: z.enum(['relu', 'silu', 'tanh']).default('silu'),
  minLogVar: z.number().default(-10),
  maxLogVar: z.number().default(1),
});
export type WorldModelNetConfig = z.input<typeof WorldModelNetSchema>;
type Cfg = z.output<typeof WorldModelNetSchema>;

/** Names of the normaliser buffers (mean/std of inputs [state ++ action] and of Δ targets). */
export const WM_NORM = {
  inMean: 'wm.in.mean',
  inStd: 'wm.in.std',
  outMean: 'wm.out.mean',
  outStd: 'wm.out.std',
} as const;

export interface WorldModelNet {
  config: Cfg;
  /** Normalised Δ mean and log-variance, [K, N, outDim]. */
  mean: Tensor;
  logvar: Tensor;
  /** Δ in state units: mean [K, N, D] and variance [K, N, D]. */
  deltaMean: Tensor;
  deltaVar: Tensor;
}

export function parseWorldModelConfig(c: WorldModelNetConfig): Cfg {
  const r = WorldModelNetSchema.safeParse(c);
  if (!r.success)
    throw new Error(`world-model config: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  if (r.data.minLogVar >= r.data.maxLogVar) throw new Error('world-model config: minLogVar must be below maxLogVar');
  return r.data;
}

/** x [K, N, in] -> [K, N, out] as K two-dimensional MatMuls: ORT's batched MatMul gives a row
 *  different bits depending on the batch size, a 2-D MatMul does not (test/policy/batch-invariance). */
function perMemberMatmul(x: Tensor, w: Tensor): Tensor {
  const [k, n, fanIn] = x.shape;
  const out = w.shape[2];
  const rows = Array.from({ length: k }, (_, m) => {
    const y = o.matmul(
      o.reshape(o.slice(x, 0, m, m + 1), [n, fanIn]),
      o.reshape(o.slice(w, 0, m, m + 1), [fanIn, out]),
    );
    return o.reshape(y, [1, n, out]);
  });
  return k === 1 ? rows[0] : o.concat(rows, 0);
}

/** Ensemble linear layer: x [N, in] (shared by members) or [K, N, in] -> [K, N, keep]: the first `keep`
 *  of `out` units (a sliced weight, so the dropped units cost nothing). */
function ensembleLinear(x: Tensor, name: string, k: number, out: number, act: Activation | 'none', keep = out): Tensor {
  const fanIn = x.shape[x.rank - 1];
  const std = act === 'none' ? Math.sqrt(1 / fanIn) : Math.sqrt(2 / fanIn);
  const w = x.graph.param(`${name}.w`, [k, fanIn, out], { kind: 'normal', std });
  const b = x.graph.param(`${name}.b`, [k, 1, out], { kind: 'zeros' }, { decay: false });
  const [wk, bk] = keep < out ? [o.slice(w, -1, 0, keep), o.slice(b, -1, 0, keep)] : [w, b];
  let y: Tensor;
  if (x.rank === 2) {
    // shared input: one [N, in] x [in, K * keep] MatMul, then [K, N, keep]
    const wide = o.reshape(o.transpose(wk, [1, 0, 2]), [fanIn, k * keep]);
    y = o.transpose(o.reshape(o.matmul(x, wide), [x.shape[0], k, keep]), [1, 0, 2]);
  } else y = perMemberMatmul(x, wk);
  return activate(o.add(y, bk), act === 'none' ? 'none' : act);
}

/** Builds the ensemble on `state` [.., S] and `action` [.., A]; leading dims [N] or [K, N]. */
export function worldModelNet(state: Tensor, action: Tensor, config: WorldModelNetConfig): WorldModelNet {
  const { c, d, h, outMean, outStd } = trunk(state, action, config);
  const out = ensembleLinear(h, 'wm.out', c.members, 2 * d, 'none');
  const mean = o.slice(out, -1, 0, d);
  const logvar = softClamp(o.slice(out, -1, d, 2 * d), c.minLogVar, c.maxLogVar);
  const deltaMean = o.add(o.mul(mean, outStd), outMean);
  const deltaVar = o.mul(o.exp(logvar), o.mul(outStd, outStd));
  return { config: c, mean, logvar, deltaMean, deltaVar };
}

/** Only the Δ mean in state units [K, N, D] (what stepping needs): the log-variance half of the output
 *  layer is never computed. Same parameters as worldModelNet. */
export function worldModelDeltaMean(state: Tensor, action: Tensor, config: WorldModelNetConfig): Tensor {
  const { c, d, h, outMean, outStd } = trunk(state, action, config);
  return o.add(o.mul(ensembleLinear(h, 'wm.out', c.members, 2 * d, 'none', d), outStd), outMean);
}

/** Normalised inputs through the hidden layers, plus the target normaliser. */
function trunk(
  state: Tensor,
  action: Tensor,
  config: WorldModelNetConfig,
): { c: Cfg; d: number; h: Tensor; outMean: Tensor; outStd: Tensor } {
  const c = parseWorldModelConfig(config);
  const g = state.graph;
  const d = c.outDim ?? c.stateDim;
  if (state.shape[state.rank - 1] !== c.stateDim)
    throw new Error(`world model: state has ${state.shape[state.rank - 1]} features, config says ${c.stateDim}`);
  if (action.shape[action.rank - 1] !== c.actionDim)
    throw new Error(`world model: action has ${action.shape[action.rank - 1]} features, config says ${c.actionDim}`);
  const inDim = c.stateDim + c.actionDim;
  const buffer = { trainable: false, decay: false };
  const inMean = g.param(WM_NORM.inMean, [inDim], { kind: 'zeros' }, buffer);
  const inStd = g.param(WM_NORM.inStd, [inDim], { kind: 'ones' }, buffer);
  const outMean = g.param(WM_NORM.outMean, [d], { kind: 'zeros' }, buffer);
  const outStd = g.param(WM_NORM.outStd, [d], { kind: 'ones' }, buffer);
  let h = o.div(o.sub(o.concat([state, action], -1), inMean), inStd);
  c.hidden.forEach((width, i) => {
    h = ensembleLinear(h, `wm.l${i}`, c.members, width, c.act);
  });
  return { c, d, h, outMean, outStd };
}

/** Mean Gaussian NLL of raw Δ targets [K, N, D] (normalised in-graph with the stored target normaliser). */
export function worldModelLoss(net: WorldModelNet, target: Tensor): Tensor {
  const g = target.graph;
  const outMean = g.paramByName(WM_NORM.outMean).tensor;
  const outStd = g.paramByName(WM_NORM.outStd).tensor;
  const t = o.div(o.sub(target, outMean), outStd);
  return o.meanAll(gaussianNll(net.mean, net.logvar, t, false));
}

/** Declares the standard inputs: state/action [K, N, ·] for training (per-member bootstrap batches)
 *  or [N, ·] for inference (N may be DYN). */
export function worldModelInputs(
  g: Graph,
  config: WorldModelNetConfig,
  batch: number,
  perMember: boolean,
): { state: Tensor; action: Tensor } {
  const c = parseWorldModelConfig(config);
  const lead = perMember ? [c.members, batch] : [batch];
  if (perMember && batch === DYN) throw new Error('world model: training batches need a static size');
  return { state: g.input('state', [...lead, c.stateDim]), action: g.input('action', [...lead, c.actionDim]) };
}

/** Inference graph builder (for ForwardSession / saveModel): inputs state [N, S], action [N, A]. */
export function worldModelForwardBuilder(
  config: WorldModelNetConfig,
  batch: number = DYN,
): (g: Graph) => Record<string, Tensor> {
  return (g) => {
    const { state, action } = worldModelInputs(g, config, batch, false);
    const net = worldModelNet(state, action, config);
    return { mean: net.mean, logvar: net.logvar, delta_mean: net.deltaMean, delta_var: net.deltaVar };
  };
}

/** Stepping graph builder: inputs state [N, S], action [N, A]; one output, delta_mean [K, N, D]. */
export function worldModelStepBuilder(
  config: WorldModelNetConfig,
  batch: number = DYN,
): (g: Graph) => Record<string, Tensor> {
  return (g) => {
    const { state, action } = worldModelInputs(g, config, batch, false);
    return { delta_mean: worldModelDeltaMean(state, action, config) };
  };
}

/** Training loss builder (for TrainSession): per-member batches state/action/target [K, N, ·]. */
export function worldModelLossBuilder(config: WorldModelNetConfig, batch: number): (g: Graph) => { loss: Tensor } {
  return (g) => {
    const c = parseWorldModelConfig(config);
    const { state, action } = worldModelInputs(g, c, batch, true);
    const target = g.input('target', [c.members, batch, c.outDim ?? c.stateDim]);
    return { loss: worldModelLoss(worldModelNet(state, action, c), target) };
  };
}
