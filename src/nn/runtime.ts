// ORT sessions that own their native resources (close() releases them), plus tensor helpers. The ORT
// binding is a parameter: onnxruntime-node and onnxruntime-web share onnxruntime-common's API, and the
// default ('#ort' in package.json) is onnxruntime-node in Node and onnxruntime-web in browsers.
// Browser-safe.
import * as defaultOrt from '#ort';
import type { InferenceSession, Tensor } from 'onnxruntime-common';
import type { DType, FloatType, TypedArray } from './ir.ts';

/** An ORT package's runtime entry points: `import * as ort from 'onnxruntime-web'` (or -node) fits. */
export interface OrtBinding {
  readonly InferenceSession: typeof InferenceSession;
  readonly Tensor: typeof Tensor;
}

/** The binding sessions use when RuntimeOptions.ort is not given. */
export const ort: OrtBinding = defaultOrt as unknown as OrtBinding;

export type OrtTensor = Tensor;
export type Feeds = Record<string, Tensor>;
export type OptimizationLevel = 'disabled' | 'basic' | 'extended' | 'all';

export interface RuntimeOptions {
  /** intra-op threads (default 1: sampler and trainer share the cores). onnxruntime-web takes its
   *  thread count from its own `env.wasm.numThreads` instead. */
  threads?: number;
  /** Graph optimisation (default 'all' for float32, 'basic' for float64: the top level fuses
   *  ops into float32-only kernels). */
  optimization?: OptimizationLevel;
  /** The ORT binding (default: `ort` above). */
  ort?: OrtBinding;
}

export function sessionOptions(
  opts: RuntimeOptions = {},
  float: FloatType = 'float32',
): InferenceSession.SessionOptions {
  const threads = opts.threads ?? 1;
  if (!Number.isInteger(threads) || threads < 1) throw new Error(`threads must be a positive integer, got ${threads}`);
  return {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: opts.optimization ?? (float === 'float64' ? 'basic' : 'all'),
    extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
  };
}

/** One ORT inference session. */
export class Session {
  private session: InferenceSession | null;

  private constructor(
    session: InferenceSession,
    readonly model: Uint8Array,
    readonly ort: OrtBinding,
  ) {
    this.session = session;
  }

  static async create(model: Uint8Array, opts: RuntimeOptions = {}, float: FloatType = 'float32'): Promise<Session> {
    const binding = opts.ort ?? ort;
    return new Session(await binding.InferenceSession.create(model, sessionOptions(opts, float)), model, binding);
  }

  private live(): InferenceSession {
    if (!this.session) throw new Error('Session: used after close()');
    return this.session;
  }

  get inputNames(): readonly string[] {
    return this.live().inputNames;
  }

  get outputNames(): readonly string[] {
    return this.live().outputNames;
  }

  /** A tensor of this session's binding. */
  tensor(dtype: DType, data: TypedArray, shape: readonly number[]): Tensor {
    return tensor(dtype, data, shape, this.ort);
  }

  async run(feeds: Feeds, fetches?: readonly string[]): Promise<Feeds> {
    const s = this.live();
    const missing = s.inputNames.filter((n) => !(n in feeds));
    if (missing.length) throw new Error(`Session.run: missing inputs ${missing.join(', ')}`);
    const used: Feeds = {};
    for (const n of s.inputNames) used[n] = feeds[n];
    return fetches ? s.run(used, [...fetches]) : s.run(used);
  }

  get closed(): boolean {
    return this.session === null;
  }

  async close(): Promise<void> {
    const s = this.session;
    this.session = null;
    if (s) await s.release();
  }
}

/** A tensor of `binding` (default `ort`) over `data` (not copied). */
export function tensor(dtype: DType, data: TypedArray, shape: readonly number[], binding: OrtBinding = ort): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  if (data.length !== n) throw new Error(`tensor: ${data.length} values for shape [${shape}]`);
  const type = dtype === 'bool' ? 'bool' : dtype;
  return new binding.Tensor(type, data as never, [...shape]);
}

export function scalarTensor(value: number, float: FloatType = 'float32', binding: OrtBinding = ort): Tensor {
  return new binding.Tensor(float, float === 'float32' ? Float32Array.of(value) : Float64Array.of(value), []);
}

/** A scalar output as a JS number (bool -> 0/1). */
export function scalarOf(t: Tensor): number {
  if (t.size !== 1) throw new Error(`scalarOf: tensor has ${t.size} elements`);
  const v = (t.data as ArrayLike<number | bigint | boolean>)[0];
  return typeof v === 'bigint' ? Number(v) : Number(v);
}

export function floatData(t: Tensor): Float32Array | Float64Array {
  if (t.type !== 'float32' && t.type !== 'float64') throw new Error(`expected a float tensor, got ${t.type}`);
  return t.data as Float32Array | Float64Array;
}
