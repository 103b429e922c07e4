// Save/load of policy files (ONNX sampler graph with weights + sidecar with the VLA config, which holds
// the tokenizer vocabulary and the action bins). Node-only.
import { InputError } from '../core/errors.ts';
import { Graph } from '../nn/ir.ts';
import { type LoadedModel, type ModelSidecar, loadModel, saveModel } from '../nn/modelfile.ts';
import type { ParamStore } from '../nn/params.ts';
import { type VlaConfig, type VlaConfigInput, parseVlaConfig, vlaForwardBuilder } from './vla.ts';

export const POLICY_KIND = 'vla-policy';

export function savePolicy(path: string, config: VlaConfigInput, params: ParamStore, meta: { provenance: ModelSidecar['provenance']; specHash: string }): Promise<ModelSidecar> {
  const c = parseVlaConfig(config);
  return saveModel(path, vlaForwardBuilder(c), params, { kind: POLICY_KIND, config: c, ...meta });
}

/** Loads a policy and checks its parameters against the network its config builds. */
export async function loadPolicy(path: string): Promise<LoadedModel & { config: VlaConfig }> {
  const m = await loadModel(path, POLICY_KIND);
  const config = parseVlaConfig(m.sidecar.config as VlaConfigInput);
  const g = new Graph(m.params.float);
  vlaForwardBuilder(config)(g);
  try {
    m.params.checkAgainst(g.params, `${path}: parameters`);
  } catch (err) {
    throw new InputError((err as Error).message);
  }
  return { ...m, config };
}
