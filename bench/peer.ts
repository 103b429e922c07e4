// npm run bench:peer [-- --quick] [-- --rounds N] [-- --policy FILE] — the train step (batch 256,
// bench/nn-graphs.ts policyTrainer: PPO clipped surrogate + entropy, grad-norm clip 0.5, AdamW) of the
// shipped base policy: the network of models/vla-base.json's config, or of FILE's (a policy .onnx or its
// .json sidecar). One or two cameras, a second camera's own light encoder, FiLM, keypoints, role pooling,
// LayerNorm trunk, independent heads: whatever the config says. Timed on wmrl's engine (1 and 2 intra-op
// threads, and two data-parallel slices with the second on a helper thread, as `wmrl train` runs its
// updates) and on PyTorch CPU eager (bench/peer.py builds the same network from the same config; unequal
// parameter counts exit 1), alternated round by round at 1 and 2 threads so machine load hits both alike.
// One JSON object per line: each engine's median ms per step, GFLOP/s and share of the machine's nominal
// fp32 peak (FLOPs counted over the ops our train graph runs, the same work for both), and the ratios.
// PyTorch runs with glibc's allocator tuned (mmap/trim thresholds raised: the fair setting; stock it is
// page-fault bound) and stock, channels-last too. torch is not a dependency: the python is $PEER_PYTHON,
// else the first of python3 and /usr/bin/python3 that imports torch; with none the bench says so and
// exits 0.
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { sidecarPath } from '../src/nn/model-bytes.ts';
import { POLICY_KIND } from '../src/policy/model-bytes.ts';
import { WordTokenizer } from '../src/policy/tokenizer.ts';
import { type VlaConfig, parseVlaConfig } from '../src/policy/vla.ts';
import { SplitTransport } from '../src/transport/index.ts';
import { INSTRUCTION, type Trainer, policyTrainer } from './nn-graphs.ts';
import { machine } from './machine.ts';
import { emit, round } from './timing.ts';

const BATCH = 256;
const args = process.argv.slice(2);
const quick = args.includes('--quick');
if (args.includes('--help')) {
  console.log(
    'usage: npm run bench:peer [-- --quick] [-- --rounds N] [-- --policy FILE]\n\n' + 'see the header of bench/peer.ts',
  );
  process.exit(0);
}
const argValue = (name: string): string | undefined => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const roundsArg = argValue('--rounds');
const rounds = roundsArg !== undefined ? Number(roundsArg) : quick ? 2 : 5;
if (!Number.isInteger(rounds) || rounds < 1) {
  console.error(`bench:peer: --rounds must be a positive integer, got ${roundsArg}`);
  process.exit(2);
}
const stepsPerTiming = quick ? 3 : 5;
const policyPath = argValue('--policy') ?? fileURLToPath(new URL('../models/vla-base.json', import.meta.url));

/** The VLA config of a policy file (.onnx or its .json sidecar). */
function policyConfig(path: string): VlaConfig {
  const json = path.endsWith('.json') ? path : sidecarPath(path);
  const sidecar = JSON.parse(readFileSync(json, 'utf8'));
  if (sidecar.kind !== POLICY_KIND) throw new Error(`${json}: kind "${sidecar.kind}", not a ${POLICY_KIND}`);
  const c = parseVlaConfig(sidecar.config);
  if (c.autoregressive) throw new Error(`${json}: autoregressive heads; bench/peer.py mirrors independent heads only`);
  return c;
}
let config: VlaConfig;
try {
  config = policyConfig(policyPath);
} catch (e) {
  console.error(`bench:peer: --policy ${policyPath}: ${(e as Error).message}`);
  process.exit(2);
}

// the first python that imports torch
const pythons = process.env.PEER_PYTHON ? [process.env.PEER_PYTHON] : ['python3', '/usr/bin/python3'];
const probes = pythons.map((py) => ({
  py,
  r: spawnSync(py, ['-c', 'import torch; print(torch.__version__)'], { encoding: 'utf8' }),
}));
const found = probes.find((p) => p.r.status === 0);
if (!found) {
  emit({
    figure: 'peer_missing',
    note:
      `no python with torch (tried ${pythons.join(', ')}; PEER_PYTHON picks one), so there is no peer to ` +
      'measure; `pip install torch` (the CPU wheel) gives one. torch is not a dependency of wmrl.',
    error: probes.map(({ py, r }) => `${py}: ${(r.error?.message ?? r.stderr).trim().split('\n').at(-1)}`),
  });
  process.exit(0);
}
const python = found.py;

/** A PyTorch process answering one JSON line per request (bench/peer.py). */
class Peer {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly lines: AsyncIterator<string>;
  constructor(
    readonly name: string,
    env: Record<string, string>,
  ) {
    const script = fileURLToPath(new URL('./peer.py', import.meta.url));
    this.child = spawn(python, [script], { env: { ...process.env, ...env } });
    this.child.stderr.on('data', (d) => process.stderr.write(`[${name}] ${d}`));
    this.lines = createInterface({ input: this.child.stdout })[Symbol.asyncIterator]();
  }
  async ask(req: object): Promise<Record<string, number | string>> {
    this.child.stdin.write(`${JSON.stringify(req)}\n`);
    const { value, done } = await this.lines.next();
    if (done) throw new Error(`bench:peer: ${this.name} exited (see its stderr above)`);
    return JSON.parse(value);
  }
  close(): void {
    this.child.stdin.end();
  }
}

const TUNED = { MALLOC_MMAP_THRESHOLD_: String(32 << 20), MALLOC_TRIM_THRESHOLD_: String(1 << 30) };
const variants = [
  { name: 'pytorch_tuned', env: TUNED, channelsLast: false },
  { name: 'pytorch_tuned_channels_last', env: TUNED, channelsLast: true },
  { name: 'pytorch_stock', env: {}, channelsLast: false },
];
const peers = variants.map((v) => new Peer(v.name, v.env));
const M = machine();
// data-parallel: two slices of the batch, the second on a helper thread (as `wmrl train` runs it)
const helper = SplitTransport.open({ run: async () => [] }, new URL('../bin/rollout-helper.mjs', import.meta.url), 1);
const whole = { shards: 1, hosts: [] };
const ours = {
  wmrl_ort: { 1: await policyTrainer(BATCH, 1, whole, config), 2: await policyTrainer(BATCH, 2, whole, config) },
  wmrl_ort_2_slices: { 2: await policyTrainer(BATCH, 1, { shards: 2, hosts: helper.hosts }, config) },
};
const trainers = ours.wmrl_ort;
const flops = trainers[1].flops;
// every row's instruction tokens, as our feeds have them (bench/nn-graphs.ts policyFeeds)
const tokens = Array.from(new WordTokenizer(config.tokenizer).encode(INSTRUCTION));
for (const [k, p] of peers.entries()) {
  const spec = { config, batch: BATCH, tokens, channelsLast: variants[k].channelsLast };
  const r = await p.ask({ spec });
  if (k > 0) continue;
  const paramsOurs = trainers[1].params;
  emit({
    figure: 'peer_setup',
    torch: r.torch,
    python,
    policy: policyPath,
    cameras: config.cameras,
    secondEncoder: config.secondConv ? 'own' : config.cameras.length > 1 ? 'shared' : 'none',
    paramsTorch: r.params,
    paramsOurs,
  });
  if (r.params !== paramsOurs) {
    console.error(
      `bench:peer: bench/peer.py built ${r.params} parameters, our network ${paramsOurs}: the peer does not ` +
        'mirror this config (fix bench/peer.py), so its timings would compare different networks',
    );
    process.exit(1);
  }
}
emit({ figure: 'machine', model: M.model, cores: M.cores, peakGflopsFp32: round(M.peakGflops, 1), basis: M.basis });

const times = new Map<string, number[]>();
const record = (engine: string, threads: number, ms: number): void => {
  const key = `${engine}@${threads}`;
  times.set(key, [...(times.get(key) ?? []), ms]);
};
for (let r = 0; r < rounds; r++) {
  process.stderr.write(`bench:peer round ${r + 1}/${rounds}\n`);
  for (const threads of [1, 2] as const) {
    for (const [engine, byThreads] of Object.entries(ours) as [string, Record<number, Trainer>][]) {
      const t = byThreads[threads];
      if (!t) continue;
      await t.step();
      const ms: number[] = [];
      for (let s = 0; s < stepsPerTiming; s++) {
        const t0 = performance.now();
        await t.step();
        ms.push(performance.now() - t0);
      }
      record(engine, threads, median(ms));
    }
    for (const p of peers) record(p.name, threads, Number((await p.ask({ threads, steps: stepsPerTiming })).ms));
  }
}
for (const p of peers) p.close();
for (const byThreads of Object.values(ours)) for (const t of Object.values(byThreads)) await t.close();
await helper.close();

function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
}
const ms = (engine: string, threads: number): number => median(times.get(`${engine}@${threads}`)!);
for (const [key, xs] of times) {
  const [engine, threads] = key.split('@');
  const m = median(xs);
  const gflops = flops / m / 1e6;
  emit({
    figure: 'peer_train_step',
    engine,
    batch: BATCH,
    threads: Number(threads),
    ms: round(m, 1),
    msPerRound: xs.map((x) => round(x, 1)),
    gflopPerStep: round(flops / 1e9, 3),
    gflops: round(gflops, 1),
    pctOfNominalMachinePeak: round((100 * gflops) / M.peakGflops, 1),
  });
}
const oursBest = (threads: number) =>
  Math.min(...Object.keys(ours).flatMap((e) => (times.has(`${e}@${threads}`) ? [ms(e, threads)] : [])));
for (const threads of [1, 2]) {
  const mine = oursBest(threads);
  for (const v of variants)
    emit({
      figure: 'peer_ratio',
      threads,
      peer: v.name,
      oursBestMs: round(mine, 1),
      peerMs: round(ms(v.name, threads), 1),
      peerOverOurs: round(ms(v.name, threads) / mine, 2),
      note: 'above 1: ours is faster',
    });
}
const scaling = (engine: string) => round(ms(engine, 1) / ms(engine, 2), 2);
const best = (threads: number) => Math.min(...variants.map((v) => ms(v.name, threads)));
emit({
  figure: 'targets',
  fasterThanPytorch1Thread: oursBest(1) < best(1),
  fasterThanPytorch2Threads: oursBest(2) < best(2),
  pctOfMachinePeak2Threads: round((100 * flops) / oursBest(2) / 1e6 / M.peakGflops, 1),
  pctTarget: 40,
  twoThreadSpeedupOurs: round(oursBest(1) / oursBest(2), 2),
  twoThreadSpeedupPytorchTuned: scaling('pytorch_tuned'),
  speedupTarget: 1.6,
});
