// What travels through Redis, exactly: JSON in which typed arrays are base64 of their bytes (little
// endian, as every platform Node runs on here) and numbers JSON cannot hold (-0, NaN, +-Infinity) are
// tagged, so a decoded value equals the encoded one bit for bit. Plus the zod schemas of jobs and
// results (every payload read back is untrusted input) and the content-hashed policy versions.
import { z } from 'zod';
import { sha256Hex } from '../core/sha256.ts';
import { formatZodError } from '../core/spec.ts';
import { InputError } from '../core/errors.ts';
import { checkParamsBuilt } from '../nn/model-bytes.ts';
import { type ParamStore, ParamRowsSchema, paramRows, paramsFromRows } from '../nn/params.ts';
import { parseVlaConfig, type VlaConfig, type VlaConfigInput, vlaForwardBuilder } from '../policy/vla.ts';
import type { Rollout } from '../trainer/rollouts.ts';

const ARRAYS = { f32: Float32Array, f64: Float64Array, i32: Int32Array, u8: Uint8Array } as const;
type Tag = keyof typeof ARRAYS;

function tagOf(v: ArrayBufferView): Tag {
  for (const [tag, C] of Object.entries(ARRAYS)) if (v instanceof C) return tag as Tag;
  throw new TypeError(`codec: cannot encode ${v.constructor.name}`);
}

export function encodeValue(value: unknown): string {
  return JSON.stringify(value, function (key, v) {
    const raw = (this as Record<string, unknown>)[key]; // before toJSON (Buffers have one)
    if (ArrayBuffer.isView(raw)) return { $a: tagOf(raw), b64: Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64') };
    if (typeof v === 'number' && (!Number.isFinite(v) || Object.is(v, -0))) return { $n: Object.is(v, -0) ? '-0' : String(v) };
    return v;
  });
}

export function decodeValue(text: string): unknown {
  return JSON.parse(text, (_k, v) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const keys = Object.keys(v);
      if (keys.length === 2 && typeof v.$a === 'string' && typeof v.b64 === 'string' && Object.hasOwn(ARRAYS, v.$a)) {
        const bytes = Buffer.from(v.b64, 'base64');
        if (bytes.toString('base64') !== v.b64) throw new InputError('codec: an array\'s base64 is malformed');
        const C = ARRAYS[v.$a as Tag];
        if (bytes.length % C.BYTES_PER_ELEMENT) throw new InputError(`codec: ${bytes.length} bytes is not a whole ${C.name}`);
        const out = new C(bytes.length / C.BYTES_PER_ELEMENT);
        new Uint8Array(out.buffer).set(bytes);
        return out;
      }
      if (keys.length === 1 && ['-0', 'NaN', 'Infinity', '-Infinity'].includes(v.$n)) return v.$n === '-0' ? -0 : Number(v.$n);
    }
    return v;
  });
}

/** Decodes and validates; a failure is an InputError naming `what` and the bad field. */
export function parsePayload<T extends z.ZodType>(text: string, schema: T, what: string): z.infer<T> {
  let raw: unknown;
  try {
    raw = decodeValue(text);
  } catch (e) {
    throw new InputError(`${what}: not a payload (${(e as Error).message})`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new InputError(formatZodError(parsed.error, `${what}: `));
  return parsed.data;
}

const int = z.number().int();
export const HASH = /^[0-9a-f]{64}$/;
export const RUN_ID = /^[0-9a-f]{16}$/;
export const JOB_FORMAT = 'wmrl-rollout-job/1';
export const RESULT_FORMAT = 'wmrl-rollout-result/1';
export const MAX_GROUP = 4096;

/** One group (anchor or world-model) as a worker gets it. `task` is the TrainTask's `remote` (the resolver checks it). */
export const JobSchema = z.strictObject({
  format: z.literal(JOB_FORMAT),
  run: z.string().regex(RUN_ID, 'a 16-digit hex run id'),
  /** The trainer's buildId(): workers run only jobs of their own code. */
  build: z.string().regex(RUN_ID, 'a 16-digit hex build id'),
  task: z.record(z.string(), z.unknown()),
  policy: z.string().regex(HASH, 'a sha256 hex digest'),
  /** World-model groups: the snapshot of the world model they run in. */
  worldModel: z.string().regex(HASH, 'a sha256 hex digest').optional(),
  seed: int,
  samplesPerRollout: int.min(0).max(10_000),
  group: z.strictObject({
    kind: z.enum(['anchor', 'model']), task: int.min(0), start: int, startIndex: int.optional(), keys: z.array(int.min(0)).min(1).max(MAX_GROUP),
    branch: z.strictObject({ task: int.min(0), seed: int, elapsed: int.min(0), row: z.array(z.number()), moved: z.boolean().optional() }).optional(),
    horizon: int.min(1).optional(),
  }),
}).refine((j) => (j.group.kind === 'model') === (j.worldModel !== undefined), { message: 'world-model groups (and only they) name a worldModel', path: ['worldModel'] });
export type RolloutJob = z.infer<typeof JobSchema>;

export function jobId(job: RolloutJob): string {
  return `${job.run}-${job.policy.slice(0, 16)}-${job.worldModel?.slice(0, 16) ?? 'real'}-${job.group.keys[0]}`;
}

const ObsValueSchema = z.union([z.instanceof(Uint8Array), z.instanceof(Float32Array), z.instanceof(Int32Array), z.array(z.string())]);
const RolloutSchema = z.strictObject({
  key: int, seed: int, reward: z.number(), rewardVar: z.number(), success: z.boolean(), length: int.min(0),
  actions: z.instanceof(Int32Array), states: z.instanceof(Float32Array).optional(),
  samples: z.array(z.strictObject({ obs: z.record(z.string(), ObsValueSchema), tokens: z.record(z.string(), int), behaviourLogp: z.number() })),
});
export const ResultSchema = z.strictObject({ format: z.literal(RESULT_FORMAT), job: z.string(), rollouts: z.array(RolloutSchema) });

export function encodeResult(id: string, rollouts: readonly Rollout[]): string {
  return encodeValue({ format: RESULT_FORMAT, job: id, rollouts });
}

/** A result read back for job `id` with its expected rollout keys (a mismatch is a refused payload). */
export function decodeResult(text: string, id: string, keys: readonly number[]): Rollout[] {
  const r = parsePayload(text, ResultSchema, `result of job ${id}`);
  if (r.job !== id || r.rollouts.map((x) => x.key).join() !== keys.join()) throw new InputError(`result of job ${id}: it belongs to job ${r.job} with keys [${r.rollouts.map((x) => x.key)}]`);
  return r.rollouts;
}

const PolicyVersionSchema = z.strictObject({
  format: z.literal('wmrl-policy-version/1'),
  config: z.record(z.string(), z.unknown()),
  float: z.enum(['float32', 'float64']),
  params: ParamRowsSchema,
});

/** A value stored once under its content hash (policy versions, world-model snapshots). */
export function contentAddressed(value: unknown): { text: string; hash: string } {
  const text = encodeValue(value);
  return { text, hash: sha256Hex(text) };
}

/** A stored value, checked against the hash it was fetched by. */
export function checkContent(text: string, hash: string, what: string): unknown {
  const got = sha256Hex(text);
  if (got !== hash) throw new InputError(`${what} ${hash.slice(0, 12)}: its bytes hash to ${got.slice(0, 12)} (corrupted or replaced)`);
  return decodeValue(text);
}

/** A policy version as stored once per content hash: its text and that text's sha256. */
export function encodePolicy(config: VlaConfig, params: ParamStore): { text: string; hash: string } {
  return contentAddressed({ format: 'wmrl-policy-version/1', config, float: params.float, params: paramRows(params) });
}

/** A stored policy version, checked against the hash it was fetched by. */
export function decodePolicy(text: string, hash: string): { config: VlaConfig; params: ParamStore } {
  const what = `policy version ${hash.slice(0, 12)}`;
  const raw = checkContent(text, hash, 'policy version');
  const parsed = PolicyVersionSchema.safeParse(raw);
  if (!parsed.success) throw new InputError(formatZodError(parsed.error, `${what}: `));
  const v = parsed.data;
  const params = paramsFromRows(v.float, v.params, what);
  let config: VlaConfig;
  try {
    config = parseVlaConfig(v.config as unknown as VlaConfigInput);
  } catch (e) {
    throw new InputError(`${what}: ${(e as Error).message}`);
  }
  checkParamsBuilt(params, vlaForwardBuilder(config), what);
  return { config, params };
}
