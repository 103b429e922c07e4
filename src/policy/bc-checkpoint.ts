// BC checkpoints: checkpoint.bin (float32 parameters, then AdamW first and second moments, in the
// order listed by checkpoint.json) and checkpoint.json (step, VLA config, run options). Each file is
// written atomically and the JSON last, so a crash leaves the previous checkpoint readable. Node-only.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { readJsonFile, writeFileAtomic, writeJsonAtomic } from '../core/node-files.ts';
import { ParamStore } from '../nn/params.ts';
import type { OptimizerState } from '../nn/train.ts';
import { type VlaConfig, parseVlaConfig, type VlaConfigInput } from './vla.ts';

export const CHECKPOINT_FORMAT = 'wmrl-bc-checkpoint/1';

const CheckpointSchema = z.object({
  format: z.literal(CHECKPOINT_FORMAT),
  /** Batches consumed (the next batch index). */
  step: z.number().int().min(0),
  /** AdamW's step count (skipped non-finite steps do not count). */
  adamStep: z.number().int().min(0),
  config: z.unknown(),
  /** Everything that must match for a resume to continue the same run (seed, data, optimiser ...). */
  run: z.record(z.string(), z.unknown()),
  params: z.array(z.object({ name: z.string(), shape: z.array(z.number().int().positive()), trainable: z.boolean(), decay: z.boolean() })),
  /** Parameters with optimiser moments, in storage order. */
  trainable: z.array(z.string()),
});

export interface BcCheckpoint {
  step: number;
  config: VlaConfig;
  run: Record<string, unknown>;
  params: ParamStore;
  optimizer: OptimizerState;
}

export function saveBcCheckpoint(dir: string, ck: BcCheckpoint): void {
  if (ck.params.float !== 'float32') throw new Error('saveBcCheckpoint: only float32 parameters are supported');
  const trainable = [...ck.optimizer.m.keys()];
  const arrays = [...ck.params.names.map((n) => ck.params.get(n)), ...trainable.map((n) => ck.optimizer.m.get(n)!), ...trainable.map((n) => ck.optimizer.v.get(n)!)];
  const total = arrays.reduce((s, a) => s + a.length, 0);
  const flat = new Float32Array(total);
  let k = 0;
  for (const a of arrays) {
    flat.set(a, k);
    k += a.length;
  }
  writeFileAtomic(join(dir, 'checkpoint.bin'), new Uint8Array(flat.buffer));
  writeJsonAtomic(join(dir, 'checkpoint.json'), {
    format: CHECKPOINT_FORMAT,
    step: ck.step,
    adamStep: ck.optimizer.step,
    config: ck.config,
    run: ck.run,
    params: ck.params.names.map((n) => ck.params.info(n)),
    trainable,
  });
}

export function loadBcCheckpoint(dir: string): BcCheckpoint {
  const jsonPath = join(dir, 'checkpoint.json');
  const c = readJsonFile(jsonPath, CheckpointSchema, 'checkpoint');
  const buf = readFileSync(join(dir, 'checkpoint.bin'));
  const flat = new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
  const size = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);
  const shapes = new Map(c.params.map((p) => [p.name, p.shape]));
  const expected = c.params.reduce((s, p) => s + size(p.shape), 0) + 2 * c.trainable.reduce((s, n) => s + size(shapes.get(n) ?? [0]), 0);
  if (flat.length !== expected) throw new Error(`${join(dir, 'checkpoint.bin')}: ${flat.length} floats, checkpoint.json describes ${expected}`);
  let k = 0;
  const take = (n: number) => flat.slice(k, (k += n));
  const params = new ParamStore('float32');
  for (const p of c.params) params.add(p, take(size(p.shape)));
  const m = new Map<string, Float32Array>();
  const v = new Map<string, Float32Array>();
  for (const n of c.trainable) m.set(n, take(size(shapes.get(n)!)));
  for (const n of c.trainable) v.set(n, take(size(shapes.get(n)!)));
  return { step: c.step, config: parseVlaConfig(c.config as VlaConfigInput), run: c.run, params, optimizer: { step: c.adamStep, m, v } };
}
