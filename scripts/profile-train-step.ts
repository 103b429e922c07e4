// node bin/run-ts.mjs scripts/profile-train-step.ts [BATCH=256] [THREADS=1] — the benchmarked policy
// train step (bench/nn-graphs.ts) under onnxruntime's profiler: each op type's share of the step's
// kernel time, then the slowest nodes. What to optimise next in the gradient table reads off here.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { policyFeeds, ppoLoss } from '../bench/nn-graphs.ts';
import { Rng } from '../src/core/rng.ts';
import { Graph } from '../src/nn/ir.ts';
import { writeOnnx } from '../src/nn/onnx.ts';
import { TRAIN_IO, addAdamW } from '../src/nn/optim.ts';
import { ParamStore } from '../src/nn/params.ts';
import { sessionOptions } from '../src/nn/runtime.ts';

const [batch, threads] = [Number(process.argv[2] ?? 256), Number(process.argv[3] ?? 1)];
const STEPS = 6;
const g = new Graph();
const { loss, metrics } = ppoLoss(g, batch);
const params = ParamStore.init(g.params, 1);
const layout = addAdamW(g, loss, { maxGradNorm: 0.5 }, metrics);
const dir = mkdtempSync(join(tmpdir(), 'wmrl-profile-'));
const session = await ort.InferenceSession.create(writeOnnx(g), {
  ...sessionOptions({ threads }),
  enableProfiling: true,
  profileFilePrefix: join(dir, 'train'),
});
const feeds = { ...policyFeeds(batch, true, new Rng(1)) } as Record<string, ort.Tensor>;
const scalar = (v: number) => new ort.Tensor('float32', Float32Array.of(v), []);
feeds[TRAIN_IO.lr] = scalar(1e-5);
feeds[TRAIN_IO.step] = scalar(0);
for (const p of layout.trainable) {
  const shape = [...params.info(p).shape];
  const n = params.get(p).length;
  feeds[p] = new ort.Tensor('float32', params.get(p).slice() as Float32Array, shape);
  feeds[TRAIN_IO.m(p)] = new ort.Tensor('float32', new Float32Array(n), shape);
  feeds[TRAIN_IO.v(p)] = new ort.Tensor('float32', new Float32Array(n), shape);
}
const t0 = performance.now();
for (let i = 0; i < STEPS; i++) await session.run(feeds);
const wallMs = (performance.now() - t0) / STEPS;
session.endProfiling();
type Event = { cat: string; name: string; dur: number; args?: { op_name?: string } };
const events = JSON.parse(readFileSync(join(dir, readdirSync(dir)[0]), 'utf8')) as Event[];
rmSync(dir, { recursive: true, force: true });
const byOp = new Map<string, number>();
const byNode = new Map<string, number>();
for (const e of events) {
  if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
  const op = e.args?.op_name ?? '?';
  byOp.set(op, (byOp.get(op) ?? 0) + e.dur);
  const node = `${op} ${e.name.replace(/_kernel_time$/, '')}`;
  byNode.set(node, (byNode.get(node) ?? 0) + e.dur);
}
const total = [...byOp.values()].reduce((a, b) => a + b, 0);
const ms = (us: number) => (us / STEPS / 1000).toFixed(2).padStart(8);
console.log(`batch ${batch}, ${threads} thread(s): ${wallMs.toFixed(1)} ms per step, ${ms(total)} ms in kernels`);
for (const [op, us] of [...byOp].sort((a, b) => b[1] - a[1]).slice(0, 16))
  console.log(`${op.padEnd(22)} ${ms(us)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%`);
console.log('slowest nodes:');
for (const [node, us] of [...byNode].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`${ms(us)} ms  ${node}`);
