// The graph IR: tensors with static dtypes and shapes (dimension -1 = the dynamic batch size),
// nodes that map 1:1 to standard ONNX operators, named graph inputs, named parameters and outputs.
// Browser-safe.

export type DType = 'float32' | 'float64' | 'int32' | 'int64' | 'bool' | 'uint8';
export type FloatType = 'float32' | 'float64';
export type TypedArray = Float32Array | Float64Array | Int32Array | BigInt64Array | Uint8Array;

/** ONNX TensorProto.DataType codes. */
export const ONNX_DTYPE: Record<DType, number> = { float32: 1, uint8: 2, int32: 6, int64: 7, bool: 9, float64: 11 };
export const DTYPE_OF_ONNX: Record<number, DType> = {
  1: 'float32',
  2: 'uint8',
  6: 'int32',
  7: 'int64',
  9: 'bool',
  11: 'float64',
};

/** The dynamic (batch) dimension. At most one per shape, so Reshape can say -1 for it. */
export const DYN = -1;

export type Attr = { i: number } | { f: number } | { ints: readonly number[] } | { s: string } | { t: ConstData };

export interface ConstData {
  dtype: DType;
  shape: readonly number[];
  data: TypedArray;
}

export type Init =
  | { kind: 'zeros' }
  | { kind: 'ones' }
  | { kind: 'const'; value: number }
  | { kind: 'normal'; std: number }
  | { kind: 'uniform'; limit: number };

export interface ParamOptions {
  /** Updated by the optimizer (false: a buffer such as a normaliser, fed but never changed). */
  trainable?: boolean;
  /** AdamW weight decay applies (default: true for rank >= 2, false for biases and gains). */
  decay?: boolean;
}

export interface ParamDecl {
  name: string;
  shape: readonly number[];
  init: Init;
  trainable: boolean;
  decay: boolean;
  tensor: Tensor;
}

export type Source =
  | { kind: 'input'; name: string }
  | { kind: 'param'; name: string }
  | { kind: 'const'; value: ConstData }
  | { kind: 'node'; node: Node; index: number };

export class Tensor {
  constructor(
    readonly graph: Graph,
    readonly id: number,
    readonly dtype: DType,
    readonly shape: readonly number[],
    readonly source: Source,
  ) {}

  get rank(): number {
    return this.shape.length;
  }

  /** Element count; throws for shapes with a dynamic dimension. */
  get size(): number {
    if (this.shape.includes(DYN)) throw new Error(`tensor ${this.name}: size of a dynamic shape [${this.shape}]`);
    return this.shape.reduce((a, b) => a * b, 1);
  }

  get isStatic(): boolean {
    return !this.shape.includes(DYN);
  }

  /** The ONNX value name. */
  get name(): string {
    const s = this.source;
    if (s.kind === 'input' || s.kind === 'param') return s.name;
    if (s.kind === 'const') return `const_${this.id}`;
    return `t${this.id}`;
  }
}

export interface Node {
  id: number;
  op: string;
  inputs: Tensor[];
  outputs: Tensor[];
  attrs: Record<string, Attr>;
  /** IR-only facts for the gradient rules (never written to ONNX). */
  meta: Record<string, unknown>;
}

export interface OutSpec {
  dtype: DType;
  shape: readonly number[];
}

export function isFloat(dtype: DType): dtype is FloatType {
  return dtype === 'float32' || dtype === 'float64';
}

export function checkShape(shape: readonly number[], what: string): void {
  let dyn = 0;
  for (const d of shape) {
    if (d === DYN) dyn++;
    else if (!Number.isInteger(d) || d < 0) throw new Error(`${what}: bad dimension ${d} in [${shape}]`);
  }
  if (dyn > 1) throw new Error(`${what}: at most one dynamic dimension, got [${shape}]`);
}

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_.:/-]*$/;

export class Graph {
  readonly nodes: Node[] = [];
  readonly inputs: Tensor[] = [];
  readonly params: ParamDecl[] = [];
  readonly outputs: { name: string; tensor: Tensor }[] = [];
  private nextId = 0;
  private names = new Set<string>();
  private reusing = false;

  /** `float` is the dtype of parameters, float inputs and scalar constants. */
  constructor(readonly float: FloatType = 'float32') {}

  private claim(name: string, what: string): void {
    if (!NAME_RE.test(name)) throw new Error(`${what} name "${name}" is not a valid identifier`);
    if (this.names.has(name)) throw new Error(`${what} name "${name}" is already used in this graph`);
    this.names.add(name);
  }

  input(name: string, shape: readonly number[], dtype: DType = this.float): Tensor {
    this.claim(name, 'input');
    checkShape(shape, `input ${name}`);
    const t = new Tensor(this, this.nextId++, dtype, [...shape], { kind: 'input', name });
    this.inputs.push(t);
    return t;
  }

  param(name: string, shape: readonly number[], init: Init, options: ParamOptions = {}): Tensor {
    if (this.reusing) {
      const p = this.params.find((q) => q.name === name);
      if (!p) throw new Error(`reuse: parameter ${name} was never declared`);
      if (p.shape.length !== shape.length || p.shape.some((d, i) => d !== shape[i])) {
        throw new Error(`reuse: parameter ${name} has shape [${p.shape}], asked for [${shape}]`);
      }
      return p.tensor;
    }
    this.claim(name, 'parameter');
    checkShape(shape, `parameter ${name}`);
    if (shape.includes(DYN)) throw new Error(`parameter ${name}: shape must be static`);
    const t = new Tensor(this, this.nextId++, this.float, [...shape], { kind: 'param', name });
    this.params.push({
      name,
      shape: [...shape],
      init,
      trainable: options.trainable ?? true,
      decay: options.decay ?? shape.length >= 2,
      tensor: t,
    });
    return t;
  }

  constant(data: TypedArray | readonly number[], shape: readonly number[], dtype: DType = this.float): Tensor {
    checkShape(shape, 'constant');
    if (shape.includes(DYN)) throw new Error('constant: shape must be static');
    const typed = toTyped(data, dtype);
    const n = shape.reduce((a, b) => a * b, 1);
    if (typed.length !== n) throw new Error(`constant: ${typed.length} values for shape [${shape}]`);
    return new Tensor(this, this.nextId++, dtype, [...shape], {
      kind: 'const',
      value: { dtype, shape: [...shape], data: typed },
    });
  }

  scalar(value: number, dtype: DType = this.float): Tensor {
    return this.constant([value], [], dtype);
  }

  /** A 1-D int64 constant (shapes, axes, pads for ONNX inputs). */
  ints(values: readonly number[]): Tensor {
    return this.constant(values, [values.length], 'int64');
  }

  node(
    op: string,
    inputs: Tensor[],
    outs: OutSpec[],
    attrs: Record<string, Attr> = {},
    meta: Record<string, unknown> = {},
  ): Tensor[] {
    for (const t of inputs) if (t.graph !== this) throw new Error(`${op}: input ${t.name} belongs to another graph`);
    const node: Node = { id: this.nodes.length, op, inputs, outputs: [], attrs, meta };
    node.outputs = outs.map((o, index) => {
      checkShape(o.shape, `${op} output`);
      return new Tensor(this, this.nextId++, o.dtype, [...o.shape], { kind: 'node', node, index });
    });
    this.nodes.push(node);
    return node.outputs;
  }

  output(name: string, tensor: Tensor): void {
    if (tensor.graph !== this) throw new Error(`output ${name}: tensor belongs to another graph`);
    this.claim(name, 'output');
    this.outputs.push({ name, tensor });
  }

  /** Runs `fn` with parameter sharing: param() returns the already declared tensor of that name. */
  withReuse<T>(fn: () => T): T {
    const prev = this.reusing;
    this.reusing = true;
    try {
      return fn();
    } finally {
      this.reusing = prev;
    }
  }

  paramByName(name: string): ParamDecl {
    const p = this.params.find((q) => q.name === name);
    if (!p) throw new Error(`no parameter named "${name}"`);
    return p;
  }
}

export function toTyped(data: TypedArray | readonly number[], dtype: DType): TypedArray {
  if (!Array.isArray(data)) {
    const want = typedCtor(dtype);
    if (data instanceof want) return data as TypedArray;
    throw new Error(`constant: ${data.constructor.name} does not hold ${dtype}`);
  }
  const arr = data as readonly number[];
  switch (dtype) {
    case 'float32':
      return Float32Array.from(arr);
    case 'float64':
      return Float64Array.from(arr);
    case 'int32':
      return Int32Array.from(arr);
    case 'int64':
      return BigInt64Array.from(arr.map((v) => BigInt(v)));
    case 'bool':
    case 'uint8':
      return Uint8Array.from(arr);
  }
}

export function typedCtor(dtype: DType): { new (n: number): TypedArray } {
  switch (dtype) {
    case 'float32':
      return Float32Array;
    case 'float64':
      return Float64Array;
    case 'int32':
      return Int32Array;
    case 'int64':
      return BigInt64Array;
    case 'bool':
    case 'uint8':
      return Uint8Array;
  }
}
