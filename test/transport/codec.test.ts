import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import { sha256Hex } from '../../src/core/sha256.ts';
import { ParamStore } from '../../src/nn/params.ts';
import type { GroupJob, Rollout } from '../../src/trainer/rollouts.ts';
import {
  JOB_FORMAT,
  JobSchema,
  type RolloutJob,
  decodeJson,
  decodePolicy,
  decodeResult,
  decodeValue,
  encodeJson,
} from '../../src/transport/codec.ts';
import {
  encodePolicy,
  encodeResult,
  encodeValue,
  groupOfJob,
  jobGroup,
  jobId,
  parsePayload,
} from '../../src/transport/codec.ts';
import { setup } from '../trainer/code-lock.ts';

const bytes = (x: ArrayBufferView) => Buffer.from(x.buffer, x.byteOffset, x.byteLength);
const roundTrip = <T>(v: T) => decodeValue(encodeValue(v)) as T;

describe('encodeValue / decodeValue', () => {
  it('round-trips typed arrays bit for bit, views with an offset included, nested in objects and arrays', () => {
    const f64 = Float64Array.from([1.5, -0, NaN, Infinity, 0.1 + 0.2, 5e-324]);
    const buf = new ArrayBuffer(32);
    new Uint8Array(buf).forEach((_, i, a) => (a[i] = i * 37 + 11));
    const value = {
      f32: new Float32Array(buf, 4, 3), // byteOffset 4
      f64: f64.subarray(2, 5), // byteOffset 16
      i32: Int32Array.from([-1, 2 ** 31 - 1, -(2 ** 31), 0]),
      u8: new Uint8Array(buf, 3, 7),
      list: [{ deep: [Float32Array.from([0.1, -0, 3.4e38])] }, Int32Array.from([7])] as [
        { deep: Float32Array[] },
        Int32Array,
      ],
    };
    const out = roundTrip(value);
    for (const k of ['f32', 'f64', 'i32', 'u8'] as const) expect(out[k].constructor, k).toBe(value[k].constructor);
    expect([out.f32.length, out.f64.length]).toEqual([3, 3]);
    expect(bytes(out.f32).equals(bytes(value.f32))).toBe(true);
    expect(bytes(out.f64).equals(bytes(value.f64))).toBe(true);
    expect(bytes(out.i32).equals(bytes(value.i32))).toBe(true);
    expect([...out.u8]).toEqual([...value.u8]);
    const deep = out.list[0].deep[0];
    expect(deep).toBeInstanceOf(Float32Array);
    expect(bytes(deep).equals(bytes(value.list[0].deep[0]))).toBe(true);
    expect(Object.is(deep[1], -0)).toBe(true);
    expect(out.list[1]).toBeInstanceOf(Int32Array);
    expect([...out.list[1]]).toEqual([7]);
  });

  it('decodes a Node Buffer as a plain Uint8Array with the same bytes', () => {
    const b = Buffer.from([0, 1, 254, 255, 128]);
    const out = roundTrip({ b }).b;
    expect(Object.getPrototypeOf(out)).toBe(Uint8Array.prototype);
    expect([...out]).toEqual([0, 1, 254, 255, 128]);
  });

  it('keeps -0, NaN, Infinity, -Infinity and ordinary doubles', () => {
    const out = roundTrip([-0, NaN, Infinity, -Infinity, 0.1 + 0.2, 0, { x: -0 }]);
    expect(Object.is(out[0], -0)).toBe(true);
    expect(out.slice(1, 5)).toEqual([NaN, Infinity, -Infinity, 0.30000000000000004]);
    expect(Object.is(out[5], 0)).toBe(true);
    expect(Object.is((out[6] as { x: number }).x, -0)).toBe(true);
    expect(Object.is(roundTrip(-0), -0)).toBe(true);
  });

  it('property: any doubles survive in a Float64Array and in a plain array', () => {
    fc.assert(
      fc.property(fc.array(fc.double()), (xs) => {
        const out = roundTrip({ typed: Float64Array.from(xs), plain: xs });
        expect(out.typed).toBeInstanceOf(Float64Array);
        expect(bytes(out.typed).equals(bytes(Float64Array.from(xs)))).toBe(true);
        expect(out.plain.length).toBe(xs.length);
        xs.forEach((x, i) => expect(Object.is(out.plain[i], x)).toBe(true));
      }),
    );
  });

  it('refuses a payload whose header or array references do not fit', () => {
    /** A payload with this JSON head and `tail` bytes after it (as encodeValue lays them out). */
    const payload = (head: unknown, tail = 0) => {
      const json = Buffer.from(JSON.stringify(head));
      const out = Buffer.alloc(((8 + json.length + 7) & ~7) + tail);
      out.write('WMRL');
      out.writeUInt32LE(json.length, 4);
      json.copy(out, 8);
      return out;
    };
    expect((decodeValue(payload({ $a: 'i32', at: 0, bytes: 8 }, 8)) as Int32Array).length).toBe(2);
    expect(() => decodeValue(payload({ $a: 'f32', at: 0, bytes: 6 }, 8))).toThrow(
      /Float32Array of 6 bytes at 0 does not fit/,
    );
    expect(() => decodeValue(payload({ $a: 'f64', at: 0, bytes: 16 }, 8))).toThrow(InputError);
    expect(() => decodeValue(payload({ $a: 'u8', at: 4, bytes: 1 }, 8))).toThrow(/does not fit/); // unaligned
    expect(() => decodeValue(payload({ $a: 'u8', at: -8, bytes: 1 }, 8))).toThrow(/does not fit/);
    expect(() => decodeValue(Buffer.from('{"a":1}'))).toThrow(/no WMRL header/);
    const cut = payload({ a: 1 });
    cut.writeUInt32LE(1000, 4);
    expect(() => decodeValue(cut)).toThrow(/1000-byte header/);
    // only our own tags: inherited names are plain objects
    expect(decodeValue(payload({ $a: 'constructor', at: 0, bytes: 0 }))).toEqual({
      $a: 'constructor',
      at: 0,
      bytes: 0,
    });
  });

  it('keeps -0, NaN and Infinity in JSON job payloads too (encodeJson / decodeJson)', () => {
    const out = decodeJson(JSON.stringify(JSON.parse(encodeJson({ row: [-0, 1.5, NaN, -Infinity] })))) as {
      row: number[];
    };
    expect(Object.is(out.row[0], -0)).toBe(true);
    expect(out.row.slice(1)).toEqual([1.5, NaN, -Infinity]);
    expect(JSON.stringify({ row: [-0] })).toBe('{"row":[0]}'); // what plain JSON would have done
  });
});

/** An anchor job (world-model jobs add a worldModel). */
const job: RolloutJob = {
  format: JOB_FORMAT,
  run: '00112233445566aa',
  build: '0123456789abcdef',
  task: { family: 'toy' },
  policy: 'ab'.repeat(32),
  seed: 5,
  samplesPerRollout: 2,
  group: { kind: 'anchor', task: 0, start: 100, startIndex: 0, keys: [8, 9, 10] },
};

describe('jobs', () => {
  it('parses a valid job', () => {
    expect(parsePayload(encodeValue(job), JobSchema, 'job')).toEqual(job);
  });

  it('refuses a wrong field with an InputError naming its path', () => {
    const bad = { ...job, group: { ...job.group, keys: [8, -1] } };
    expect(() => parsePayload(encodeValue(bad), JobSchema, 'job')).toThrow(InputError);
    expect(() => parsePayload(encodeValue(bad), JobSchema, 'job')).toThrow(/^job: \$\.group\.keys\[1\]: /);
    expect(() => parsePayload(encodeValue({ ...job, policy: 'xyz' }), JobSchema, 'job')).toThrow(
      /\$\.policy: a sha256 hex digest/,
    );
    expect(() => parsePayload(encodeValue({ ...job, extra: 1 }), JobSchema, 'job')).toThrow(InputError);
    expect(() => parsePayload(Buffer.from('{not json'), JobSchema, 'job')).toThrow(/^job: not a payload/);
  });

  it('jobId is deterministic and depends on the policy hash, the world-model snapshot and the first key', () => {
    expect(jobId(job)).toBe(jobId(structuredClone(job)));
    expect(jobId(job)).toBe(`00112233445566aa-${'ab'.repeat(8)}-real-8`);
    const model = { ...job, worldModel: 'ef'.repeat(32), group: { ...job.group, kind: 'model' as const } };
    expect(jobId(model)).toBe(`00112233445566aa-${'ab'.repeat(8)}-${'ef'.repeat(8)}-8`);
    expect(parsePayload(encodeValue(model), JobSchema, 'job')).toEqual(model);
    // real-branch runs world-model groups in physics (no worldModel); anchors never name one
    expect(parsePayload(encodeValue({ ...model, worldModel: undefined }), JobSchema, 'job').worldModel).toBe(undefined);
    expect(() => parsePayload(encodeValue({ ...job, worldModel: 'ef'.repeat(32) }), JobSchema, 'job')).toThrow(
      /\$\.worldModel: anchors run in physics/,
    );
    expect(jobId({ ...job, policy: 'cd'.repeat(32) })).not.toBe(jobId(job));
    expect(jobId({ ...job, group: { ...job.group, keys: [11, 9, 10] } })).not.toBe(jobId(job));
  });
});

describe('groups in jobs', () => {
  it("carry a branch's exact engine copy (base64 in the JSON payload) and the recording request bit for bit", () => {
    const exact = Uint8Array.from({ length: 300 }, (_, k) => (k * 37) % 256);
    const group: GroupJob = {
      kind: 'model',
      task: 0,
      start: 7,
      keys: [3, 4],
      branch: {
        task: 0,
        seed: 7,
        elapsed: 12,
        row: [0.5, -0, 1e-9],
        exact,
        origin: { elapsed: 0, row: [], actions: new Int32Array() },
      },
      horizon: 10,
    };
    const model = { ...job, worldModel: 'ef'.repeat(32), group: jobGroup(group), recordStates: true };
    const sent = JobSchema.parse(decodeJson(encodeJson(model)));
    expect(sent.recordStates).toBe(true);
    const back = groupOfJob(sent.group);
    expect(back.branch!.exact).toEqual(exact); // the origin (how to replay) stays with the trainer
    expect(back).toEqual({ ...group, branch: { ...group.branch, origin: undefined }, startIndex: undefined });
    expect(() =>
      JobSchema.parse({ ...job, group: { ...job.group, branch: { ...job.group.branch, exact: '*' } } }),
    ).toThrow();
  });
});

describe('policy versions', () => {
  const { config, params } = setup().policy;

  it('round-trips config and params exactly, under the sha256 of the bytes', () => {
    const a = encodePolicy(config, params);
    expect(a.hash).toBe(sha256Hex(a.bytes));
    expect(encodePolicy(config, params)).toEqual(a);
    const back = decodePolicy(a.bytes, a.hash);
    expect(back.config).toEqual(config);
    expect(back.params.float).toBe(params.float);
    expect(back.params.names).toEqual(params.names);
    expect(params.names.length).toBeGreaterThan(1);
    for (const name of params.names) {
      expect(back.params.info(name)).toEqual(params.info(name));
      expect(bytes(back.params.get(name)).equals(bytes(params.get(name)))).toBe(true);
    }
  });

  it('refuses bytes altered by one character', () => {
    const { bytes: original, hash } = encodePolicy(config, params);
    const altered = Buffer.from(original);
    altered[altered.indexOf('wmrl-policy-version/1') + 20] = '2'.charCodeAt(0);
    expect(altered.equals(original)).toBe(false);
    expect(() => decodePolicy(altered, hash)).toThrow(InputError);
    expect(() => decodePolicy(altered, hash)).toThrow(/hash to/);
  });

  it('refuses a correctly hashed version whose parameters do not match the network', () => {
    const missing = new ParamStore(params.float);
    for (const n of params.names.slice(1)) missing.add(params.info(n), params.get(n));
    const m = encodePolicy(config, missing);
    expect(() => decodePolicy(m.bytes, m.hash)).toThrow(InputError);
    expect(() => decodePolicy(m.bytes, m.hash)).toThrow(new RegExp(`missing "${params.names[0]}"`));

    const name = params.names.find((n) => params.info(n).shape.length > 1)!; // flattened: same count
    const reshaped = new ParamStore(params.float);
    for (const n of params.names) {
      reshaped.add(n === name ? { ...params.info(n), shape: [params.get(n).length] } : params.info(n), params.get(n));
    }
    const r = encodePolicy(config, reshaped);
    expect(() => decodePolicy(r.bytes, r.hash)).toThrow(InputError);
    expect(() => decodePolicy(r.bytes, r.hash)).toThrow(/has shape/);
  });
});

describe('results', () => {
  const rollout = (key: number): Rollout => ({
    key,
    seed: 3,
    reward: 0.5,
    rewardVar: 0,
    success: false,
    start: 0,
    length: 2,
    actions: Int32Array.from([1, 2]),
    states: Float32Array.from([0, -0, 1]),
    samples: [{ obs: { img: new Uint8Array([1, 2]) }, tokens: { a: 1 }, behaviourLogp: -0.25 }],
  });

  it('reads back the result of the job it was written for', () => {
    const out = decodeResult(encodeResult('job-1', [rollout(4), rollout(5)]), 'job-1', [4, 5]);
    expect(out.map((r) => r.key)).toEqual([4, 5]);
    expect(bytes(out[0].states!).equals(bytes(rollout(4).states!))).toBe(true);
  });

  it('refuses a result written for another job id or other keys', () => {
    const text = encodeResult('job-1', [rollout(4), rollout(5)]);
    expect(() => decodeResult(text, 'job-2', [4, 5])).toThrow(InputError);
    expect(() => decodeResult(text, 'job-2', [4, 5])).toThrow(/belongs to job job-1/);
    expect(() => decodeResult(text, 'job-1', [4, 6])).toThrow(InputError);
    expect(() => decodeResult(text, 'job-1', [5, 4])).toThrow(InputError);
    expect(() => decodeResult(text, 'job-1', [4])).toThrow(InputError);
  });
});
