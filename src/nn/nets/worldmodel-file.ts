// Save/load of world-model files (ONNX + sidecar with the normalisers). Node-only.
import { InputError } from '../../core/errors.ts';
import { Graph } from '../ir.ts';
import { type LoadedModel, type ModelSidecar, type SaveModelOptions, loadModel, saveModel } from '../modelfile.ts';
import type { ParamStore } from '../params.ts';
import { WM_NORM, type WorldModelNetConfig, parseWorldModelConfig, worldModelForwardBuilder } from './worldmodel.ts';

export const WORLD_MODEL_KIND = 'worldmodel';

function normalizers(params: ParamStore): NonNullable<ModelSidecar['normalizers']> {
  return {
    input: { mean: Array.from(params.get(WM_NORM.inMean)), std: Array.from(params.get(WM_NORM.inStd)) },
    target: { mean: Array.from(params.get(WM_NORM.outMean)), std: Array.from(params.get(WM_NORM.outStd)) },
  };
}

export function saveWorldModel(path: string, config: WorldModelNetConfig, params: ParamStore, meta: Pick<SaveModelOptions, 'provenance' | 'specHash' | 'parts' | 'commit'>): Promise<ModelSidecar> {
  const c = parseWorldModelConfig(config);
  return saveModel(path, worldModelForwardBuilder(c), params, { kind: WORLD_MODEL_KIND, config: c, normalizers: normalizers(params), ...meta });
}

/** Loads and checks a world model: parameter names/shapes against the network its config builds, and
 *  the sidecar normalisers against the stored initializers. */
export async function loadWorldModel(path: string): Promise<LoadedModel & { config: ReturnType<typeof parseWorldModelConfig> }> {
  const m = await loadModel(path, WORLD_MODEL_KIND);
  const config = parseWorldModelConfig(m.sidecar.config as WorldModelNetConfig);
  const g = new Graph(m.params.float);
  worldModelForwardBuilder(config)(g);
  try {
    m.params.checkAgainst(g.params, `${path}: parameters`);
  } catch (err) {
    throw new InputError((err as Error).message);
  }
  const want = normalizers(m.params);
  const have = m.sidecar.normalizers;
  for (const key of ['input', 'target'] as const) {
    const h = have?.[key];
    const w = want[key];
    // float32 values survive the JSON round trip exactly (JSON holds their float64 expansion).
    if (!h || h.mean.some((v, i) => v !== w.mean[i]) || h.std.some((v, i) => v !== w.std[i]) || h.mean.length !== w.mean.length) {
      throw new InputError(`${path}: sidecar normalizer "${key}" does not match the model's initializers`);
    }
  }
  return { ...m, config };
}
