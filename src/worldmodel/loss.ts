// The ensemble's training loss: the mean head by squared error in normalised units, the log-variance
// head by Gaussian NLL around the (gradient-stopped) mean. With a plain joint NLL the entries that
// never change get log-variance at its floor, their d/var gradients swamp the shared layers and the
// mean never learns the moving entries (measured: the tool's step was not learned at all).
import type { Graph, Tensor } from '../nn/ir.ts';
import * as o from '../nn/ops.ts';
import { gaussianNll } from '../nn/layers.ts';
import {
  parseWorldModelConfig,
  WM_NORM,
  worldModelInputs,
  worldModelNet,
  type WorldModelNetConfig,
} from '../nn/nets/worldmodel.ts';

export function ensembleLossBuilder(
  config: WorldModelNetConfig,
  batch: number,
): (g: Graph) => { loss: Tensor; metrics: Record<string, Tensor> } {
  return (g) => {
    const c = parseWorldModelConfig(config);
    const { state, action } = worldModelInputs(g, c, batch, true);
    const target = g.input('target', [c.members, batch, c.outDim ?? c.stateDim]);
    const net = worldModelNet(state, action, c);
    const t = o.div(o.sub(target, g.paramByName(WM_NORM.outMean).tensor), g.paramByName(WM_NORM.outStd).tensor);
    const d = o.sub(net.mean, t);
    const mse = o.meanAll(o.mul(d, d));
    const nll = o.meanAll(gaussianNll(o.stopGradient(net.mean), net.logvar, t, false));
    return { loss: o.add(mse, nll), metrics: { mse } };
  };
}
