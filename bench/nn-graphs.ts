// The networks bench/nn.ts measures: the VLA policy (with a PPO-style loss) and the world model, their
// random feeds, a FLOP count of a graph, and a train step of each on ORT. The policy's functions take any
// VlaConfig (bench/peer.ts passes a shipped model's); the default is the generic POLICY below.
import { Rng } from '../src/core/rng.ts';
import { Graph, type Node, type Tensor } from '../src/nn/ir.ts';
import * as o from '../src/nn/ops.ts';
import { addAdamW } from '../src/nn/optim.ts';
import { ParamStore } from '../src/nn/params.ts';
import { type Feeds, tensor } from '../src/nn/runtime.ts';
import { type ShardHost, TrainSession } from '../src/nn/train.ts';
import { type WorldModelNetConfig, worldModelLossBuilder } from '../src/nn/nets/worldmodel.ts';
import { VLA_SIZES_DEFAULT } from '../src/policy/spec-config.ts';
import { WordTokenizer } from '../src/policy/tokenizer.ts';
import {
  type VlaConfig,
  VLA_IO,
  actionScores,
  parseVlaConfig,
  vlaActionInputs,
  vlaInputs,
  vlaNet,
} from '../src/policy/vla.ts';

const WORDS = (
  'push pick place put stack the a red green blue yellow purple orange cube block to on in into left right zone ' +
  'bin top of it and then'
).split(' ');
export const TOKENIZER = WordTokenizer.fromCorpus([WORDS.join(' ')], { maxLength: 16 });
/** The instruction of every row of the policy's feeds. */
export const INSTRUCTION = 'pick the red cube and place it on the blue block';
const { proprioHidden, ...sizes } = VLA_SIZES_DEFAULT;
/** The benchmarked policy (VLA_SIZES_DEFAULT) with a 16-value proprio and the tabletop's action bins. */
export const POLICY: VlaConfig = parseVlaConfig({
  ...sizes,
  tokenizer: TOKENIZER.config,
  proprio: { name: 'proprio', dim: 16, hidden: proprioHidden },
  actions: [
    { name: 'dx', n: 11 },
    { name: 'dy', n: 11 },
    { name: 'dz', n: 11 },
    { name: 'dyaw', n: 11 },
    { name: 'grip', n: 2 },
  ],
});
export const WM: WorldModelNetConfig = {
  stateDim: 46,
  actionDim: 5,
  members: 5,
  hidden: [200, 200, 200, 200],
  act: 'silu',
};

/** PPO-style loss of `config`'s policy: clipped surrogate + entropy bonus, each a mean over `total` rows
 *  (default the batch; a data-parallel slice passes the whole batch's count). */
export function ppoLoss(g: Graph, batch: number, total = batch, config: VlaConfig = POLICY) {
  const net = vlaNet(vlaInputs(g, config, batch), config);
  const sc = actionScores(net, vlaActionInputs(g, config, batch));
  const adv = g.input('adv', [batch]);
  const ratio = o.exp(o.sub(sc.logp, g.input('old_logp', [batch])));
  const surr = o.minimum(o.mul(ratio, adv), o.mul(o.minimum(o.maximum(ratio, 0.8), 1.2), adv));
  const mean = (x: Tensor) => (total === batch ? o.meanAll(x) : o.div(o.sumAll(x), total));
  const loss = o.sub(o.neg(mean(surr)), o.mul(mean(sc.entropy), 0.01));
  return { loss, metrics: { logp: sc.logp } };
}

/** Random camera images and proprio, INSTRUCTION as every row's tokens; with `train`, random action
 *  tokens, advantages and old log-probs too. */
export function policyFeeds(batch: number, train: boolean, rng: Rng, config: VlaConfig = POLICY): Feeds {
  const [h, w] = config.imageSize;
  const f: Feeds = {};
  for (const cam of config.cameras)
    f[cam] = tensor(
      'uint8',
      Uint8Array.from({ length: batch * h * w * 3 }, () => rng.int(256)),
      [batch, h, w, 3],
    );
  const tokenizer = new WordTokenizer(config.tokenizer);
  f[VLA_IO.tokens] = tensor('int32', tokenizer.encodeBatch(Array.from({ length: batch }, () => INSTRUCTION)), [
    batch,
    tokenizer.maxLength,
  ]);
  if (config.proprio)
    f[config.proprio.name] = tensor(
      'float32',
      Float32Array.from({ length: batch * config.proprio.dim }, () => rng.range(-1, 1)),
      [batch, config.proprio.dim],
    );
  if (!train) return f;
  for (const a of config.actions)
    f[VLA_IO.action(a.name)] = tensor(
      'int32',
      Int32Array.from({ length: batch }, () => rng.int(a.n)),
      [batch],
    );
  f.adv = tensor(
    'float32',
    Float32Array.from({ length: batch }, () => rng.normal()),
    [batch],
  );
  f.old_logp = tensor(
    'float32',
    Float32Array.from({ length: batch }, () => -9 + 0.1 * rng.normal()),
    [batch],
  );
  return f;
}

/** The nodes an output depends on: what the runtime runs (it drops the rest, for example the image
 *  gradient that the Conv rule builds and nothing reads). */
function liveNodes(g: Graph): Node[] {
  const live = new Set<Node>();
  const stack = g.outputs.map((o) => o.tensor);
  while (stack.length) {
    const t = stack.pop()!;
    if (t.source.kind !== 'node' || live.has(t.source.node)) continue;
    live.add(t.source.node);
    stack.push(...t.source.node.inputs);
  }
  return g.nodes.filter((n) => live.has(n));
}

/** Conv / ConvTranspose / MatMul FLOPs of the nodes a graph runs (2 per multiply-add; elementwise ops
 *  not counted). */
export function countFlops(g: Graph, nodes: readonly Node[] = liveNodes(g)): number {
  let flops = 0;
  for (const n of nodes) {
    const out = n.outputs[0].shape;
    if (n.op === 'MatMul') flops += 2 * out.reduce((a, b) => a * b, 1) * n.inputs[0].shape[n.inputs[0].rank - 1];
    else if (n.op === 'Conv')
      flops += 2 * out.reduce((a, b) => a * b, 1) * n.inputs[1].shape.slice(1).reduce((a, b) => a * b, 1);
    else if (n.op === 'ConvTranspose')
      flops += 2 * n.inputs[0].shape.reduce((a, b) => a * b, 1) * n.inputs[1].shape.slice(1).reduce((a, b) => a * b, 1);
  }
  return flops;
}

export interface Trainer {
  step: () => Promise<unknown>;
  flops: number;
  /** The count over every node built, run or not (what earlier versions of this bench reported). */
  flopsAllNodes: number;
  params: number;
  close: () => Promise<void>;
}

/** The train step of `config`'s policy at `batch`; with `shards`, data-parallel slices (slices 1.. on
 *  `hosts`). */
export async function policyTrainer(
  batch: number,
  threads: number,
  sharding: { shards: number; hosts: readonly ShardHost[] } = { shards: 1, hosts: [] },
  config: VlaConfig = POLICY,
): Promise<Trainer> {
  const build = (g: Graph) => ppoLoss(g, batch / sharding.shards, batch, config);
  const g = new Graph();
  const { loss, metrics } = ppoLoss(g, batch, batch, config);
  const params = ParamStore.init(g.params, 1);
  addAdamW(g, loss, {}, metrics);
  const ts = await TrainSession.create(build, params, { threads, optimizer: { maxGradNorm: 0.5 }, ...sharding });
  const feeds = policyFeeds(batch, true, new Rng(batch), config);
  return {
    step: () => ts.step(feeds, 1e-5),
    flops: countFlops(g),
    flopsAllNodes: countFlops(g, g.nodes),
    params: params.size,
    close: () => ts.close(),
  };
}

export async function worldModelTrainer(batch: number, threads: number): Promise<Trainer> {
  const build = worldModelLossBuilder(WM, batch);
  const g = new Graph();
  addAdamW(g, build(g).loss);
  const params = ParamStore.init(g.params, 2);
  const ts = await TrainSession.create(build, params, { threads });
  const rng = new Rng(3);
  const rand = (shape: number[]) =>
    tensor(
      'float32',
      Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => rng.normal()),
      shape,
    );
  const feeds = { state: rand([5, batch, 46]), action: rand([5, batch, 5]), target: rand([5, batch, 46]) };
  return {
    step: () => ts.step(feeds, 1e-4),
    flops: countFlops(g),
    flopsAllNodes: countFlops(g, g.nodes),
    params: params.size,
    close: () => ts.close(),
  };
}

/** The same policy for bench/nn-tfjs.ts (tfjsPolicyStep, with the batch added). */
export const POLICY_SPEC = {
  image: 64,
  conv: POLICY.conv,
  imageFeatures: 256,
  vocab: TOKENIZER.vocabSize,
  maxLength: 16,
  embedDim: 32,
  proprioDim: 16,
  proprioHidden: 64,
  trunk: 256,
  heads: [11, 11, 11, 11, 2],
};
