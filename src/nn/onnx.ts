// ONNX writer (opset 18, default domain only) and a reader for initializers and graph signatures.
// Browser-safe.
import {
  type Attr,
  type ConstData,
  DTYPE_OF_ONNX,
  DYN,
  type DType,
  type Graph,
  ONNX_DTYPE,
  type Tensor,
  type TypedArray,
  typedCtor,
} from './ir.ts';
import { ProtoWriter, readFields, readPackedInts, utf8 } from './proto.ts';

export const OPSET = 18;
export const IR_VERSION = 8;
/** Name written for the dynamic (batch) dimension. */
export const DYN_DIM_NAME = 'N';

export interface WriteOptions {
  /** Parameter values baked in as initializers; parameters without a value become graph inputs. */
  initializers?: ReadonlyMap<string, TypedArray>;
  producer?: string;
  graphName?: string;
  metadata?: Record<string, string>;
}

function bytesOf(data: TypedArray): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

export function tensorProto(name: string, value: ConstData): ProtoWriter {
  const w = new ProtoWriter();
  if (value.shape.length) w.packedInts(1, value.shape);
  w.int(2, ONNX_DTYPE[value.dtype]).string(8, name);
  return w.bytes(9, bytesOf(value.data));
}

export function valueInfo(name: string, dtype: DType, shape: readonly number[]): ProtoWriter {
  const dims = new ProtoWriter();
  for (const d of shape)
    dims.message(1, d === DYN ? new ProtoWriter().string(2, DYN_DIM_NAME) : new ProtoWriter().int(1, d));
  const tensorType = new ProtoWriter().int(1, ONNX_DTYPE[dtype]).message(2, dims);
  return new ProtoWriter().string(1, name).message(2, new ProtoWriter().message(1, tensorType));
}

export function attribute(name: string, a: Attr): ProtoWriter {
  const w = new ProtoWriter().string(1, name);
  if ('i' in a) return w.int(20, 2).int(3, a.i);
  if ('f' in a) return w.int(20, 1).float(2, a.f);
  if ('s' in a) return w.int(20, 3).string(4, a.s);
  if ('ints' in a) return w.int(20, 7).packedInts(8, a.ints);
  return w.int(20, 4).message(5, tensorProto('', a.t));
}

/** Nodes needed by the graph outputs, in creation (topological) order. */
function liveNodes(graph: Graph): Set<number> {
  const live = new Set<number>();
  const stack = graph.outputs.map((o) => o.tensor);
  while (stack.length) {
    const t = stack.pop()!;
    if (t.source.kind !== 'node' || live.has(t.source.node.id)) continue;
    live.add(t.source.node.id);
    stack.push(...t.source.node.inputs);
  }
  return live;
}

/** Serialises the part of `graph` its outputs need as an ONNX ModelProto. */
export function writeOnnx(graph: Graph, options: WriteOptions = {}): Uint8Array {
  if (graph.outputs.length === 0) throw new Error('writeOnnx: graph has no outputs');
  const live = liveNodes(graph);
  const nodes = graph.nodes.filter((n) => live.has(n.id));
  const used = new Map<number, Tensor>();
  for (const n of nodes) for (const t of n.inputs) used.set(t.id, t);
  for (const o of graph.outputs) used.set(o.tensor.id, o.tensor);

  // Graph outputs rename the node value that produces them; other cases get an Identity.
  const rename = new Map<number, string>();
  const extra: ProtoWriter[] = [];
  for (const { name, tensor } of graph.outputs) {
    if (tensor.source.kind === 'node' && !rename.has(tensor.id)) rename.set(tensor.id, name);
    else
      extra.push(
        new ProtoWriter()
          .string(1, rename.get(tensor.id) ?? tensor.name)
          .string(2, name)
          .string(4, 'Identity'),
      );
  }
  const vname = (t: Tensor): string => rename.get(t.id) ?? t.name;

  const g = new ProtoWriter();
  for (const n of nodes) {
    const w = new ProtoWriter();
    for (const t of n.inputs) w.string(1, vname(t));
    for (const t of n.outputs) w.string(2, vname(t));
    w.string(3, `${n.op}_${n.id}`).string(4, n.op);
    for (const [k, a] of Object.entries(n.attrs)) w.message(5, attribute(k, a));
    g.message(1, w);
  }
  for (const w of extra) g.message(1, w);
  g.string(2, options.graphName ?? 'wmrl');

  const inits = options.initializers ?? new Map<string, TypedArray>();
  for (const t of used.values()) {
    if (t.source.kind === 'const') g.message(5, tensorProto(t.name, t.source.value));
  }
  for (const p of graph.params) {
    const data = inits.get(p.name);
    if (!used.has(p.tensor.id) || !data) continue;
    if (data.length !== p.tensor.size)
      throw new Error(
        `writeOnnx: parameter ${p.name} has ${data.length} values, shape [${p.shape}] needs ${p.tensor.size}`,
      );
    if (!(data instanceof typedCtor(p.tensor.dtype)))
      throw new Error(`writeOnnx: parameter ${p.name} is not ${p.tensor.dtype}`);
    g.message(5, tensorProto(p.name, { dtype: p.tensor.dtype, shape: p.shape, data }));
  }
  for (const t of graph.inputs) if (used.has(t.id)) g.message(11, valueInfo(t.name, t.dtype, t.shape));
  for (const p of graph.params) {
    if (used.has(p.tensor.id) && !inits.has(p.name)) g.message(11, valueInfo(p.name, p.tensor.dtype, p.shape));
  }
  for (const { name, tensor } of graph.outputs) g.message(12, valueInfo(name, tensor.dtype, tensor.shape));

  const m = new ProtoWriter().int(1, IR_VERSION).string(2, options.producer ?? 'wmrl-nn');
  m.message(7, g).message(8, new ProtoWriter().string(1, '').int(2, OPSET));
  for (const [key, value] of Object.entries(options.metadata ?? {})) {
    m.message(14, new ProtoWriter().string(1, key).string(2, value));
  }
  return m.finish();
}

export interface OnnxValueInfo {
  name: string;
  dtype: DType | 'unknown';
  /** -1 for symbolic dimensions. */
  shape: number[];
}

export interface OnnxSummary {
  opset: number;
  inputs: OnnxValueInfo[];
  outputs: OnnxValueInfo[];
  initializers: Map<string, ConstData>;
  ops: string[];
  metadata: Record<string, string>;
}

function readTensor(bytes: Uint8Array): { name: string; value: ConstData } {
  let name = '';
  let dims: number[] = [];
  let code = 0;
  let raw: Uint8Array | null = null;
  const floats: number[] = [];
  for (const f of readFields(bytes)) {
    if (f.field === 1) dims = dims.concat(readPackedInts(f));
    else if (f.field === 2) code = f.int;
    else if (f.field === 8) name = utf8(f.bytes);
    else if (f.field === 9) raw = f.bytes;
    else if (f.field === 4 && f.wire === 2) {
      const v = new DataView(f.bytes.buffer, f.bytes.byteOffset, f.bytes.byteLength);
      for (let i = 0; i < f.bytes.length; i += 4) floats.push(v.getFloat32(i, true));
    } else if (f.field === 10 && f.wire === 2) {
      const v = new DataView(f.bytes.buffer, f.bytes.byteOffset, f.bytes.byteLength);
      for (let i = 0; i < f.bytes.length; i += 8) floats.push(v.getFloat64(i, true));
    } else if ((f.field === 5 || f.field === 7) && (f.wire === 2 || f.wire === 0)) floats.push(...readPackedInts(f));
  }
  const dtype = DTYPE_OF_ONNX[code];
  if (!dtype) throw new Error(`ONNX initializer ${name}: unsupported data type ${code}`);
  const Ctor = typedCtor(dtype) as unknown as { new (b: ArrayBuffer): TypedArray; BYTES_PER_ELEMENT: number };
  let data: TypedArray;
  if (raw) data = new Ctor(raw.slice().buffer);
  else if (dtype === 'int64') data = BigInt64Array.from(floats.map((x) => BigInt(x)));
  else {
    data = new (typedCtor(dtype))(floats.length);
    (data as Float64Array).set(floats);
  }
  return { name, value: { dtype, shape: dims, data } };
}

function readValueInfo(bytes: Uint8Array): OnnxValueInfo {
  const info: OnnxValueInfo = { name: '', dtype: 'unknown', shape: [] };
  for (const f of readFields(bytes)) {
    if (f.field === 1) info.name = utf8(f.bytes);
    if (f.field !== 2) continue;
    const tensorType = readFields(f.bytes).find((x) => x.field === 1);
    for (const tf of tensorType ? readFields(tensorType.bytes) : []) {
      if (tf.field === 1) info.dtype = DTYPE_OF_ONNX[tf.int] ?? 'unknown';
      if (tf.field !== 2) continue;
      for (const dim of readFields(tf.bytes)) {
        const v = readFields(dim.bytes).find((x) => x.field === 1);
        info.shape.push(v ? v.int : -1);
      }
    }
  }
  return info;
}

/** Reads the signature, initializers, op types and metadata of an ONNX model. */
export function readOnnx(model: Uint8Array): OnnxSummary {
  const out: OnnxSummary = { opset: 0, inputs: [], outputs: [], initializers: new Map(), ops: [], metadata: {} };
  let graph: Uint8Array | null = null;
  for (const f of readFields(model)) {
    if (f.field === 7) graph = f.bytes;
    else if (f.field === 8) {
      const fs = readFields(f.bytes);
      const domain = fs.find((x) => x.field === 1);
      if (!domain || domain.bytes.length === 0) out.opset = fs.find((x) => x.field === 2)?.int ?? 0;
    } else if (f.field === 14) {
      const fs = readFields(f.bytes);
      out.metadata[utf8(fs.find((x) => x.field === 1)?.bytes ?? new Uint8Array())] = utf8(
        fs.find((x) => x.field === 2)?.bytes ?? new Uint8Array(),
      );
    }
  }
  if (!graph) throw new Error('ONNX model has no graph');
  for (const f of readFields(graph)) {
    if (f.field === 5) {
      const { name, value } = readTensor(f.bytes);
      out.initializers.set(name, value);
    } else if (f.field === 11) out.inputs.push(readValueInfo(f.bytes));
    else if (f.field === 12) out.outputs.push(readValueInfo(f.bytes));
    else if (f.field === 1) {
      const op = readFields(f.bytes).find((x) => x.field === 4);
      if (op) out.ops.push(utf8(op.bytes));
    }
  }
  return out;
}
