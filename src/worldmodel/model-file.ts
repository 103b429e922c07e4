// World-model files: the ensemble ONNX + its sidecar (src/nn) plus NAME.wm.json with what the env
// needs besides weights: the feature layout version, the object names, the physics specs it was trained
// for (a WorldModelEnv refuses a spec that differs) and the training report. The three files are one
// commit (src/store); the sidecar holds the sha256 of NAME.wm.json. Node-only.
import { basename } from 'node:path';
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { canonicalJson, EnvSpecSchema, type EnvSpec } from '../core/spec.ts';
import { hashOf } from '../core/hash.ts';
import { parseInput, parseInputJsonText, readInputJson } from '../core/input-file.ts';
import { sidecarPath } from '../nn/modelfile.ts';
import { loadWorldModel, saveWorldModel } from '../nn/nets/worldmodel-file.ts';
import { type CommitOptions, commitFiles, sha256Hex } from '../store/index.ts';
import type { WorldModelNetConfig } from '../nn/nets/worldmodel.ts';
import type { ParamStore } from '../nn/params.ts';
import type { RuntimeOptions } from '../nn/runtime.ts';
import type { Scene } from '../scene/schema.ts';
import { EnsembleDynamics } from './dynamics.ts';
import { assertSameSpec, WorldModelEnv } from './env.ts';
import { FEATURE_VERSION, stateLayout, type StateLimits } from './features.ts';

export const WmMetaSchema = z.object({
  format: z.literal('wmrl-worldmodel-env/1'),
  featureVersion: z.number().int(),
  objects: z.array(z.string()),
  specs: z.record(z.string(), EnvSpecSchema),
  command: z.string(),
  report: z.unknown().optional(),
});
export type WmMeta = z.infer<typeof WmMetaSchema>;

export function metaPath(onnxPath: string): string {
  return onnxPath.replace(/\.onnx$/, '') + '.wm.json';
}

/** The physical limits predicted states are kept inside (tool yaw +-pi/2 as physics clamps it). */
export function limitsFromScene(scene: Scene): StateLimits {
  const ws = scene.robot.workspace;
  const margin = 0.01; // the tool centre point may trail the clamped target slightly
  return {
    maxOpening: scene.robot.finger.maxOpening, yawLimit: Math.PI / 2,
    workspace: { min: ws.min.map((v) => v - margin), max: ws.max.map((v) => v + margin) },
    // tipBelow: the fingertips reach 15 mm below the tool centre point (physics/robot.ts TIP_BELOW_TCP)
    restGate: { speed: 0.01, radius: 0.12, tipBelow: 0.015, clearance: 0.01 },
    settleTol: 0.003,
    velocityFromDisplacement: scene.control.timestep * scene.control.substeps,
  };
}

const metaText = (meta: WmMeta) => `${JSON.stringify(meta, null, 2)}\n`;

export async function saveWmModel(path: string, config: WorldModelNetConfig, params: ParamStore, meta: Omit<WmMeta, 'format' | 'featureVersion'>, seed: number, steps: number, commit?: CommitOptions): Promise<void> {
  const full: WmMeta = { format: 'wmrl-worldmodel-env/1', featureVersion: FEATURE_VERSION, ...meta };
  WmMetaSchema.parse(full);
  const specHash = hashOf(canonicalJson(Object.values(full.specs).sort((a, b) => a.id.localeCompare(b.id))));
  const parts = [{ path: metaPath(path), data: metaText(full) }];
  await saveWorldModel(path, config, params, { provenance: { producer: 'wmrl wm train', seed, steps, notes: meta.command }, specHash, parts, commit });
}

export async function loadWmModel(path: string): Promise<{ params: ParamStore; meta: WmMeta; netConfig: WorldModelNetConfig & { members: number } }> {
  const m = await loadWorldModel(path);
  const file = metaPath(path);
  const bytes = m.parts[basename(file)];
  // Models written before the sidecar listed its parts read NAME.wm.json unchecked.
  const what = 'world-model env metadata';
  const meta = bytes ? parseInput(parseInputJsonText(file, new TextDecoder().decode(bytes), what), WmMetaSchema, file) : readInputJson(file, WmMetaSchema, what);
  if (meta.featureVersion !== FEATURE_VERSION) throw new InputError(`${file}: featureVersion ${meta.featureVersion}, this build reads ${FEATURE_VERSION} (retrain the model)`);
  return { params: m.params, meta, netConfig: m.config as WorldModelNetConfig & { members: number } };
}

/** Replaces NAME.wm.json of a saved model (e.g. a stored eval report): the sidecar's hash of it is
 *  updated in the same commit. */
export async function updateWmMeta(path: string, meta: WmMeta): Promise<void> {
  WmMetaSchema.parse(meta);
  const { sidecar } = await loadWorldModel(path);
  const text = metaText(meta);
  const next = { ...sidecar, parts: { ...sidecar.parts, [basename(metaPath(path))]: sha256Hex(text) } };
  commitFiles([{ path: sidecarPath(path), data: `${JSON.stringify(next, null, 2)}\n` }, { path: metaPath(path), data: text }]);
}

export interface OpenWorldModelOptions {
  scene: Scene;
  /** The physics env's spec of the task to run (must equal the one the model stored). */
  spec: EnvSpec;
  numEnvs: number;
  sampling?: 'mean' | 'member';
  seed?: number;
  render?: boolean;
  /** onnxruntime intra-op threads of the ensemble session (default 1). */
  threads?: number;
}

/** Loads a world-model file and builds its dynamics for a scene and spec. */
export async function loadEnsembleDynamics(path: string, scene: Scene, spec: EnvSpec, runtime: RuntimeOptions = {}): Promise<{ dynamics: EnsembleDynamics; meta: WmMeta; params: ParamStore }> {
  const { params, meta, netConfig } = await loadWmModel(path);
  const names = scene.objects.map((o) => o.name);
  if (meta.objects.join(',') !== names.join(',')) throw new InputError(`${path}: trained on objects [${meta.objects}], the scene has [${names}]`);
  const stored = meta.specs[spec.id];
  if (!stored) throw new InputError(`${path}: not trained for ${spec.id} (has ${Object.keys(meta.specs).join(', ')})`);
  assertSameSpec(spec, stored, `${path}: stored spec`);
  const dynamics = await EnsembleDynamics.create(netConfig, params, stateLayout(scene.objects), limitsFromScene(scene), spec, runtime);
  return { dynamics, meta, params };
}

export async function openWorldModelEnv(path: string, o: OpenWorldModelOptions): Promise<WorldModelEnv> {
  const { dynamics } = await loadEnsembleDynamics(path, o.scene, o.spec, { threads: o.threads });
  return new WorldModelEnv({ scene: o.scene, spec: o.spec, numEnvs: o.numEnvs, dynamics, sampling: o.sampling, seed: o.seed, render: o.render });
}
