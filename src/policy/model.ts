// Save/load of policy files (ONNX sampler graph with weights + sidecar with the VLA config, which holds
// the tokenizer vocabulary and the action bins). Node-only; the checks live in model-bytes.ts.
import { type ModelSidecar, loadModel, saveModel } from '../nn/modelfile.ts';
import type { ParamStore } from '../nn/params.ts';
import { type LoadedPolicy, POLICY_KIND, checkPolicy } from './model-bytes.ts';
import { type VlaConfigInput, parseVlaConfig, vlaForwardBuilder } from './vla.ts';

export function savePolicy(
  path: string,
  config: VlaConfigInput,
  params: ParamStore,
  meta: { provenance: ModelSidecar['provenance']; specHash: string },
): Promise<ModelSidecar> {
  const c = parseVlaConfig(config);
  return saveModel(path, vlaForwardBuilder(c), params, { kind: POLICY_KIND, config: c, ...meta });
}

/** Loads a policy and checks its parameters against the network its config builds. */
export async function loadPolicy(path: string): Promise<LoadedPolicy> {
  return checkPolicy(await loadModel(path, POLICY_KIND), path);
}
