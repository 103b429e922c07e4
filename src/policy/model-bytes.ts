// Policy files from bytes in memory: the checks shared with the file loader (model.ts). Browser-safe.
import { type LoadedModel, type ModelBytes, checkParamsBuilt, modelFromBytes } from '../nn/model-bytes.ts';
import { type VlaConfig, type VlaConfigInput, parseVlaConfig, vlaForwardBuilder } from './vla.ts';

export const POLICY_KIND = 'vla-policy';

export type LoadedPolicy = LoadedModel & { config: VlaConfig };

/** Checks a loaded policy's parameters against the network its config builds; `path` is named in errors. */
export function checkPolicy(m: LoadedModel, path: string): LoadedPolicy {
  const config = parseVlaConfig(m.sidecar.config as VlaConfigInput);
  checkParamsBuilt(m.params, vlaForwardBuilder(config), path);
  return { ...m, config };
}

export function policyFromBytes(bytes: ModelBytes): LoadedPolicy {
  return checkPolicy(modelFromBytes(bytes, POLICY_KIND), bytes.name);
}
