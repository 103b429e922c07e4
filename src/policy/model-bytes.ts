// Policy files from bytes in memory: the checks shared with the file loader (model.ts). Browser-safe.
import { type LoadedModel, type ModelBytes, checkParamsBuilt, modelFromBytes } from '../nn/model-bytes.ts';
import { ParamStore } from '../nn/params.ts';
import { type VlaConfig, type VlaConfigInput, parseVlaConfig, vlaForwardBuilder } from './vla.ts';

export const POLICY_KIND = 'vla-policy';

export type LoadedPolicy = LoadedModel & { config: VlaConfig };

/** The value head that older policy files and BC checkpoints carry (no loss trained it, nothing read it):
 *  its parameters are dropped on load (a checkpoint's moments for them go unread) and its `valueHead`
 *  config key is ignored (parseVlaConfig strips unknown keys). No action head read it, so the policy's
 *  outputs are the same bit for bit. */
export const LEGACY_VALUE_HEAD: readonly string[] = ['vla.value.w', 'vla.value.b'];

/** `params` without the legacy value head's parameters (the same store when it has none). */
export function dropLegacyValueHead(params: ParamStore): ParamStore {
  if (!LEGACY_VALUE_HEAD.some((name) => params.has(name))) return params;
  const out = new ParamStore(params.float);
  for (const name of params.names) if (!LEGACY_VALUE_HEAD.includes(name)) out.add(params.info(name), params.get(name));
  return out;
}

/** Checks a loaded policy's parameters against the network its config builds; `path` is named in errors. */
export function checkPolicy(m: LoadedModel, path: string): LoadedPolicy {
  const config = parseVlaConfig(m.sidecar.config as VlaConfigInput);
  const params = dropLegacyValueHead(m.params);
  checkParamsBuilt(params, vlaForwardBuilder(config), path);
  return { ...m, params, config };
}

export function policyFromBytes(bytes: ModelBytes): LoadedPolicy {
  return checkPolicy(modelFromBytes(bytes, POLICY_KIND), bytes.name);
}
