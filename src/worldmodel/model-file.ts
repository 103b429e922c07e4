// World-model files: the ensemble ONNX + its sidecar (src/nn) plus NAME.wm.json (schema and checks in
// model-bytes.ts). The three files are one commit (src/store); the sidecar holds the sha256 of
// NAME.wm.json. Node-only.
import { basename } from 'node:path';
import { canonicalJson, type EnvSpec } from '../core/spec.ts';
import { hashOf } from '../core/hash.ts';
import { readInputFile } from '../core/input-file.ts';
import { sidecarPath } from '../nn/modelfile.ts';
import { loadWorldModel, saveWorldModel } from '../nn/nets/worldmodel-file.ts';
import { type CommitOptions, commitFiles, sha256Hex } from '../store/index.ts';
import type { WorldModelNetConfig } from '../nn/nets/worldmodel.ts';
import type { ParamStore } from '../nn/params.ts';
import type { RuntimeOptions } from '../nn/runtime.ts';
import type { Scene } from '../scene/schema.ts';
import type { EnsembleDynamics } from './dynamics.ts';
import { WorldModelEnv } from './env.ts';
import { FEATURE_VERSION } from './features.ts';
import {
  ensembleFromModel,
  metaPath,
  type WmMeta,
  WmMetaSchema,
  type WmModel,
  wmModelFromLoaded,
} from './model-bytes.ts';

export * from './model-bytes.ts';

const metaText = (meta: WmMeta) => `${JSON.stringify(meta, null, 2)}\n`;

export async function saveWmModel(
  path: string,
  config: WorldModelNetConfig,
  params: ParamStore,
  meta: Omit<WmMeta, 'format' | 'featureVersion'>,
  seed: number,
  steps: number,
  commit?: CommitOptions,
): Promise<void> {
  const full: WmMeta = { format: 'wmrl-worldmodel-env/1', featureVersion: FEATURE_VERSION, ...meta };
  WmMetaSchema.parse(full);
  const specHash = hashOf(canonicalJson(Object.values(full.specs).sort((a, b) => a.id.localeCompare(b.id))));
  const parts = [{ path: metaPath(path), data: metaText(full) }];
  await saveWorldModel(path, config, params, {
    provenance: { producer: 'wmrl wm train', seed, steps, notes: meta.command },
    specHash,
    parts,
    commit,
  });
}

export async function loadWmModel(path: string): Promise<WmModel> {
  const file = metaPath(path);
  return wmModelFromLoaded(await loadWorldModel(path), path, () =>
    readInputFile(file, 'world-model env metadata').toString('utf8'),
  );
}

/** Replaces NAME.wm.json of a saved model (e.g. a stored eval report): the sidecar's hash of it is
 *  updated in the same commit. */
export async function updateWmMeta(path: string, meta: WmMeta): Promise<void> {
  WmMetaSchema.parse(meta);
  const { sidecar } = await loadWorldModel(path);
  const text = metaText(meta);
  const next = { ...sidecar, parts: { ...sidecar.parts, [basename(metaPath(path))]: sha256Hex(text) } };
  commitFiles([
    { path: sidecarPath(path), data: `${JSON.stringify(next, null, 2)}\n` },
    { path: metaPath(path), data: text },
  ]);
}

export interface OpenWorldModelOptions {
  scene: Scene;
  /** The physics env's spec of the task to run (must equal the one the model stored). */
  spec: EnvSpec;
  numEnvs: number;
  sampling?: 'mean' | 'member';
  seed?: number;
  render?: boolean;
  /** The progress term (WorldModelEnvOptions.reward; default 'phi'). */
  reward?: 'phi' | 'shaped';
  /** onnxruntime intra-op threads of the ensemble session (default 1). */
  threads?: number;
}

/** Loads a world-model file and builds its dynamics for a scene and spec. */
export async function loadEnsembleDynamics(
  path: string,
  scene: Scene,
  spec: EnvSpec,
  runtime: RuntimeOptions = {},
): Promise<{ dynamics: EnsembleDynamics; meta: WmMeta; params: ParamStore }> {
  const model = await loadWmModel(path);
  return {
    dynamics: await ensembleFromModel(model, path, scene, spec, runtime),
    meta: model.meta,
    params: model.params,
  };
}

export async function openWorldModelEnv(path: string, o: OpenWorldModelOptions): Promise<WorldModelEnv> {
  const { dynamics } = await loadEnsembleDynamics(path, o.scene, o.spec, { threads: o.threads });
  return new WorldModelEnv({
    scene: o.scene,
    spec: o.spec,
    numEnvs: o.numEnvs,
    dynamics,
    sampling: o.sampling,
    seed: o.seed,
    render: o.render,
    reward: o.reward,
  });
}
