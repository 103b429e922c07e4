// World-model network files from bytes in memory: the checks shared with the file loader
// (worldmodel-file.ts). Browser-safe.
import { InputError } from '../../core/errors.ts';
import {
  type LoadedModel,
  type ModelBytes,
  type ModelSidecar,
  checkParamsBuilt,
  modelFromBytes,
} from '../model-bytes.ts';
import type { ParamStore } from '../params.ts';
import { WM_NORM, type WorldModelNetConfig, parseWorldModelConfig, worldModelForwardBuilder } from './worldmodel.ts';

export const WORLD_MODEL_KIND = 'worldmodel';

export type LoadedWorldModel = LoadedModel & { config: ReturnType<typeof parseWorldModelConfig> };

/** The sidecar normalisers of a world model's parameters. */
export function worldModelNormalizers(params: ParamStore): NonNullable<ModelSidecar['normalizers']> {
  return {
    input: { mean: Array.from(params.get(WM_NORM.inMean)), std: Array.from(params.get(WM_NORM.inStd)) },
    target: { mean: Array.from(params.get(WM_NORM.outMean)), std: Array.from(params.get(WM_NORM.outStd)) },
  };
}

/** Checks a loaded world model: parameter names/shapes against the network its config builds, and
 *  the sidecar normalisers against the stored initializers. `path` is named in errors. */
export function checkWorldModel(m: LoadedModel, path: string): LoadedWorldModel {
  const config = parseWorldModelConfig(m.sidecar.config as WorldModelNetConfig);
  checkParamsBuilt(m.params, worldModelForwardBuilder(config), path);
  const want = worldModelNormalizers(m.params);
  const have = m.sidecar.normalizers;
  for (const key of ['input', 'target'] as const) {
    const h = have?.[key];
    const w = want[key];
    // float32 values survive the JSON round trip exactly (JSON holds their float64 expansion).
    if (
      !h ||
      h.mean.some((v, i) => v !== w.mean[i]) ||
      h.std.some((v, i) => v !== w.std[i]) ||
      h.mean.length !== w.mean.length
    ) {
      throw new InputError(`${path}: sidecar normalizer "${key}" does not match the model's initializers`);
    }
  }
  return { ...m, config };
}

export function worldModelFromBytes(bytes: ModelBytes): LoadedWorldModel {
  return checkWorldModel(modelFromBytes(bytes, WORLD_MODEL_KIND), bytes.name);
}
