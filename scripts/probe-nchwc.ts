// node bin/run-ts.mjs scripts/probe-nchwc.ts [C=3 H=64 O=16 K=5 P=2 BLOCK=16 THREADS=1]: the first
// convolution of the policy as a plain Conv and as onnxruntime's blocked NchwcConv (domain
// com.microsoft.nchwc, the filter reordered in the graph as its NCHWc transformer does offline), timed side
// by side. onnxruntime 1.30 refuses the second model ("not a registered function/op"): its blocked kernels
// serve only weights it can reorder at load, so the train graph, whose weights are inputs, cannot reach them.
import * as ort from 'onnxruntime-node';
import { attribute, tensorProto, valueInfo } from '../src/nn/onnx.ts';
import { ProtoWriter } from '../src/nn/proto.ts';

const arg = (i: number, dflt: number) => Number(process.argv[i] ?? dflt);
const [N, C, H, O, K, S, P] = [256, arg(2, 3), arg(3, 64), arg(4, 16), arg(5, 5), 2, arg(6, 2)];
const [B, threads] = [arg(7, 16), arg(8, 1)];
const Ho = Math.floor((H + 2 * P - K) / S) + 1;
const vi = (name: string, shape: number[]) => valueInfo(name, 'float32', shape);
const ints = (name: string, v: number[]) => attribute(name, { ints: v });
const int = (name: string, v: number) => attribute(name, { i: v });
function node(op: string, ins: string[], outs: string[], attrs: ProtoWriter[], domain = '') {
  const w = new ProtoWriter();
  for (const t of ins) w.string(1, t);
  for (const t of outs) w.string(2, t);
  w.string(3, `${op}_${outs[0]}`).string(4, op);
  for (const a of attrs) w.message(5, a);
  if (domain) w.string(7, domain);
  return w;
}
const i64 = (name: string, v: number[]) =>
  tensorProto(name, { dtype: 'int64', shape: [v.length], data: BigInt64Array.from(v.map(BigInt)) });
function model(nchwc: boolean) {
  const g = new ProtoWriter();
  const conv = [ints('strides', [S, S]), ints('pads', [P, P, P, P]), ints('kernel_shape', [K, K])];
  if (!nchwc) g.message(1, node('Conv', ['X', 'W', 'Bias'], ['Y'], conv));
  else {
    const Ob = Math.ceil(O / B);
    g.message(1, node('Reshape', ['W', 's1'], ['w1'], []));
    g.message(1, node('Transpose', ['w1'], ['w2'], [ints('perm', [0, 2, 3, 4, 1])]));
    g.message(1, node('Reshape', ['w2', 's2'], ['Wr'], []));
    g.message(5, i64('s1', [Ob, B, C, K, K]));
    g.message(5, i64('s2', [Ob * B, C, K, K]));
    g.message(1, node('NchwcConv', ['X', 'Wr', 'Bias'], ['Yb'], conv, 'com.microsoft.nchwc'));
    g.message(1, node('ReorderOutput', ['Yb'], ['Y'], [int('channels', O)], 'com.microsoft.nchwc'));
  }
  g.string(2, 'probe');
  g.message(11, vi('X', [N, C, H, H]))
    .message(11, vi('W', [O, C, K, K]))
    .message(11, vi('Bias', [O]));
  g.message(12, vi('Y', [N, O, Ho, Ho]));
  const m = new ProtoWriter().int(1, 8).string(2, 'probe');
  m.message(7, g).message(8, new ProtoWriter().string(1, '').int(2, 18));
  if (nchwc) m.message(8, new ProtoWriter().string(1, 'com.microsoft.nchwc').int(2, 1));
  return m.finish();
}
const opts = {
  intraOpNumThreads: threads,
  interOpNumThreads: 1,
  graphOptimizationLevel: 'all' as const,
  executionMode: 'sequential' as const,
  extra: { session: { allow_released_opsets_only: '0' } },
};
const feeds = {
  X: new ort.Tensor(
    'float32',
    Float32Array.from({ length: N * C * H * H }, (_, i) => Math.sin(i)),
    [N, C, H, H],
  ),
  W: new ort.Tensor(
    'float32',
    Float32Array.from({ length: O * C * K * K }, (_, i) => Math.cos(i) * 0.1),
    [O, C, K, K],
  ),
  Bias: new ort.Tensor(
    'float32',
    Float32Array.from({ length: O }, (_, i) => i * 0.01),
    [O],
  ),
};
const plain = await ort.InferenceSession.create(model(false), opts);
const blocked = await ort.InferenceSession.create(model(true), opts).catch((e: Error) => {
  console.log(JSON.stringify({ nchwc: 'refused', error: e.message.split('\n')[0] }));
  process.exit(0);
});
const sessions = [plain, blocked];
const outs = [];
for (const s of sessions) outs.push((await s.run(feeds)).Y.data as Float32Array);
let maxd = 0;
for (let i = 0; i < outs[0].length; i++) maxd = Math.max(maxd, Math.abs(outs[0][i] - outs[1][i]));
console.log('max |diff|', maxd);
const t = [[], []] as number[][];
for (let r = 0; r < 15; r++)
  for (const k of [0, 1]) {
    const t0 = performance.now();
    await sessions[k].run(feeds);
    t[k].push(performance.now() - t0);
  }
const med = (a: number[]) => a.sort((x, y) => x - y)[a.length >> 1];
console.log(JSON.stringify({ C, H, O, K, conv_ms: med(t[0]), nchwc_ms: med(t[1]) }));
