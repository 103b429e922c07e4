// Save/load of world-model files (ONNX + sidecar with the normalisers). Node-only; the checks live in
// worldmodel-bytes.ts.
import { type ModelSidecar, type SaveModelOptions, loadModel, saveModel } from '../modelfile.ts';
import type { ParamStore } from '../params.ts';
import { type LoadedWorldModel, WORLD_MODEL_KIND, checkWorldModel, worldModelNormalizers } from './worldmodel-bytes.ts';
import { type WorldModelNetConfig, parseWorldModelConfig, worldModelForwardBuilder } from './worldmodel.ts';

export function saveWorldModel(
  path: string,
  config: WorldModelNetConfig,
  params: ParamStore,
  meta: Pick<SaveModelOptions, 'provenance' | 'specHash' | 'parts' | 'commit'>,
): Promise<ModelSidecar> {
  const c = parseWorldModelConfig(config);
  return saveModel(path, worldModelForwardBuilder(c), params, {
    kind: WORLD_MODEL_KIND,
    config: c,
    normalizers: worldModelNormalizers(params),
    ...meta,
  });
}

/** Loads and checks a world model (checkWorldModel). */
export async function loadWorldModel(path: string): Promise<LoadedWorldModel> {
  return checkWorldModel(await loadModel(path, WORLD_MODEL_KIND), path);
}
