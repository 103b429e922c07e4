// What travels through Redis, exactly. Values (results, policy versions, world-model snapshots) are
// one buffer: "WMRL", the JSON length (u32 LE), JSON in which every typed array is a reference into
// the binary tail that follows (its bytes as they are in memory, little endian as on every platform
// Node runs on here, 8-byte aligned), then the tail. Numbers JSON cannot hold (-0, NaN, +-Infinity)
// are tagged, in job payloads too, so a decoded value equals the encoded one bit for bit. Plus the zod
// schemas of jobs and results (every payload read back is untrusted input).
import { z } from 'zod';
import { formatZodError } from '../core/spec.ts';
import { sha256Hex } from '../store/commit.ts';
import { InputError } from '../core/errors.ts';
import { checkParamsBuilt } from '../nn/model-bytes.ts';
import { type ParamStore, ParamRowsSchema, paramRows, paramsFromRows } from '../nn/params.ts';
import { parseVlaConfig, type VlaConfig, type VlaConfigInput, vlaForwardBuilder } from '../policy/vla.ts';
import type { GroupJob, Rollout } from '../trainer/rollouts.ts';

const ARRAYS = { f32: Float32Array, f64: Float64Array, i32: Int32Array, u8: Uint8Array } as const;
type Tag = keyof typeof ARRAYS;
const MAGIC = Buffer.from('WMRL');
const SPECIAL = ['-0', 'NaN', 'Infinity', '-Infinity'];

function tagOf(v: ArrayBufferView): Tag {
  for (const [tag, C] of Object.entries(ARRAYS)) if (v instanceof C) return tag as Tag;
  throw new TypeError(`codec: cannot encode ${v.constructor.name}`);
}

const pad8 = (n: number) => (n + 7) & ~7;
const numberTag = (v: unknown) =>
  typeof v === 'number' && (!Number.isFinite(v) || Object.is(v, -0))
    ? { $n: Object.is(v, -0) ? '-0' : String(v) }
    : undefined;
const isNumberTag = (v: Record<string, unknown>) => Object.keys(v).length === 1 && SPECIAL.includes(v.$n as string);
const untagNumber = (v: Record<string, unknown>) => (v.$n === '-0' ? -0 : Number(v.$n));

/** JSON with -0, NaN and +-Infinity tagged (job payloads: BullMQ stores job data as JSON). */
export function encodeJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) => numberTag(v) ?? v);
}

export function decodeJson(text: string): unknown {
  return JSON.parse(text, (_k, v) =>
    v && typeof v === 'object' && !Array.isArray(v) && isNumberTag(v) ? untagNumber(v) : v,
  );
}

export function encodeValue(value: unknown): Buffer {
  const arrays: ArrayBufferView[] = [];
  let at = 0;
  const json = JSON.stringify(value, function (key, v) {
    const raw = (this as Record<string, unknown>)[key]; // before toJSON (Buffers have one)
    if (ArrayBuffer.isView(raw)) {
      const ref = { $a: tagOf(raw), at, bytes: raw.byteLength };
      arrays.push(raw);
      at += pad8(raw.byteLength);
      return ref;
    }
    return numberTag(v) ?? v;
  });
  const head = Buffer.from(json);
  const headEnd = pad8(8 + head.length);
  const out = Buffer.alloc(headEnd + at);
  MAGIC.copy(out, 0);
  out.writeUInt32LE(head.length, 4);
  head.copy(out, 8);
  let off = headEnd;
  for (const a of arrays) {
    out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), off);
    off += pad8(a.byteLength);
  }
  return out;
}

export function decodeValue(bytes: Uint8Array): unknown {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < 8 || !buf.subarray(0, 4).equals(MAGIC))
    throw new InputError('codec: not a wmrl payload (no WMRL header)');
  const length = buf.readUInt32LE(4);
  if (8 + length > buf.length) throw new InputError(`codec: a ${length}-byte header in a ${buf.length}-byte payload`);
  const tail = pad8(8 + length);
  return JSON.parse(buf.toString('utf8', 8, 8 + length), (_k, v) => {
    if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
    if (
      Object.keys(v).length === 3 &&
      Object.hasOwn(ARRAYS, v.$a) &&
      Number.isInteger(v.at) &&
      Number.isInteger(v.bytes)
    ) {
      const C = ARRAYS[v.$a as Tag];
      const fits =
        v.at >= 0 &&
        v.bytes >= 0 &&
        v.at % 8 === 0 &&
        v.bytes % C.BYTES_PER_ELEMENT === 0 &&
        tail + v.at + v.bytes <= buf.length;
      if (!fits) throw new InputError(`codec: a ${C.name} of ${v.bytes} bytes at ${v.at} does not fit the payload`);
      const out = new C(v.bytes / C.BYTES_PER_ELEMENT);
      new Uint8Array(out.buffer).set(buf.subarray(tail + v.at, tail + v.at + v.bytes));
      return out;
    }
    return isNumberTag(v) ? untagNumber(v) : v;
  });
}

/** Decodes and validates; a failure is an InputError naming `what` and the bad field. */
export function parsePayload<T extends z.ZodType>(bytes: Uint8Array, schema: T, what: string): z.infer<T> {
  let raw: unknown;
  try {
    raw = decodeValue(bytes);
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
const RESULT_FORMAT = 'wmrl-rollout-result/1';
const MAX_GROUP = 4096;

/** One group (anchor or world-model) as a worker gets it.
 *  `task` is the TrainTask's `remote` (the resolver checks it). */
export const JobSchema = z
  .strictObject({
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
      kind: z.enum(['anchor', 'model']),
      task: int.min(0),
      start: int,
      startIndex: int.optional(),
      keys: z.array(int.min(0)).min(1).max(MAX_GROUP),
      branch: z
        .strictObject({
          task: int.min(0),
          seed: int,
          elapsed: int.min(0),
          row: z.array(z.number()),
          moved: z.boolean().optional(),
          /** A physics start's exact engine copy (environment evolution, real-branch), base64. */
          exact: z.base64().optional(),
        })
        .optional(),
      horizon: int.min(1).optional(),
    }),
    /** World-model groups: record states too (the repeat penalty reads them). */
    recordStates: z.boolean().optional(),
    /** Sampling temperature of the rollouts (absent: 1). */
    temperature: z.number().positive().optional(),
  })
  // real-branch runs its world-model groups in physics: those name none
  .refine((j) => j.group.kind === 'model' || j.worldModel === undefined, {
    message: 'anchors run in physics: they name no worldModel',
    path: ['worldModel'],
  });
export type RolloutJob = z.infer<typeof JobSchema>;

/** A group as a job carries it (the exact copy of a branch as base64: job payloads are JSON). */
export function jobGroup(g: GroupJob): RolloutJob['group'] {
  let branch: RolloutJob['group']['branch'];
  if (g.branch) {
    const { origin: _, exact, ...point } = g.branch;
    branch = { ...point, ...(exact && { exact: Buffer.from(exact).toString('base64') }) };
  }
  const { kind, task, start, startIndex, horizon } = g;
  return { kind, task, start, startIndex, keys: [...g.keys], branch, horizon };
}

/** The group of a job as the rollouts take it. */
export function groupOfJob(j: RolloutJob['group']): GroupJob {
  const { branch, ...group } = j;
  if (!branch) return group;
  const { exact, ...point } = branch;
  return {
    ...group,
    branch: { ...point, ...(exact !== undefined && { exact: new Uint8Array(Buffer.from(exact, 'base64')) }) },
  };
}

export function jobId(job: RolloutJob): string {
  return `${job.run}-${job.policy.slice(0, 16)}-${job.worldModel?.slice(0, 16) ?? 'real'}-${job.group.keys[0]}`;
}

const ObsValueSchema = z.union([
  z.instanceof(Uint8Array),
  z.instanceof(Float32Array),
  z.instanceof(Int32Array),
  z.array(z.string()),
]);
const RolloutSchema = z.strictObject({
  key: int,
  seed: int,
  reward: z.number(),
  rewardVar: z.number(),
  success: z.boolean(),
  length: int.min(0),
  start: int.min(0),
  actions: z.instanceof(Int32Array),
  states: z.instanceof(Float32Array).optional(),
  samples: z.array(
    z.strictObject({
      obs: z.record(z.string(), ObsValueSchema),
      tokens: z.record(z.string(), int),
      behaviourLogp: z.number(),
    }),
  ),
});
export const ResultSchema = z.strictObject({
  format: z.literal(RESULT_FORMAT),
  job: z.string(),
  rollouts: z.array(RolloutSchema),
});

export function encodeResult(id: string, rollouts: readonly Rollout[]): Buffer {
  return encodeValue({ format: RESULT_FORMAT, job: id, rollouts });
}

/** A result read back for job `id` with its expected rollout keys (a mismatch is a refused payload). */
export function decodeResult(bytes: Uint8Array, id: string, keys: readonly number[]): Rollout[] {
  const r = parsePayload(bytes, ResultSchema, `result of job ${id}`);
  const got = r.rollouts.map((x) => x.key);
  if (r.job !== id || got.join() !== keys.join())
    throw new InputError(`result of job ${id}: it belongs to job ${r.job} with keys [${got}]`);
  return r.rollouts;
}

const PolicyVersionSchema = z.strictObject({
  format: z.literal('wmrl-policy-version/1'),
  config: z.record(z.string(), z.unknown()),
  float: z.enum(['float32', 'float64']),
  params: ParamRowsSchema,
});

/** A value stored once under its content hash (policy versions, world-model snapshots). */
export function contentAddressed(value: unknown): { bytes: Buffer; hash: string } {
  const bytes = encodeValue(value);
  return { bytes, hash: sha256Hex(bytes) };
}

/** A stored value, checked against the hash it was fetched by. */
export function checkContent(bytes: Uint8Array, hash: string, what: string): unknown {
  const got = sha256Hex(bytes);
  if (got !== hash)
    throw new InputError(`${what} ${hash.slice(0, 12)}: its bytes hash to ${got.slice(0, 12)} (corrupted or replaced)`);
  return decodeValue(bytes);
}

/** A policy version as stored once per content hash: its bytes and their sha256. */
export function encodePolicy(config: VlaConfig, params: ParamStore): { bytes: Buffer; hash: string } {
  return contentAddressed({ format: 'wmrl-policy-version/1', config, float: params.float, params: paramRows(params) });
}

/** A stored policy version, checked against the hash it was fetched by. */
export function decodePolicy(bytes: Uint8Array, hash: string): { config: VlaConfig; params: ParamStore } {
  const what = `policy version ${hash.slice(0, 12)}`;
  const raw = checkContent(bytes, hash, 'policy version');
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
