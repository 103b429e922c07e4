// Named parameter values with seeded, name-keyed initialisation (adding a parameter never changes
// the initial values of the others). Browser-safe.
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { Rng } from '../core/rng.ts';
import { hashOf } from '../core/hash.ts';
import type { FloatType, Init, ParamDecl } from './ir.ts';

export type FloatArray = Float32Array | Float64Array;

export interface ParamInfo {
  name: string;
  shape: readonly number[];
  trainable: boolean;
  decay: boolean;
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

export function fillInit(out: FloatArray, init: Init, rng: Rng): void {
  switch (init.kind) {
    case 'zeros':
      out.fill(0);
      return;
    case 'ones':
      out.fill(1);
      return;
    case 'const':
      out.fill(init.value);
      return;
    case 'normal':
      for (let i = 0; i < out.length; i++) out[i] = init.std * rng.normal();
      return;
    case 'uniform':
      for (let i = 0; i < out.length; i++) out[i] = rng.range(-init.limit, init.limit);
  }
}

/** Parameter values by name, in declaration order. */
export class ParamStore {
  private readonly vals = new Map<string, FloatArray>();
  private readonly infos = new Map<string, ParamInfo>();

  constructor(readonly float: FloatType) {}

  /** Fresh values for `decls`: parameter p draws from Rng(seed, stream = hash(p.name)). */
  static init(decls: readonly ParamDecl[], seed: number, float: FloatType = 'float32'): ParamStore {
    const store = new ParamStore(float);
    for (const d of decls) {
      const n = d.shape.reduce((a, b) => a * b, 1);
      const data = float === 'float32' ? new Float32Array(n) : new Float64Array(n);
      const stream = parseInt(hashOf(d.name).slice(0, 8), 16);
      fillInit(data, d.init, new Rng(seed, stream));
      store.add(d, data);
    }
    return store;
  }

  add(info: ParamInfo, data: FloatArray): void {
    if (this.vals.has(info.name)) throw new Error(`parameter ${info.name} is already in the store`);
    const n = info.shape.reduce((a, b) => a * b, 1);
    if (data.length !== n) throw new Error(`parameter ${info.name}: ${data.length} values for shape [${info.shape}]`);
    this.checkType(info.name, data);
    this.infos.set(info.name, {
      name: info.name,
      shape: [...info.shape],
      trainable: info.trainable,
      decay: info.decay,
    });
    this.vals.set(info.name, data);
  }

  private checkType(name: string, data: FloatArray): void {
    const want = this.float === 'float32' ? Float32Array : Float64Array;
    if (!(data instanceof want)) throw new Error(`parameter ${name}: expected ${this.float} data`);
  }

  get names(): string[] {
    return [...this.vals.keys()];
  }

  info(name: string): ParamInfo {
    const i = this.infos.get(name);
    if (!i) throw new Error(`no parameter named "${name}"`);
    return i;
  }

  get(name: string): FloatArray {
    const v = this.vals.get(name);
    if (!v) throw new Error(`no parameter named "${name}"`);
    return v;
  }

  has(name: string): boolean {
    return this.vals.has(name);
  }

  /** Replace a value (same length and dtype). */
  set(name: string, data: FloatArray): void {
    const old = this.get(name);
    if (data.length !== old.length) throw new Error(`parameter ${name}: ${data.length} values, expected ${old.length}`);
    this.checkType(name, data);
    this.vals.set(name, data);
  }

  get size(): number {
    let n = 0;
    for (const v of this.vals.values()) n += v.length;
    return n;
  }

  clone(): ParamStore {
    const c = new ParamStore(this.float);
    for (const [name, v] of this.vals) c.add(this.infos.get(name)!, v.slice());
    return c;
  }

  asMap(): ReadonlyMap<string, FloatArray> {
    return this.vals;
  }

  /** Throws an error naming every missing, unexpected or wrongly shaped parameter. */
  checkAgainst(decls: readonly { name: string; shape: readonly number[] }[], what = 'parameters'): void {
    const problems: string[] = [];
    const want = new Map(decls.map((d) => [d.name, d.shape]));
    for (const [name, shape] of want) {
      const info = this.infos.get(name);
      if (!info) problems.push(`missing "${name}" [${shape}]`);
      else if (!sameShape(info.shape, shape)) problems.push(`"${name}" has shape [${info.shape}], expected [${shape}]`);
    }
    for (const name of this.vals.keys()) if (!want.has(name)) problems.push(`unexpected "${name}"`);
    if (problems.length) throw new Error(`${what} do not match the network: ${problems.join('; ')}`);
  }

  /** The first parameter value that is NaN or infinite (writers refuse such stores), or null. */
  firstNonFinite(): { name: string; index: number; value: number } | null {
    for (const [name, v] of this.vals) {
      for (let i = 0; i < v.length; i++) if (!Number.isFinite(v[i])) return { name, index: i, value: v[i] };
    }
    return null;
  }
}

/** Parameters as plain rows (what travels to workers: info and data per parameter, in store order). */
export const ParamRowsSchema = z.array(
  z.strictObject({
    name: z.string(),
    shape: z.array(z.number().int().min(0)),
    trainable: z.boolean(),
    decay: z.boolean(),
    data: z.union([z.instanceof(Float32Array), z.instanceof(Float64Array)]),
  }),
);
export type ParamRows = z.infer<typeof ParamRowsSchema>;

export function paramRows(store: ParamStore): ParamRows {
  return store.names.map((name) => {
    const info = store.info(name);
    return { ...info, shape: [...info.shape], data: store.get(name) as ParamRows[number]['data'] };
  });
}

/** A store from checked rows; a wrong length or type is an InputError naming `what`. */
export function paramsFromRows(float: FloatType, rows: ParamRows, what: string): ParamStore {
  const store = new ParamStore(float);
  try {
    for (const { data, ...info } of rows) store.add(info, data);
  } catch (e) {
    throw new InputError(`${what}: ${(e as Error).message}`);
  }
  return store;
}
