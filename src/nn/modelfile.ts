// Model files: ONNX (inference graph, weights as initializers) + a JSON sidecar (zod schema) with io
// names and shapes, parameter list, network config (tokenizer, action bins ...), normalisers,
// provenance, the env spec hash and the sha256 of any extra part (e.g. a world model's NAME.wm.json).
// The .onnx, the sidecar and the extra parts are one commit (src/store): a reader sees all old or all
// new files. The paths stay flat (onnxruntime-web loads NAME.onnx unchanged). Node-only (fs).
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { hashOf } from '../core/hash.ts';
import { readInputFile, readInputJson } from '../core/input-file.ts';
import { type CommitOptions, type Part, commitFiles, recoverFolder, sha256Hex } from '../store/index.ts';
import { DYN, Graph, type Tensor } from './ir.ts';
import { readOnnx, writeOnnx } from './onnx.ts';
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
  params: z.array(z.object({ name: z.string(), shape: z.array(z.number().int().positive()), trainable: z.boolean(), decay: z.boolean() })),
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

export interface SaveModelOptions {
  kind: string;
  config: unknown;
  normalizers?: ModelSidecar['normalizers'];
  provenance: ModelSidecar['provenance'];
  specHash: string;
  /** Extra files (same folder) committed with the model and hashed in the sidecar. */
  parts?: Part[];
  /** Test hook: a simulated crash at a write boundary (src/store). */
  commit?: CommitOptions;
}

const io = (name: string, t: Tensor): z.infer<typeof IoSchema> => ({ name, dtype: t.dtype, shape: t.shape.map((d) => (d === DYN ? 'N' : d)) });

export function sidecarPath(onnxPath: string): string {
  return onnxPath.replace(/\.onnx$/, '') + '.json';
}

/** Saves the inference graph built by `build` with `params` baked in, plus the sidecar.
 *  `path` ends in .onnx; the sidecar goes next to it as .json. */
export async function saveModel(path: string, build: (g: Graph) => Record<string, Tensor>, params: ParamStore, opts: SaveModelOptions): Promise<ModelSidecar> {
  if (!path.endsWith('.onnx')) throw new Error(`saveModel: path must end in .onnx, got ${path}`);
  const graph = new Graph(params.float);
  for (const [name, t] of Object.entries(build(graph))) graph.output(name, t);
  params.checkAgainst(graph.params);
  const bad = params.firstNonFinite();
  if (bad) throw new Error(`saveModel: refusing to write ${path}: parameter "${bad.name}" [${bad.index}] is ${bad.value}`);
  const extra = opts.parts ?? [];
  for (const p of extra) if (dirname(p.path) !== dirname(path)) throw new Error(`saveModel: part ${p.path} is not next to ${path}`);
  const bytes = writeOnnx(graph, { initializers: params.asMap(), producer: 'wmrl', metadata: { kind: opts.kind } });
  const sidecar: ModelSidecar = {
    format: 'wmrl-model/1',
    kind: opts.kind,
    onnx: basename(path),
    onnxHash: hashOf(bytes),
    float: params.float,
    inputs: graph.inputs.map((t) => io(t.name, t)),
    outputs: graph.outputs.map((o) => io(o.name, o.tensor)),
    params: graph.params.map((p) => ({ name: p.name, shape: [...p.shape], trainable: p.trainable, decay: p.decay })),
    config: opts.config,
    normalizers: opts.normalizers,
    provenance: opts.provenance,
    specHash: opts.specHash,
  };
  if (extra.length) sidecar.parts = Object.fromEntries(extra.map((p) => [basename(p.path), sha256Hex(p.data)]));
  ModelSidecarSchema.parse(sidecar);
  commitFiles([{ path, data: bytes }, { path: sidecarPath(path), data: `${JSON.stringify(sidecar, null, 2)}\n` }, ...extra], opts.commit);
  return sidecar;
}

export interface LoadedModel {
  sidecar: ModelSidecar;
  params: ParamStore;
  /** The ONNX bytes as stored. */
  model: Uint8Array;
  /** The extra parts named by the sidecar, by file name, checked against their sha256. */
  parts: Record<string, Uint8Array>;
}

/** Reads a model file and its sidecar (after rolling forward an interrupted commit); parameters come
 *  from the ONNX initializers, checked against the sidecar's list. Every problem with the files is an
 *  InputError naming the file (missing, unexpected or wrongly shaped parameters, hashes, NaN weights). */
export async function loadModel(path: string, kind?: string): Promise<LoadedModel> {
  recoverFolder(dirname(path));
  const jsonPath = sidecarPath(path);
  const sidecar = readInputJson(jsonPath, ModelSidecarSchema, 'model sidecar');
  if (kind && sidecar.kind !== kind) throw new InputError(`${jsonPath}: kind: holds a "${sidecar.kind}" model, expected "${kind}"`);
  const model = new Uint8Array(readInputFile(path, 'model file'));
  if (hashOf(model) !== sidecar.onnxHash) throw new InputError(`${path}: does not match onnxHash in ${jsonPath} (file changed?)`);
  const parts: Record<string, Uint8Array> = {};
  for (const [name, sha] of Object.entries(sidecar.parts ?? {})) {
    const file = join(dirname(path), name);
    const bytes = new Uint8Array(readInputFile(file, 'model part'));
    if (sha256Hex(bytes) !== sha) throw new InputError(`${file}: does not match parts["${name}"] in ${jsonPath} (file changed?)`);
    parts[name] = bytes;
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
    else if (init.shape.length !== p.shape.length || init.shape.some((d, i) => d !== p.shape[i])) problems.push(`"${p.name}" has shape [${init.shape}], sidecar says [${p.shape}]`);
    else if (init.dtype !== sidecar.float) problems.push(`"${p.name}" is ${init.dtype}, sidecar says ${sidecar.float}`);
    else params.add(p, (init.data as Float32Array).slice());
  }
  if (problems.length) throw new InputError(`${path}: ${problems.join('; ')}`);
  const bad = params.firstNonFinite();
  if (bad) throw new InputError(`${path}: parameter "${bad.name}" [${bad.index}] is ${bad.value}`);
  return { sidecar, params, model, parts };
}
