// Model files: ONNX (inference graph, weights as initializers) + a JSON sidecar (zod schema) with io
// names and shapes, parameter list, network config (tokenizer, action bins ...), normalisers,
// provenance and the env spec hash. Written atomically (temp file + rename). Node-only (fs).
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { z } from 'zod';
import { hashOf } from '../core/hash.ts';
import { readJsonFile, writeFileAtomic, writeJsonAtomic } from '../core/node-files.ts';
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
});
export type ModelSidecar = z.infer<typeof ModelSidecarSchema>;

export interface SaveModelOptions {
  kind: string;
  config: unknown;
  normalizers?: ModelSidecar['normalizers'];
  provenance: ModelSidecar['provenance'];
  specHash: string;
}

const io = (name: string, t: Tensor): z.infer<typeof IoSchema> => ({ name, dtype: t.dtype, shape: t.shape.map((d) => (d === DYN ? 'N' : d)) });

function sidecarPath(onnxPath: string): string {
  return onnxPath.replace(/\.onnx$/, '') + '.json';
}

/** Saves the inference graph built by `build` with `params` baked in, plus the sidecar.
 *  `path` ends in .onnx; the sidecar goes next to it as .json. */
export async function saveModel(path: string, build: (g: Graph) => Record<string, Tensor>, params: ParamStore, opts: SaveModelOptions): Promise<ModelSidecar> {
  if (!path.endsWith('.onnx')) throw new Error(`saveModel: path must end in .onnx, got ${path}`);
  const graph = new Graph(params.float);
  for (const [name, t] of Object.entries(build(graph))) graph.output(name, t);
  params.checkAgainst(graph.params);
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
  ModelSidecarSchema.parse(sidecar);
  writeFileAtomic(path, bytes);
  writeJsonAtomic(sidecarPath(path), sidecar);
  return sidecar;
}

export interface LoadedModel {
  sidecar: ModelSidecar;
  params: ParamStore;
  /** The ONNX bytes as stored. */
  model: Uint8Array;
}

/** Reads a model file and its sidecar; parameters come from the ONNX initializers, checked against the
 *  sidecar's list (an error names every missing, unexpected or wrongly shaped one). */
export async function loadModel(path: string, kind?: string): Promise<LoadedModel> {
  const jsonPath = sidecarPath(path);
  const sidecar = readJsonFile(jsonPath, ModelSidecarSchema, 'model sidecar');
  if (kind && sidecar.kind !== kind) throw new Error(`loadModel: ${jsonPath} holds a "${sidecar.kind}" model, expected "${kind}"`);
  const model = new Uint8Array(await readFile(path));
  if (hashOf(model) !== sidecar.onnxHash) throw new Error(`loadModel: ${path} does not match the hash in its sidecar (file changed?)`);
  const summary = readOnnx(model);
  const params = new ParamStore(sidecar.float);
  const problems: string[] = [];
  for (const p of sidecar.params) {
    const init = summary.initializers.get(p.name);
    if (!init) problems.push(`missing initializer "${p.name}"`);
    else if (init.shape.length !== p.shape.length || init.shape.some((d, i) => d !== p.shape[i])) problems.push(`"${p.name}" has shape [${init.shape}], sidecar says [${p.shape}]`);
    else if (init.dtype !== sidecar.float) problems.push(`"${p.name}" is ${init.dtype}, sidecar says ${sidecar.float}`);
    else params.add(p, (init.data as Float32Array).slice());
  }
  if (problems.length) throw new Error(`loadModel: ${path}: ${problems.join('; ')}`);
  return { sidecar, params, model };
}
