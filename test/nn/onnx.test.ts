import { describe, expect, it } from 'vitest';
import { DYN, Graph } from '../../src/nn/ir.ts';
import * as o from '../../src/nn/ops.ts';
import { mlp } from '../../src/nn/layers.ts';
import { readOnnx, writeOnnx } from '../../src/nn/onnx.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { ProtoWriter, readFields, readPackedInts } from '../../src/nn/proto.ts';
import { Session, floatData, sessionOptions, tensor } from '../../src/nn/runtime.ts';

describe('protobuf wire format', () => {
  it('round-trips varints (negative int64 included), strings and packed ints', () => {
    const bytes = new ProtoWriter()
      .int(1, 300)
      .int(2, -1)
      .string(3, 'héllo')
      .packedInts(4, [0, 1, 127, 128, 2 ** 40])
      .finish();
    const f = readFields(bytes);
    expect(f[0].int).toBe(300);
    expect(f[1].int).toBe(-1);
    expect(new TextDecoder().decode(f[2].bytes)).toBe('héllo');
    expect(readPackedInts(f[3])).toEqual([0, 1, 127, 128, 2 ** 40]);
  });
});

describe('ONNX writer', () => {
  it('writes opset 18, a dynamic batch dim, baked initializers, and only the nodes the outputs need', async () => {
    const g = new Graph();
    const x = g.input('x', [DYN, 3]);
    g.input('unused', [2]);
    const y = mlp(x, 'net', [4], 2);
    o.exp(y); // dead node
    g.output('y', y);
    g.output('y_again', y); // the same value under a second name
    g.output('x_copy', x); // an input as an output
    const params = ParamStore.init(g.params, 3);
    const model = writeOnnx(g, { initializers: params.asMap() });
    const s = readOnnx(model);
    expect(s.opset).toBe(18);
    expect(s.inputs.map((i) => [i.name, i.shape])).toEqual([['x', [-1, 3]]]);
    expect(s.outputs.map((i) => i.name)).toEqual(['y', 'y_again', 'x_copy']);
    expect(s.ops).not.toContain('Exp');
    for (const name of params.names)
      expect(Array.from(s.initializers.get(name)!.data as Float32Array)).toEqual(Array.from(params.get(name)));
    const session = await Session.create(model);
    for (const n of [1, 4]) {
      const out = await session.run({ x: tensor('float32', new Float32Array(n * 3).fill(0.25), [n, 3]) });
      expect(out.y.dims).toEqual([n, 2]);
      expect(Array.from(floatData(out.y_again))).toEqual(Array.from(floatData(out.y)));
    }
    await session.close();
    await session.close(); // idempotent
    await expect(session.run({})).rejects.toThrow(/after close/);
  });

  it('feeds parameters as inputs when no value is given, and names missing feeds', async () => {
    const g = new Graph();
    const x = g.input('x', [2, 3]);
    g.output('y', mlp(x, 'net', [], 2));
    const s = await Session.create(writeOnnx(g));
    expect([...s.inputNames].sort()).toEqual(['net.out.b', 'net.out.w', 'x']);
    await expect(s.run({ x: tensor('float32', new Float32Array(6), [2, 3]) })).rejects.toThrow(
      /missing inputs net\.out\.w, net\.out\.b/,
    );
    await s.close();
  });

  it('refuses inconsistent shapes, duplicate names and wrong initializer sizes', () => {
    const g = new Graph();
    const a = g.input('a', [2, 3]);
    expect(() => o.add(a, g.input('b', [4]))).toThrow(/do not broadcast/);
    expect(() => g.input('a', [1])).toThrow(/already used/);
    expect(() => o.matmul(a, g.input('c', [2, 3]))).toThrow(/inner dimensions/);
    expect(() => o.reshape(a, [4, 2])).toThrow(/cannot become/);
    const w = g.param('w', [3, 2], { kind: 'zeros' });
    g.output('y', o.matmul(a, w));
    expect(() => writeOnnx(g, { initializers: new Map([['w', new Float32Array(5)]]) })).toThrow(
      /parameter w has 5 values/,
    );
  });

  it('sets threads, spinning off and the optimisation level per dtype', () => {
    const f32 = sessionOptions({ threads: 2 });
    expect(f32.intraOpNumThreads).toBe(2);
    expect(f32.graphOptimizationLevel).toBe('all');
    expect(sessionOptions({}, 'float64').graphOptimizationLevel).toBe('basic');
    expect(sessionOptions().intraOpNumThreads).toBe(1);
    expect((f32.extra as { session: { intra_op: { allow_spinning: string } } }).session.intra_op.allow_spinning).toBe(
      '0',
    );
    expect(() => sessionOptions({ threads: 0 })).toThrow(/threads/);
  });
});
