// Training checkpoints in a run folder: checkpoint.bin (float32: the parameters, AdamW first and second
// moments, then any extra stores such as the best weights so far) and checkpoint.json (format, step,
// run key, caller fields, the array layout and the sha256 of checkpoint.bin), committed as one unit by
// src/store's run helper. Readers verify the hash and refuse non-finite values. Node-only (fs).
import { join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { fsReason, readInputJson } from '../core/input-file.ts';
import {
  CHECKPOINT_BIN,
  CHECKPOINT_JSON,
  type CommitOptions,
  commitCheckpoint,
  recoverFolder,
  SequentialReader,
  sha256Hex,
} from '../store/index.ts';
import { ParamStore } from './params.ts';
import type { OptimizerState } from './train.ts';

const InfoSchema = z.object({
  name: z.string(),
  shape: z.array(z.number().int().positive()),
  trainable: z.boolean(),
  decay: z.boolean(),
});

const CheckpointSchema = z.object({
  format: z.string(),
  /** Batches consumed (the next batch index). */
  step: z.number().int().min(0),
  /** AdamW's step count (skipped non-finite steps do not count). */
  adamStep: z.number().int().min(0),
  /** Everything that must match for a resume to continue the same run (seed, data, optimiser ...). */
  run: z.record(z.string(), z.unknown()),
  /** Caller fields (network config, best score ...). */
  info: z.record(z.string(), z.unknown()),
  float: z.literal('float32'),
  binSha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** Parameter lists, "params" first, then the extra stores. */
  stores: z.record(z.string(), z.array(InfoSchema)),
  /** Parameters with optimiser moments, in storage order. */
  trainable: z.array(z.string()),
});

export interface TrainCheckpoint {
  step: number;
  run: Record<string, unknown>;
  info: Record<string, unknown>;
  params: ParamStore;
  optimizer: OptimizerState;
  /** Further parameter stores (e.g. "best": the best weights so far). */
  extra: Record<string, ParamStore>;
}

const size = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

function refuseNonFinite(what: string, a: ArrayLike<number>): void {
  for (let i = 0; i < a.length; i++)
    if (!Number.isFinite(a[i])) throw new Error(`saveTrainCheckpoint: refusing to write ${what}[${i}] = ${a[i]}`);
}

export function saveTrainCheckpoint(dir: string, format: string, ck: TrainCheckpoint, commit?: CommitOptions): void {
  const stores: Record<string, ParamStore> = { params: ck.params, ...ck.extra };
  for (const s of Object.values(stores))
    if (s.float !== 'float32') throw new Error('saveTrainCheckpoint: only float32 parameters are supported');
  const trainable = [...ck.optimizer.m.keys()];
  const arrays: { what: string; data: ArrayLike<number> }[] = [];
  for (const [key, s] of Object.entries(stores))
    if (key === 'params') for (const n of s.names) arrays.push({ what: `params "${n}"`, data: s.get(n) });
  for (const n of trainable) arrays.push({ what: `AdamW m "${n}"`, data: ck.optimizer.m.get(n)! });
  for (const n of trainable) arrays.push({ what: `AdamW v "${n}"`, data: ck.optimizer.v.get(n)! });
  for (const [key, s] of Object.entries(stores))
    if (key !== 'params') for (const n of s.names) arrays.push({ what: `${key} "${n}"`, data: s.get(n) });
  // checkpoint.bin is the arrays one after another, written as they are (no joined copy)
  const bin = arrays.map((a) => {
    refuseNonFinite(a.what, a.data);
    const f = a.data instanceof Float32Array ? a.data : Float32Array.from(a.data);
    return new Uint8Array(f.buffer, f.byteOffset, f.byteLength);
  });
  const json = {
    format,
    step: ck.step,
    adamStep: ck.optimizer.step,
    run: ck.run,
    info: ck.info,
    float: 'float32',
    binSha256: sha256Hex(bin),
    stores: Object.fromEntries(Object.entries(stores).map(([key, s]) => [key, s.names.map((n) => s.info(n))])),
    trainable,
  };
  commitCheckpoint(dir, bin, json, commit);
}

/** Reads and verifies a checkpoint; every problem is an InputError naming the file and field. */
export function loadTrainCheckpoint(dir: string, format: string): TrainCheckpoint {
  recoverFolder(dir);
  const jsonPath = join(dir, CHECKPOINT_JSON);
  const binPath = join(dir, CHECKPOINT_BIN);
  const c = readInputJson(jsonPath, CheckpointSchema, 'checkpoint');
  if (c.format !== format)
    throw new InputError(
      `${jsonPath}: format: "${c.format}", expected "${format}" (a checkpoint of another kind or version)`,
    );
  if (!c.stores.params) throw new InputError(`${jsonPath}: stores.params: missing`);
  const shapes = new Map(c.stores.params.map((p) => [p.name, p.shape]));
  for (const n of c.trainable)
    if (!shapes.has(n)) throw new InputError(`${jsonPath}: trainable: "${n}" is not in stores.params`);
  const extraKeys = Object.keys(c.stores).filter((k) => k !== 'params');
  const count = (list: z.infer<typeof InfoSchema>[]) => list.reduce((s, p) => s + size(p.shape), 0);
  const expected =
    count(c.stores.params) +
    2 * c.trainable.reduce((s, n) => s + size(shapes.get(n)!), 0) +
    extraKeys.reduce((s, k) => s + count(c.stores[k]), 0);
  // read array by array (a file of any size), hashed as it is read, verified before anything is returned
  let bin: SequentialReader;
  try {
    bin = new SequentialReader(binPath);
  } catch (err) {
    throw new InputError(`${binPath}: cannot read checkpoint data: ${fsReason(err)}`);
  }
  try {
    if (bin.size !== 4 * expected)
      throw new InputError(`${binPath}: ${bin.size} bytes, ${jsonPath} describes ${expected} float32 values`);
    const arrays: [string, Float32Array][] = [];
    const take = (what: string, n: number) => {
      const a = new Float32Array(n);
      bin.read(new Uint8Array(a.buffer));
      arrays.push([what, a]);
      return a;
    };
    const read = (key: string) => {
      const s = new ParamStore('float32');
      for (const p of c.stores[key]) s.add(p, take(`${key} "${p.name}"`, size(p.shape)));
      return s;
    };
    const params = read('params');
    const m = new Map<string, Float32Array>();
    const v = new Map<string, Float32Array>();
    for (const n of c.trainable) m.set(n, take(`AdamW m "${n}"`, size(shapes.get(n)!)));
    for (const n of c.trainable) v.set(n, take(`AdamW v "${n}"`, size(shapes.get(n)!)));
    const extra = Object.fromEntries(extraKeys.map((key) => [key, read(key)]));
    if (bin.sha256() !== c.binSha256)
      throw new InputError(
        `${binPath}: sha256 does not match binSha256 in ${jsonPath} (torn, edited or from another checkpoint)`,
      );
    for (const [what, a] of arrays)
      for (let i = 0; i < a.length; i++)
        if (!Number.isFinite(a[i]))
          throw new InputError(`${binPath}: ${what}[${i}] is ${a[i]} (a checkpoint must hold finite values)`);
    return { step: c.step, run: c.run, info: c.info, params, optimizer: { step: c.adamStep, m, v }, extra };
  } finally {
    bin.close();
  }
}
