// onnxruntime-node sessions that own their native resources (close() releases them), plus tensor helpers.
import * as ort from 'onnxruntime-node';
import { type DType, type FloatType, type TypedArray } from './ir.ts';

export type OrtTensor = ort.Tensor;
export type Feeds = Record<string, ort.Tensor>;
export type OptimizationLevel = 'disabled' | 'basic' | 'extended' | 'all';

export interface RuntimeOptions {
  /** intra-op threads (default 1: sampler and trainer share the cores). */
  threads?: number;
  /** Graph optimisation (default 'all' for float32, 'basic' for float64: the top level fuses
   *  ops into float32-only kernels). */
  optimization?: OptimizationLevel;
}

export function sessionOptions(opts: RuntimeOptions = {}, float: FloatType = 'float32'): ort.InferenceSession.SessionOptions {
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
  private session: ort.InferenceSession | null;

  private constructor(session: ort.InferenceSession, readonly model: Uint8Array) {
    this.session = session;
  }

  static async create(model: Uint8Array, opts: RuntimeOptions = {}, float: FloatType = 'float32'): Promise<Session> {
    return new Session(await ort.InferenceSession.create(model, sessionOptions(opts, float)), model);
  }

  private live(): ort.InferenceSession {
    if (!this.session) throw new Error('Session: used after close()');
    return this.session;
  }

  get inputNames(): readonly string[] {
    return this.live().inputNames;
  }

  get outputNames(): readonly string[] {
    return this.live().outputNames;
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

export function tensor(dtype: DType, data: TypedArray, shape: readonly number[]): ort.Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  if (data.length !== n) throw new Error(`tensor: ${data.length} values for shape [${shape}]`);
  const type = dtype === 'bool' ? 'bool' : dtype;
  return new ort.Tensor(type, data as never, [...shape]);
}

export function scalarTensor(value: number, float: FloatType = 'float32'): ort.Tensor {
  return new ort.Tensor(float, float === 'float32' ? Float32Array.of(value) : Float64Array.of(value), []);
}

/** A scalar output as a JS number (bool -> 0/1). */
export function scalarOf(t: ort.Tensor): number {
  if (t.size !== 1) throw new Error(`scalarOf: tensor has ${t.size} elements`);
  const v = (t.data as ArrayLike<number | bigint | boolean>)[0];
  return typeof v === 'bigint' ? Number(v) : Number(v);
}

export function floatData(t: ort.Tensor): Float32Array | Float64Array {
  if (t.type !== 'float32' && t.type !== 'float64') throw new Error(`expected a float tensor, got ${t.type}`);
  return t.data as Float32Array | Float64Array;
}

export { ort };
