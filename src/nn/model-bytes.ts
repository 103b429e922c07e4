// Model files as bytes in memory: the sidecar schema and the one loader that checks and unpacks them
// (hashes, parameter list against the ONNX initializers, NaN weights). modelfile.ts reads the files
// and calls it; a browser passes fetched bytes. Browser-safe.
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { hashOf } from '../core/hash.ts';
import { sha256Hex } from '../core/sha256.ts';
import { formatZodError } from '../core/spec.ts';
import { Graph, type Tensor } from './ir.ts';
import { readOnnx } from './onnx.ts';
import { ParamStore } from './params.ts';

const IoSchema = z.object({
  name: z.string(),
  dtype: z.enum(['float32', 'float64', 'int32', 'int64', 'bool', 'uint8']),
  /** 'N' marks the dynamic batch dimension. */
  shape: z.array(z.union([z.number().int().positive(), z.literal('N')])),
});

export const ModelSidecarSchema = z.object({
  format: z.literal('wmrl-model/1'),
  kind: z.string().min(1),
  onnx: z.string().min(1),
  onnxHash: z.string().regex(/^[0-9a-f]{16}$/),
  float: z.enum(['float32', 'float64']),
  inputs: z.array(IoSchema),
  outputs: z.array(IoSchema),
  params: z.array(
    z.object({
      name: z.string(),
      shape: z.array(z.number().int().positive()),
      trainable: z.boolean(),
      decay: z.boolean(),
    }),
  ),
  /** The network's own config (validated by its builder's schema on load). */
  config: z.unknown(),
  normalizers: z.record(z.string(), z.object({ mean: z.array(z.number()), std: z.array(z.number()) })).optional(),
  provenance: z.object({
    producer: z.string(),
    seed: z.number().int(),
    steps: z.number().int().min(0).optional(),
    notes: z.string().optional(),
  }),
  /** Hash of the env spec the model was made for (canonical JSON). */
  specHash: z.string(),
  /** sha256 of every extra part committed with the model, by file name (same folder). */
  parts: z.record(z.string(), z.string().regex(/^[0-9a-f]{64}$/)).optional(),
});
export type ModelSidecar = z.infer<typeof ModelSidecarSchema>;

export interface LoadedModel {
  sidecar: ModelSidecar;
  params: ParamStore;
  /** The ONNX bytes as stored. */
  model: Uint8Array;
  /** The extra parts named by the sidecar, by file name, checked against their sha256. */
  parts: Record<string, Uint8Array>;
}

/** A model's files in memory. */
export interface ModelBytes {
  /** The .onnx path or URL, named in error messages (the sidecar and parts are its siblings). */
  name: string;
  onnx: Uint8Array;
  /** The sidecar's JSON text (NAME.json). */
  sidecar: string;
  /** Extra parts by file name (e.g. NAME.wm.json); every part the sidecar lists must be here. */
  parts?: Record<string, Uint8Array>;
}

export function sidecarPath(onnxPath: string): string {
  return `${onnxPath.replace(/\.onnx$/, '')}.json`;
}

/** The path of a sibling file `file` of `onnxPath` (same folder; '/' or '\' separated). */
export function siblingPath(onnxPath: string, file: string): string {
  return onnxPath.replace(/[^/\\]*$/, '') + file;
}

/** JSON text of file `path` (`what` it holds) validated by `schema`, with the messages of
 *  core/input-file.ts: an InputError naming the file and every bad field. */
export function parseJsonInput<T extends z.ZodType>(text: string, schema: T, path: string, what: string): z.infer<T> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new InputError(`${path}: ${what} is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new InputError(formatZodError(parsed.error, `${path}: `));
  return parsed.data;
}

/** A sidecar from its JSON text, validated (and of `kind` when given). */
export function parseSidecar(text: string, path: string, kind?: string): ModelSidecar {
  const sidecar = parseJsonInput(text, ModelSidecarSchema, path, 'model sidecar');
  if (kind && sidecar.kind !== kind)
    throw new InputError(`${path}: kind: holds a "${sidecar.kind}" model, expected "${kind}"`);
  return sidecar;
}

/** Checks a model's bytes and unpacks its parameters (from the ONNX initializers, checked against the
 *  sidecar's list). Every problem is an InputError naming the file (missing, unexpected or wrongly
 *  shaped parameters, hashes, NaN weights). */
export function modelFromBytes(bytes: ModelBytes, kind?: string): LoadedModel {
  const path = bytes.name;
  const jsonPath = sidecarPath(path);
  const sidecar = parseSidecar(bytes.sidecar, jsonPath, kind);
  const model = bytes.onnx;
  if (hashOf(model) !== sidecar.onnxHash)
    throw new InputError(`${path}: does not match onnxHash in ${jsonPath} (file changed?)`);
  const parts: Record<string, Uint8Array> = {};
  for (const [name, sha] of Object.entries(sidecar.parts ?? {})) {
    const file = siblingPath(path, name);
    const part = bytes.parts?.[name];
    if (!part) throw new InputError(`${file}: model part listed in ${jsonPath} is missing`);
    if (sha256Hex(part) !== sha)
      throw new InputError(`${file}: does not match parts["${name}"] in ${jsonPath} (file changed?)`);
    parts[name] = part;
  }
  let summary: ReturnType<typeof readOnnx>;
  try {
    summary = readOnnx(model);
  } catch (err) {
    throw new InputError(`${path}: not a readable ONNX model: ${(err as Error).message}`);
  }
  const params = new ParamStore(sidecar.float);
  const problems: string[] = [];
  for (const p of sidecar.params) {
    const init = summary.initializers.get(p.name);
    if (!init) problems.push(`missing initializer "${p.name}"`);
    else if (init.shape.length !== p.shape.length || init.shape.some((d, i) => d !== p.shape[i]))
      problems.push(`"${p.name}" has shape [${init.shape}], sidecar says [${p.shape}]`);
    else if (init.dtype !== sidecar.float) problems.push(`"${p.name}" is ${init.dtype}, sidecar says ${sidecar.float}`);
    else params.add(p, (init.data as Float32Array).slice());
  }
  if (problems.length) throw new InputError(`${path}: ${problems.join('; ')}`);
  const bad = params.firstNonFinite();
  if (bad) throw new InputError(`${path}: parameter "${bad.name}" [${bad.index}] is ${bad.value}`);
  return { sidecar, params, model, parts };
}

/** Throws an InputError (naming `path`) unless `params` match what `build` declares, name by name. */
export function checkParamsBuilt(params: ParamStore, build: (g: Graph) => Record<string, Tensor>, path: string): void {
  const g = new Graph(params.float);
  build(g);
  try {
    params.checkAgainst(g.params, `${path}: parameters`);
  } catch (err) {
    throw new InputError((err as Error).message);
  }
}
