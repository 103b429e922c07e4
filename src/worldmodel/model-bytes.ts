// World-model env models from bytes in memory: NAME.wm.json's schema (feature layout version, object
// names, the physics specs it was trained for, the training report) and the checks shared with the
// file loader (model-file.ts) that turn a loaded model into EnsembleDynamics for a scene and spec.
// Browser-safe.
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { EnvSpecSchema, type EnvSpec, formatZodError } from '../core/spec.ts';
import { type ModelBytes, checkParamsBuilt, parseJsonInput } from '../nn/model-bytes.ts';
import { type ParamStore, ParamRowsSchema, paramsFromRows } from '../nn/params.ts';
import { type LoadedWorldModel, worldModelFromBytes } from '../nn/nets/worldmodel-bytes.ts';
import { type WorldModelNetConfig, worldModelStepBuilder } from '../nn/nets/worldmodel.ts';
import type { RuntimeOptions } from '../nn/runtime.ts';
import type { Scene } from '../scene/schema.ts';
import { EnsembleDynamics } from './dynamics.ts';
import { assertSameModelSpec } from './env.ts';
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

/** A checked world-model file: its weights, NAME.wm.json and the network config. */
export interface WmModel {
  params: ParamStore;
  meta: WmMeta;
  netConfig: WorldModelNetConfig & { members: number };
}

const WM_META = 'world-model env metadata';

export function metaPath(onnxPath: string): string {
  return `${onnxPath.replace(/\.onnx$/, '')}.wm.json`;
}

/** The physical limits predicted states are kept inside (tool yaw +-pi/2 as physics clamps it). */
export function limitsFromScene(scene: Scene): StateLimits {
  const ws = scene.robot.workspace;
  const margin = 0.01; // the tool centre point may trail the clamped target slightly
  return {
    maxOpening: scene.robot.finger.maxOpening,
    yawLimit: Math.PI / 2,
    workspace: { min: ws.min.map((v) => v - margin), max: ws.max.map((v) => v + margin) },
    // tipBelow: the fingertips reach 15 mm below the tool centre point (physics/robot.ts TIP_BELOW_TCP)
    restGate: { speed: 0.01, radius: 0.12, tipBelow: 0.015, clearance: 0.01 },
    settleTol: 0.003,
    supportTol: 0.003,
    velocityFromDisplacement: scene.control.timestep * scene.control.substeps,
  };
}

/** NAME.wm.json of a loaded world model at `path`, checked by the sidecar's sha256. `unlisted` gives its
 *  text for models written before the sidecar listed its parts (read unchecked). */
export function wmModelFromLoaded(m: LoadedWorldModel, path: string, unlisted?: () => string): WmModel {
  const file = metaPath(path);
  const bytes = m.parts[file.replace(/^.*[/\\]/, '')];
  const text = bytes ? new TextDecoder().decode(bytes) : unlisted?.();
  if (text === undefined) throw new InputError(`${file}: ${WM_META} is missing (not listed in the sidecar's parts)`);
  const meta = parseJsonInput(text, WmMetaSchema, file, WM_META);
  if (meta.featureVersion !== FEATURE_VERSION)
    throw new InputError(
      `${file}: featureVersion ${meta.featureVersion}, this build reads ${FEATURE_VERSION} (retrain the model)`,
    );
  return { params: m.params, meta, netConfig: m.config as WorldModelNetConfig & { members: number } };
}

/** A world-model file from bytes (parts must hold NAME.wm.json). */
export function wmModelFromBytes(bytes: ModelBytes): WmModel {
  const name = metaPath(bytes.name).replace(/^.*[/\\]/, '');
  const unlisted = bytes.parts?.[name];
  return wmModelFromLoaded(
    worldModelFromBytes(bytes),
    bytes.name,
    unlisted && (() => new TextDecoder().decode(unlisted)),
  );
}

/** The model's dynamics for a scene and the physics spec of one task (which must equal the stored one);
 *  `path` is named in errors. */
export async function ensembleFromModel(
  model: WmModel,
  path: string,
  scene: Scene,
  spec: EnvSpec,
  runtime: RuntimeOptions = {},
): Promise<EnsembleDynamics> {
  const { meta } = model;
  const names = scene.objects.map((o) => o.name);
  if (meta.objects.join(',') !== names.join(','))
    throw new InputError(`${path}: trained on objects [${meta.objects}], the scene has [${names}]`);
  const stored = meta.specs[spec.id];
  if (!stored) throw new InputError(`${path}: not trained for ${spec.id} (has ${Object.keys(meta.specs).join(', ')})`);
  assertSameModelSpec(spec, stored, `${path}: stored spec`);
  return EnsembleDynamics.create(
    model.netConfig,
    model.params,
    stateLayout(scene.objects),
    limitsFromScene(scene),
    spec,
    runtime,
  );
}

const SnapshotSchema = z.strictObject({
  netConfig: z.record(z.string(), z.unknown()),
  meta: WmMetaSchema,
  float: z.enum(['float32', 'float64']),
  params: ParamRowsSchema,
});

/** A world model from OnlineWorldModel.snapshot() (a worker's copy); `what` is named in errors. */
export function wmModelFromSnapshot(value: unknown, what: string): WmModel {
  const parsed = SnapshotSchema.safeParse(value);
  if (!parsed.success) throw new InputError(formatZodError(parsed.error, `${what}: `));
  const v = parsed.data;
  const params = paramsFromRows(v.float, v.params, what);
  const netConfig = v.netConfig as unknown as WmModel['netConfig'];
  checkParamsBuilt(params, worldModelStepBuilder(netConfig), what);
  return { params, meta: v.meta, netConfig };
}
