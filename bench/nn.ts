// npm run bench:nn [-- --quick] — one JSON object per line: ORT train-step and forward speed of the
// VLA policy and the world model, achieved GFLOP/s against this machine's fp32 peak, the same
// networks in tfjs-wasm for the speed ratio, the AutoResearch agent's act (12 autoregressive slots),
// and how loaded the (shared) machine was. The networks, their feeds and train steps: bench/nn-graphs.ts.
import { loadavg } from 'node:os';
import { readFileSync } from 'node:fs';
import { Rng } from '../src/core/rng.ts';
import { Graph } from '../src/nn/ir.ts';
import * as o from '../src/nn/ops.ts';
import { ParamStore } from '../src/nn/params.ts';
import { type Feeds, tensor } from '../src/nn/runtime.ts';
import { ForwardSession, TrainSession } from '../src/nn/train.ts';
import { writeOnnx } from '../src/nn/onnx.ts';
import { Session } from '../src/nn/runtime.ts';
import { worldModelForwardBuilder } from '../src/nn/nets/worldmodel.ts';
import { VLA_IO, vlaForwardBuilder } from '../src/policy/vla.ts';
import {
  POLICY,
  POLICY_SPEC,
  WM,
  countFlops,
  policyFeeds,
  policyTrainer,
  ppoLoss,
  worldModelTrainer,
} from './nn-graphs.ts';
import { initTfjsWasm, tfjsPolicyStep, tfjsWorldModelStep } from './nn-tfjs.ts';
import { AutoResearchEnv, loadTask } from '../src/autoresearch/index.ts';
import { TRAIN_RESEARCH_TASKS, agentConfig } from '../src/experiment/research.ts';
import { PolicySampler } from '../src/policy/sampler.ts';
import { machine } from './machine.ts';
import { timeAsync } from './timing.ts';

const quick = process.argv.includes('--quick');
const MIN_MS = quick ? 400 : 1500;
const emit = (o: Record<string, unknown>): void => console.log(JSON.stringify(o));
const round = (x: number, d = 2): number => Math.round(x * 10 ** d) / 10 ** d;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// ---- machine load -----------------------------------------------------------------------------
function procStat(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3] + f[4];
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/** Share of the machine's CPU used by other processes between start() and stop(). */
function loadMonitor() {
  const s0 = procStat();
  const c0 = process.cpuUsage();
  const la0 = loadavg()[0];
  return () => {
    const s1 = procStat();
    const c1 = process.cpuUsage(c0);
    const tick = 100; // USER_HZ
    const ours = ((c1.user + c1.system) / 1e6) * tick;
    const busy = s1.busy - s0.busy;
    const total = s1.total - s0.total;
    return {
      loadavg1Start: la0,
      loadavg1End: loadavg()[0],
      machineBusyPct: round((100 * busy) / total, 1),
      othersBusyPct: round((100 * Math.max(0, busy - ours)) / total, 1),
    };
  };
}

async function timeIt(fn: () => Promise<unknown>): Promise<{ ms: number; iters: number }> {
  await fn();
  await fn();
  const times: number[] = [];
  const start = performance.now();
  while (performance.now() - start < MIN_MS || times.length < 3) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return { ms: median(times), iters: times.length };
}

// ---- figures -----------------------------------------------------------------------------------
const M = machine();
emit({
  figure: 'machine',
  model: M.model,
  cores: M.cores,
  mhz: M.mhz,
  peakGflopsFp32: round(M.peakGflops, 1),
  peakBasis: M.basis,
  node: process.version,
  quick,
});
/** Best-of-N 1024^3 SGEMM through ORT: the practical fp32 ceiling on this (turbo-clocked, shared) machine. */
async function sgemm(threads: number): Promise<number> {
  const n = 1024;
  const g = new Graph();
  g.output('c', o.matmul(g.input('a', [n, n]), g.input('b', [n, n])));
  const s = await Session.create(writeOnnx(g), { threads });
  const a = tensor(
    'float32',
    Float32Array.from({ length: n * n }, (_, i) => (i % 13) / 13),
    [n, n],
  );
  let best = Infinity;
  for (let i = 0; i < (quick ? 6 : 15); i++) {
    const t0 = performance.now();
    await s.run({ a, b: a });
    best = Math.min(best, performance.now() - t0);
  }
  await s.close();
  return (2 * n ** 3) / best / 1e6;
}

const stop = loadMonitor();
const ort: Record<string, number> = {};
const gemm: Record<number, number> = {};
const perf = (flops: number, ms: number, threads: number) => {
  const gflops = flops / ms / 1e6;
  return {
    gflops: round(gflops, 1),
    pctOfNominalPeakUsedCores: round((100 * gflops) / ((M.peakGflops * threads) / M.cores), 1),
    pctOfNominalMachinePeak: round((100 * gflops) / M.peakGflops, 1),
    pctOfSgemm: round((100 * gflops) / gemm[threads], 1),
  };
};

/** Baked vs fed weights, sampler rebuild time, and the sampler/trainer log-prob gap (1 thread). */
async function extraPolicyFigures(fwd: ForwardSession, gp: Graph): Promise<void> {
  const params = ParamStore.init(gp.params, 1);
  const batch = 64;
  const feeds = policyFeeds(batch, false, new Rng(7));
  const fed = await Session.create(writeOnnx(gp), { threads: 1 });
  const withWeights: Feeds = { ...feeds };
  for (const p of gp.params) withWeights[p.name] = tensor('float32', params.get(p.name), p.shape);
  const [tb, tf] = [await timeIt(() => fwd.run(feeds)), await timeIt(() => fed.run(withWeights))];
  await fed.close();
  emit({
    figure: 'ort_policy_forward_baked_vs_fed',
    batch,
    bakedMs: round(tb.ms, 3),
    fedMs: round(tf.ms, 3),
    speedup: round(tf.ms / tb.ms, 2),
  });
  const t = await timeIt(() => fwd.update(params));
  emit({
    figure: 'ort_policy_sampler_rebuild',
    ms: round(t.ms),
    note: 'serialise the graph with new weights + open a session',
  });
  const trainer = await TrainSession.create((g) => ppoLoss(g, batch), params);
  const train = policyFeeds(batch, true, new Rng(7));
  const [out, step] = [await fwd.run(train), await trainer.step(train, 0)];
  await trainer.close();
  const trainLogp = step.metrics.logp.data as Float32Array;
  let gap = 0;
  for (let i = 0; i < batch; i++) {
    let lp = 0;
    for (const a of POLICY.actions)
      lp += (out[VLA_IO.logp(a.name)].data as Float32Array)[
        i * a.n + (train[VLA_IO.action(a.name)].data as Int32Array)[i]
      ];
    gap = Math.max(gap, Math.abs(lp - trainLogp[i]));
  }
  emit({ figure: 'sampler_vs_trainer_logp', batch, maxAbsDiff: gap, target: 1e-5 });
}

for (const threads of [1, 2]) {
  gemm[threads] = await sgemm(threads);
  emit({
    figure: 'ort_sgemm_1024',
    threads,
    gflops: round(gemm[threads], 1),
    pctOfNominalPeakUsedCores: round((100 * gemm[threads]) / ((M.peakGflops * threads) / M.cores), 1),
    note: 'above 100% means the cores run above the nominal clock (turbo)',
  });
  for (const [net, batch] of [
    ['policy', 64],
    ['policy', 256],
    ['worldmodel', 256],
  ] as const) {
    const tr = net === 'policy' ? await policyTrainer(batch, threads) : await worldModelTrainer(batch, threads);
    const t = await timeIt(tr.step);
    await tr.close();
    ort[`${net}${batch}_t${threads}`] = t.ms;
    emit({
      figure: `ort_${net}_train_step`,
      batch,
      threads,
      ms: round(t.ms),
      samplesPerSec: round((1000 * batch) / t.ms, 0),
      iters: t.iters,
      ...perf(tr.flops, t.ms, threads),
      gflopPerStep: round(tr.flops / 1e9, 3),
      gflopPerStepAllNodes: round(tr.flopsAllNodes / 1e9, 3),
      params: tr.params,
    });
  }
  const gp = new Graph();
  for (const [k, t] of Object.entries(vlaForwardBuilder(POLICY)(gp))) gp.output(k, t);
  const fwd = await ForwardSession.create(vlaForwardBuilder(POLICY), ParamStore.init(gp.params, 1), { threads });
  for (const batch of [1, 64, 512]) {
    const gb = new Graph();
    for (const [k, t] of Object.entries(vlaForwardBuilder(POLICY, batch)(gb))) gb.output(k, t);
    const feeds = policyFeeds(batch, false, new Rng(7));
    const t = await timeIt(() => fwd.run(feeds));
    emit({
      figure: 'ort_policy_forward',
      batch,
      threads,
      weights: 'baked',
      ms: round(t.ms, 3),
      samplesPerSec: round((1000 * batch) / t.ms, 0),
      ...perf(countFlops(gb), t.ms, threads),
    });
  }
  if (threads === 1) await extraPolicyFigures(fwd, gp);
  await fwd.close();
  const gw = new Graph();
  worldModelForwardBuilder(WM)(gw);
  const wfwd = await ForwardSession.create(worldModelForwardBuilder(WM), ParamStore.init(gw.params, 1), { threads });
  const rng = new Rng(4);
  const wf = {
    state: tensor(
      'float32',
      Float32Array.from({ length: 256 * 46 }, () => rng.normal()),
      [256, 46],
    ),
    action: tensor('float32', new Float32Array(256 * 5), [256, 5]),
  };
  const tw = await timeIt(() => wfwd.run(wf));
  await wfwd.close();
  emit({
    figure: 'ort_worldmodel_forward',
    batch: 256,
    members: 5,
    threads,
    ms: round(tw.ms, 3),
    samplesPerSec: round((1000 * 256) / tw.ms, 0),
  });
}

// ---- tfjs-wasm reference, interleaved step by step with ORT so both see the same machine load ----
const tfInfo = await initTfjsWasm();
emit({ figure: 'tfjs_backend', ...tfInfo, note: 'tfjs-wasm runs single-threaded in Node (no multithread support)' });
const rounds = quick ? 2 : 5;
for (const [net, batch] of [
  ['policy', 64],
  ['policy', 256],
  ['worldmodel', 256],
] as const) {
  const tfStep =
    net === 'policy'
      ? await tfjsPolicyStep({ ...POLICY_SPEC, batch })
      : await tfjsWorldModelStep({ batch, members: 5, stateDim: 46, actionDim: 5, hidden: [200, 200, 200, 200] });
  const ours = [
    await (net === 'policy' ? policyTrainer(batch, 1) : worldModelTrainer(batch, 1)),
    await (net === 'policy' ? policyTrainer(batch, 2) : worldModelTrainer(batch, 2)),
  ];
  for (const o of ours) await o.step();
  const times: number[][] = [[], [], []];
  for (let r = 0; r < rounds; r++) {
    for (const [i, fn] of [tfStep, ours[0].step, ours[1].step].entries()) {
      const t0 = performance.now();
      await fn();
      times[i].push(performance.now() - t0);
    }
  }
  for (const o of ours) await o.close();
  const [tfMs, t1, t2] = times.map(median);
  emit({
    figure: `tfjs_${net}_train_step`,
    batch,
    ms: round(tfMs),
    samplesPerSec: round((1000 * batch) / tfMs, 0),
    rounds,
  });
  emit({
    figure: 'speedup_vs_tfjs',
    net,
    batch,
    rounds,
    ortMs1Thread: round(t1),
    ortMs2Threads: round(t2),
    ratio1Thread: round(tfMs / t1, 1),
    ratio2Threads: round(tfMs / t2, 1),
  });
}

// the AutoResearch agent: one act samples its 12 autoregressive slots (the trunk once, the head graph per slot)
{
  const config = agentConfig();
  const g = new Graph();
  vlaForwardBuilder(config)(g);
  const sampler = await PolicySampler.create(config, ParamStore.init(g.params, 0));
  for (const batch of [8, 64]) {
    const env = new AutoResearchEnv(loadTask(TRAIN_RESEARCH_TASKS[0]), batch, {
      source: 'executor',
      outcomes: async () => [],
    });
    const { obs } = await env.reset({ seed: 0 });
    const rngs = () => Array.from({ length: batch }, (_, i) => new Rng([1, i], 5));
    const ms = await timeAsync(() => sampler.act(obs, batch, rngs()), 5, MIN_MS);
    emit({
      figure: 'agent_act',
      batch,
      slots: config.actions.length,
      ms: round(ms),
      usPerEnv: round((1000 * ms) / batch, 1),
    });
  }
  await sampler.close();
}

const target = ort.policy256_t2;
emit({ figure: 'targets', policy256TrainMs2Threads: round(target), targetMs: 200, met: target <= 200 });
emit({
  figure: 'machine_load',
  ...stop(),
  note: 'othersBusyPct: CPU used by other processes during the run, % of all cores',
});
