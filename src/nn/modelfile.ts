// Model files: ONNX (inference graph, weights as initializers) + a JSON sidecar (zod schema) with io
// names and shapes, parameter list, network config (tokenizer, action bins ...), normalisers,
// provenance, the env spec hash and the sha256 of any extra part (e.g. a world model's NAME.wm.json).
// The .onnx, the sidecar and the extra parts are one commit (src/store): a reader sees all old or all
// new files. The paths stay flat (onnxruntime-web loads NAME.onnx unchanged). Node-only (fs); the checks
// live in model-bytes.ts (browser-safe), which loadModel calls.
import { basename, dirname } from 'node:path';
import { hashOf } from '../core/hash.ts';
import { readInputFile } from '../core/input-file.ts';
import { type CommitOptions, type Part, commitFiles, recoverFolder, sha256Hex } from '../store/index.ts';
import { DYN, Graph, type Tensor } from './ir.ts';
import {
  type LoadedModel,
  type ModelBytes,
  type ModelSidecar,
  ModelSidecarSchema,
  modelFromBytes,
  parseSidecar,
  siblingPath,
  sidecarPath,
} from './model-bytes.ts';
import { writeOnnx } from './onnx.ts';
import type { ParamStore } from './params.ts';

export { type LoadedModel, type ModelSidecar, sidecarPath } from './model-bytes.ts';

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

const io = (name: string, t: Tensor): ModelSidecar['inputs'][number] => ({
  name,
  dtype: t.dtype,
  shape: t.shape.map((d) => (d === DYN ? 'N' : d)),
});

/** Saves the inference graph built by `build` with `params` baked in, plus the sidecar.
 *  `path` ends in .onnx; the sidecar goes next to it as .json. */
export async function saveModel(
  path: string,
  build: (g: Graph) => Record<string, Tensor>,
  params: ParamStore,
  opts: SaveModelOptions,
): Promise<ModelSidecar> {
  if (!path.endsWith('.onnx')) throw new Error(`saveModel: path must end in .onnx, got ${path}`);
  const graph = new Graph(params.float);
  for (const [name, t] of Object.entries(build(graph))) graph.output(name, t);
  params.checkAgainst(graph.params);
  const bad = params.firstNonFinite();
  if (bad)
    throw new Error(`saveModel: refusing to write ${path}: parameter "${bad.name}" [${bad.index}] is ${bad.value}`);
  const extra = opts.parts ?? [];
  for (const p of extra)
    if (dirname(p.path) !== dirname(path)) throw new Error(`saveModel: part ${p.path} is not next to ${path}`);
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
  commitFiles(
    [{ path, data: bytes }, { path: sidecarPath(path), data: `${JSON.stringify(sidecar, null, 2)}\n` }, ...extra],
    opts.commit,
  );
  return sidecar;
}

/** A model's files read into memory (after rolling forward an interrupted commit). */
export function readModelFiles(path: string, kind?: string): ModelBytes {
  recoverFolder(dirname(path));
  const jsonPath = sidecarPath(path);
  const text = readInputFile(jsonPath, 'model sidecar').toString('utf8');
  const sidecar = parseSidecar(text, jsonPath, kind);
  const onnx = new Uint8Array(readInputFile(path, 'model file'));
  const parts = Object.fromEntries(
    Object.keys(sidecar.parts ?? {}).map((name) => [
      name,
      new Uint8Array(readInputFile(siblingPath(path, name), 'model part')),
    ]),
  );
  return { name: path, onnx, sidecar: text, parts };
}

/** Reads a model file, its sidecar and extra parts and checks them (modelFromBytes). */
export async function loadModel(path: string, kind?: string): Promise<LoadedModel> {
  return modelFromBytes(readModelFiles(path, kind), kind);
}
