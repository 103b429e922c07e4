// Behaviour cloning of the VLA: rows of (observation, expert action tokens) held in memory (BcDataset) or
// read on demand (BcRowSource, e.g. shards on disk), seeded minibatches with random-shift image
// augmentation, and a train step that minimises the summed cross-entropy of the action-token heads.
// Batches depend only on (seed, step) and the rows, never on where the rows live, so a resumed run sees
// exactly the batches the uninterrupted run would have seen. Node-only (onnxruntime-node).
import { dcos } from '../core/dmath.ts';
import { Rng } from '../core/rng.ts';
import type { Graph } from '../nn/ir.ts';
import * as o from '../nn/ops.ts';
import type { ParamStore } from '../nn/params.ts';
import { type Feeds, type RuntimeOptions, floatData, tensor } from '../nn/runtime.ts';
import { type LossBuild, TrainSession } from '../nn/train.ts';
import { PAD_ID, UNK_ID } from './tokenizer.ts';
import { VLA_IO, type VlaConfig, actionScores, vlaActionInputs, vlaInputs, vlaNet } from './vla.ts';

/** One row per sample: every camera's uint8 HWC image, proprio, instruction token ids, label tokens. */
export interface BcDataset {
  size: number;
  images: Record<string, Uint8Array>;
  proprio: Float32Array | null;
  /** Token ids, size x tokenizer.maxLength. */
  tokens: Int32Array;
  /** Target bin per action dimension, size entries each. */
  labels: Record<string, Int32Array>;
  /** The episode (demonstration index) each row came from. */
  episode?: Int32Array;
  /** Rows are drawn in proportion to these (default: uniformly). */
  weights?: Float32Array;
}

/** What one row holds; a row source must match the VLA config's. */
export interface BcRowLayout {
  imageSize: [number, number];
  cameras: string[];
  proprio: { name: string; dim: number } | null;
  maxLength: number;
  /** Action heads in config order. */
  actions: { name: string; n: number }[];
}

/** Rows read on demand: only the rows of a batch are ever in memory. */
export interface BcRowSource {
  readonly size: number;
  readonly layout: BcRowLayout;
  /** Copies row rows[b] into slot b of `into` (a dataset of rows.length rows). */
  readRows(rows: Int32Array, into: BcDataset): void;
}

export type BcData = BcDataset | BcRowSource;

export function bcRowLayout(config: VlaConfig): BcRowLayout {
  return {
    imageSize: [config.imageSize[0], config.imageSize[1]],
    cameras: [...config.cameras],
    proprio: config.proprio ? { name: config.proprio.name, dim: config.proprio.dim } : null,
    maxLength: config.tokenizer.maxLength,
    actions: config.actions.map((a) => ({ name: a.name, n: a.n })),
  };
}

const isSource = (d: BcData): d is BcRowSource => 'readRows' in d;

export interface BcOptions {
  batch: number;
  lr: number;
  /** Cosine decay from lr to lr * minLrFraction over totalSteps (constant when totalSteps is 0). */
  totalSteps?: number;
  minLrFraction?: number;
  weightDecay?: number;
  maxGradNorm?: number;
  /** Random-shift augmentation: pad by edge replication, crop back at a random offset in [-shift, shift]. */
  shift?: number;
  /** Each instruction word becomes `<unk>` with this probability (0: off), so that words the tokenizer
   *  does not know leave the policy's reading of the rest intact. */
  wordDropout?: number;
  seed: number;
  runtime?: RuntimeOptions;
  /** Consecutive non-finite (skipped) steps before step() throws (nn/train.ts; default 20). */
  maxNonFiniteSteps?: number;
}

export interface BcStepResult {
  step: number;
  lr: number;
  loss: number;
  gradNorm: number;
  finite: boolean;
  /** Fraction of batch rows whose most likely token equals the label, per action dimension. */
  accuracy: Record<string, number>;
}

/** Checks shapes against the config; the error names the bad field. */
export function checkBcDataset(ds: BcDataset, config: VlaConfig): void {
  const [h, w] = config.imageSize;
  if (!Number.isInteger(ds.size) || ds.size < 1)
    throw new RangeError(`BC dataset: size must be a positive integer, got ${ds.size}`);
  for (const cam of config.cameras) {
    if (ds.images[cam]?.length !== ds.size * h * w * 3)
      throw new RangeError(`BC dataset: images.${cam} must hold ${ds.size} x ${h}x${w}x3 bytes`);
  }
  if (config.proprio && ds.proprio?.length !== ds.size * config.proprio.dim)
    throw new RangeError(`BC dataset: proprio must hold ${ds.size} x ${config.proprio.dim} floats`);
  if (ds.tokens.length !== ds.size * config.tokenizer.maxLength)
    throw new RangeError(`BC dataset: tokens must hold ${ds.size} x ${config.tokenizer.maxLength} ids`);
  for (const a of config.actions) {
    const l = ds.labels[a.name];
    if (l?.length !== ds.size) throw new RangeError(`BC dataset: labels.${a.name} must hold ${ds.size} tokens`);
    for (let i = 0; i < l.length; i++)
      if (l[i] < 0 || l[i] >= a.n)
        throw new RangeError(`BC dataset: labels.${a.name}[${i}] = ${l[i]} is outside [0, ${a.n})`);
  }
}

/** Checks a row source's layout against the config; the error names the first field that differs. */
export function checkBcRowSource(src: BcRowSource, config: VlaConfig): void {
  if (!Number.isInteger(src.size) || src.size < 1)
    throw new RangeError(`BC rows: size must be a positive integer, got ${src.size}`);
  const want = bcRowLayout(config);
  for (const key of Object.keys(want) as (keyof BcRowLayout)[]) {
    const [a, b] = [JSON.stringify(src.layout[key]), JSON.stringify(want[key])];
    if (a !== b) throw new RangeError(`BC rows: ${key} is ${a}, the policy needs ${b}`);
  }
}

/** An empty dataset of `size` rows shaped by the config. */
export function emptyBcDataset(config: VlaConfig, size: number): BcDataset {
  const [h, w] = config.imageSize;
  return {
    size,
    images: Object.fromEntries(config.cameras.map((c) => [c, new Uint8Array(size * h * w * 3)])),
    proprio: config.proprio ? new Float32Array(size * config.proprio.dim) : null,
    tokens: new Int32Array(size * config.tokenizer.maxLength),
    labels: Object.fromEntries(config.actions.map((a) => [a.name, new Int32Array(size)])),
  };
}

/** The rows `rows` of `data`, in that order, as a dataset of rows.length rows. */
export function gatherBcRows(data: BcData, config: VlaConfig, rows: Int32Array): BcDataset {
  const out = emptyBcDataset(config, rows.length);
  if (isSource(data)) {
    data.readRows(rows, out);
    return out;
  }
  const [h, w] = config.imageSize;
  const px = h * w * 3;
  const L = config.tokenizer.maxLength;
  const d = config.proprio?.dim ?? 0;
  rows.forEach((r, b) => {
    for (const cam of config.cameras) out.images[cam].set(data.images[cam].subarray(r * px, (r + 1) * px), b * px);
    if (out.proprio) out.proprio.set(data.proprio!.subarray(r * d, (r + 1) * d), b * d);
    out.tokens.set(data.tokens.subarray(r * L, (r + 1) * L), b * L);
    for (const a of config.actions) out.labels[a.name][b] = data.labels[a.name][r];
  });
  return out;
}

/** Loss graph: mean over the batch of -sum_d log pi(label_d | obs); the full log-probs are metrics. */
export function bcLossBuilder(config: VlaConfig, batch: number): (g: Graph) => LossBuild {
  return (g) => {
    const net = vlaNet(vlaInputs(g, config, batch), config);
    const sc = actionScores(net, vlaActionInputs(g, config, batch));
    const metrics: LossBuild['metrics'] = {};
    for (const a of config.actions) metrics[VLA_IO.logp(a.name)] = net.logp[a.name];
    return { loss: o.neg(o.meanAll(sc.logp)), metrics };
  };
}

/** Copies image `src` (h x w x 3) into `dst` at `offset`, shifted by (dy, dx) with edge replication. */
export function shiftImage(
  src: Uint8Array,
  srcOffset: number,
  dst: Uint8Array,
  dstOffset: number,
  h: number,
  w: number,
  dy: number,
  dx: number,
): void {
  for (let y = 0; y < h; y++) {
    const sy = Math.min(h - 1, Math.max(0, y + dy));
    for (let x = 0; x < w; x++) {
      const sx = Math.min(w - 1, Math.max(0, x + dx));
      const s = srcOffset + 3 * (sy * w + sx);
      const d = dstOffset + 3 * (y * w + x);
      dst[d] = src[s];
      dst[d + 1] = src[s + 1];
      dst[d + 2] = src[s + 2];
    }
  }
}

/** Cumulative row weights per weighted dataset (computed once): a draw is a binary search. */
const cumulative = new WeakMap<Float32Array, Float64Array>();
function weightedDraw(weights: Float32Array): (rng: Rng) => number {
  let c = cumulative.get(weights);
  if (!c) {
    c = new Float64Array(weights.length);
    let total = 0;
    weights.forEach((w, k) => (c![k] = total += w));
    if (!(total > 0)) throw new RangeError('BC dataset: weights must have a positive sum');
    cumulative.set(weights, c);
  }
  const sums = c;
  return (rng) => {
    const u = rng.uniform() * sums[sums.length - 1];
    let lo = 0;
    let hi = sums.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sums[mid] > u) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
}

/** The minibatch of step `step`: rows drawn with replacement from Rng(seed, step), gathered, then
 *  augmented (word dropout draws from a stream of its own, so the rows and shifts do not depend on it). */
export function bcBatch(
  data: BcData,
  config: VlaConfig,
  batch: number,
  seed: number,
  step: number,
  shift = 0,
  wordDropout = 0,
): { feeds: Feeds; rows: Int32Array } {
  const rng = new Rng(seed, 0x6bc00000 + step);
  const [h, w] = config.imageSize;
  const px = h * w * 3;
  const L = config.tokenizer.maxLength;
  const weights = isSource(data) ? undefined : data.weights;
  const draw = weights ? weightedDraw(weights) : () => rng.int(data.size);
  const rows = Int32Array.from({ length: batch }, () => draw(rng));
  const got = gatherBcRows(data, config, rows);
  const feeds: Feeds = {};
  for (const cam of config.cameras) {
    const img = new Uint8Array(batch * px);
    for (let b = 0; b < batch; b++) {
      const dy = shift > 0 ? rng.int(2 * shift + 1) - shift : 0;
      const dx = shift > 0 ? rng.int(2 * shift + 1) - shift : 0;
      shiftImage(got.images[cam], b * px, img, b * px, h, w, dy, dx);
    }
    feeds[cam] = tensor('uint8', img, [batch, h, w, 3]);
  }
  const tokens = got.tokens;
  if (wordDropout > 0) {
    const drop = new Rng(seed, 0x6bd00000 + step);
    for (let k = 0; k < tokens.length; k++)
      if (tokens[k] !== PAD_ID && drop.uniform() < wordDropout) tokens[k] = UNK_ID;
  }
  feeds[VLA_IO.tokens] = tensor('int32', tokens, [batch, L]);
  if (config.proprio) feeds[config.proprio.name] = tensor('float32', got.proprio!, [batch, config.proprio.dim]);
  for (const a of config.actions) feeds[VLA_IO.action(a.name)] = tensor('int32', got.labels[a.name], [batch]);
  return { feeds, rows };
}

/** Learning rate at `step` under cosine decay. */
export function bcLearningRate(opts: Pick<BcOptions, 'lr' | 'totalSteps' | 'minLrFraction'>, step: number): number {
  const total = opts.totalSteps ?? 0;
  if (total <= 0) return opts.lr;
  const min = opts.lr * (opts.minLrFraction ?? 0.1);
  const t = Math.min(1, step / total);
  return min + (opts.lr - min) * 0.5 * (1 + dcos(Math.PI * t));
}

export class BcTrainer {
  private steps = 0;
  /** Datasets and row sources already checked against the config (each once, on its first step). */
  private readonly checked = new WeakSet<BcData>();

  private constructor(
    private readonly session: TrainSession,
    readonly config: VlaConfig,
    readonly opts: BcOptions,
  ) {}

  static async create(config: VlaConfig, params: ParamStore, opts: BcOptions): Promise<BcTrainer> {
    if (!Number.isInteger(opts.batch) || opts.batch < 1)
      throw new RangeError(`BC: batch must be a positive integer, got ${opts.batch}`);
    if (!(opts.lr > 0)) throw new RangeError(`BC: lr must be > 0, got ${opts.lr}`);
    const session = await TrainSession.create(bcLossBuilder(config, opts.batch), params, {
      ...opts.runtime,
      optimizer: { weightDecay: opts.weightDecay ?? 0, maxGradNorm: opts.maxGradNorm ?? 1 },
      maxNonFiniteSteps: opts.maxNonFiniteSteps,
    });
    return new BcTrainer(session, config, opts);
  }

  /** Batches consumed so far (the next batch is bcBatch(..., stepCount)); a skipped non-finite step counts. */
  get stepCount(): number {
    return this.steps;
  }

  async step(ds: BcData): Promise<BcStepResult> {
    if (!this.checked.has(ds)) {
      if (isSource(ds)) checkBcRowSource(ds, this.config);
      else checkBcDataset(ds, this.config);
      this.checked.add(ds);
    }
    const step = this.stepCount;
    const opt = this.opts;
    const { feeds } = bcBatch(ds, this.config, opt.batch, opt.seed, step, opt.shift ?? 0, opt.wordDropout ?? 0);
    const lr = bcLearningRate(this.opts, step);
    const r = await this.session.step(feeds, lr);
    this.steps++;
    const accuracy: Record<string, number> = {};
    for (const a of this.config.actions) {
      const lp = floatData(r.metrics[VLA_IO.logp(a.name)]);
      const labels = feeds[VLA_IO.action(a.name)].data as Int32Array;
      let hits = 0;
      for (let b = 0; b < labels.length; b++) {
        let best = 0;
        for (let k = 1; k < a.n; k++) if (lp[b * a.n + k] > lp[b * a.n + best]) best = k;
        if (best === labels[b]) hits++;
      }
      accuracy[a.name] = hits / labels.length;
    }
    return { step: step + 1, lr, loss: r.loss, gradNorm: r.gradNorm, finite: r.finite, accuracy };
  }

  params(): ParamStore {
    return this.session.params();
  }

  exportOptimizer(): ReturnType<TrainSession['exportOptimizer']> {
    return this.session.exportOptimizer();
  }

  /** Continue a run: AdamW moments and step, and the number of batches already consumed. */
  resume(s: ReturnType<TrainSession['exportOptimizer']>, batchesDone: number): void {
    this.session.importOptimizer(s);
    this.steps = batchesDone;
  }

  close(): Promise<void> {
    return this.session.close();
  }
}
