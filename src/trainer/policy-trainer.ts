// The VLA's RL train step: fixed-size batches of sampled steps (real rows, then weight-0 padding, so one
// session serves every iteration), feeds for the PPO loss (loss.ts), one TrainSession step (forward +
// backward + AdamW in one ORT call), and the train/inference log-prob gap. Node-only (onnxruntime-node).
import type { BatchObs, ObsValue } from '../env/types.ts';
import { type FloatType, Graph } from '../nn/ir.ts';
import { writeOnnx } from '../nn/onnx.ts';
import type { ParamStore } from '../nn/params.ts';
import {
  type Feeds,
  type OrtTensor,
  type RuntimeOptions,
  Session,
  floatData,
  scalarOf,
  scalarTensor,
  tensor,
} from '../nn/runtime.ts';
import { type OptimizerState, type ShardHost, TrainSession } from '../nn/train.ts';
import { policyFeeds } from '../policy/sampler.ts';
import { WordTokenizer } from '../policy/tokenizer.ts';
import { VLA_IO, type VlaConfig, type VlaConfigInput, parseVlaConfig } from '../policy/vla.ts';
import { PPO_DEFAULTS, PPO_IO, type PpoCoefficients, ppoLossBuilder } from './loss.ts';

/** One sampled step of a rollout. */
export interface PolicySample {
  /** The step's observation as a batch of one (env contract layout: images h*w*3, text string[1]). */
  obs: BatchObs;
  /** The sampled token per action dimension. */
  tokens: Record<string, number>;
  /** The sampler's joint log-prob of the tokens (sum over dimensions, as PolicySampler.act gives it). */
  behaviourLogp: number;
  /** The frozen reference policy's joint log-prob of the same tokens. */
  refLogp: number;
  /** Standardised, already weighted advantage. */
  advantage: number;
  /** Row weight >= 0 (rows are averaged as sum(w x) / sum(w)). */
  weight: number;
}

export interface PolicyTrainerOptions {
  /** Rows per step: the session's static batch; fewer real rows are padded with weight 0. */
  batch: number;
  /** Learning rate of step() when it is given none. */
  lr: number;
  weightDecay?: number;
  /** Global gradient-norm clip (default 1). */
  maxGradNorm?: number;
  /** Loss coefficients of step() when it is given none (default PPO_DEFAULTS). */
  coefficients?: Partial<PpoCoefficients>;
  runtime?: RuntimeOptions;
  maxNonFiniteSteps?: number;
  /** Data-parallel steps: each batch in this many row slices (TrainSession `shards`; decides results). */
  shards?: number;
  /** Where slices 1.. run (helper threads); where they run decides nothing. */
  hosts?: readonly ShardHost[];
  /** The rollouts' sampling temperature: the loss scores the tempered policy (default 1). */
  temperature?: number;
}

export interface PolicyStepResult {
  loss: number;
  gradNorm: number;
  /** False: a NaN/Inf loss or gradient, the step was skipped (nn/train.ts). */
  finite: boolean;
  policyLoss: number;
  kl: number;
  entropy: number;
  clipFraction: number;
  approxKl: number;
  /** The trainer's joint log-prob of each real row before the update. */
  logp: Float64Array;
  /** max |logp - behaviourLogp| over the real rows: the train/inference gap on fresh rows. */
  logpGap: number;
}

/** Row i of a batched observation of n envs, as a batch of one (what a PolicySample holds). */
export function obsRow(obs: BatchObs, n: number, i: number): BatchObs {
  const out: BatchObs = {};
  for (const [k, v] of Object.entries(obs)) {
    if (Array.isArray(v)) out[k] = [v[i]];
    else out[k] = v.slice((i * v.length) / n, ((i + 1) * v.length) / n);
  }
  return out;
}

/** Stacks batch-of-one observations into one batch of rows.length. */
export function stackObs(rows: readonly BatchObs[], names: readonly string[]): BatchObs {
  const out: BatchObs = {};
  for (const name of names) {
    const first = rows[0][name];
    if (first === undefined) throw new Error(`policy trainer: row 0 has no observation "${name}"`);
    if (Array.isArray(first)) {
      out[name] = rows.map((r, i) => {
        const v = r[name];
        if (!Array.isArray(v) || v.length !== 1)
          throw new Error(`policy trainer: row ${i} observation "${name}" must be string[1]`);
        return v[0];
      });
      continue;
    }
    const size = first.length;
    const Ctor = first.constructor as new (n: number) => Exclude<ObsValue, string[]>;
    const arr = new Ctor(rows.length * size);
    rows.forEach((r, i) => {
      const v = r[name];
      if (!(v instanceof Ctor) || v.length !== size)
        throw new Error(`policy trainer: row ${i} observation "${name}" must be ${Ctor.name}(${size}) like row 0`);
      arr.set(v, i * size);
    });
    out[name] = arr;
  }
  return out;
}

function checkRow(s: PolicySample, i: number, config: VlaConfig): void {
  for (const a of config.actions) {
    const t = s.tokens[a.name];
    if (!Number.isInteger(t) || t < 0 || t >= a.n)
      throw new RangeError(`policy trainer: row ${i} tokens.${a.name} = ${t} is outside [0, ${a.n})`);
  }
  for (const k of ['behaviourLogp', 'refLogp', 'advantage', 'weight'] as const) {
    if (!Number.isFinite(s[k])) throw new RangeError(`policy trainer: row ${i} ${k} = ${s[k]} is not finite`);
  }
  if (s.weight < 0) throw new RangeError(`policy trainer: row ${i} weight = ${s.weight} is negative`);
}

/** Feeds of the PPO loss for `rows` (1..batch of them) padded to `batch` with copies of row 0 at weight 0. */
export function ppoFeeds(
  config: VlaConfig,
  tokenizer: WordTokenizer,
  rows: readonly PolicySample[],
  batch: number,
  coef: PpoCoefficients,
  float: FloatType = 'float32',
): Feeds {
  if (rows.length < 1 || rows.length > batch)
    throw new RangeError(`policy trainer: ${rows.length} rows for a batch of ${batch}`);
  rows.forEach((r, i) => checkRow(r, i, config));
  const at = (b: number): PolicySample => rows[b < rows.length ? b : 0];
  const all = Array.from({ length: batch }, (_, b) => at(b));
  const names = [...config.cameras, config.instruction, ...(config.proprio ? [config.proprio.name] : [])];
  const feeds = policyFeeds(
    config,
    tokenizer,
    stackObs(
      all.map((r) => r.obs),
      names,
    ),
    batch,
  );
  const floats = (f: (r: PolicySample, b: number) => number): OrtTensor => {
    const v = all.map(f);
    return tensor(float, float === 'float32' ? Float32Array.from(v) : Float64Array.from(v), [batch]);
  };
  if (config.proprio && float === 'float64') {
    const p = feeds[config.proprio.name];
    feeds[config.proprio.name] = tensor('float64', Float64Array.from(p.data as Float32Array), p.dims);
  }
  for (const a of config.actions)
    feeds[VLA_IO.action(a.name)] = tensor(
      'int32',
      Int32Array.from(all, (r) => r.tokens[a.name]),
      [batch],
    );
  feeds[PPO_IO.behaviourLogp] = floats((r) => r.behaviourLogp);
  feeds[PPO_IO.refLogp] = floats((r) => r.refLogp);
  feeds[PPO_IO.advantage] = floats((r) => r.advantage);
  feeds[PPO_IO.weight] = floats((r, b) => (b < rows.length ? r.weight : 0));
  const total = Math.max(
    rows.reduce((a, r) => a + (float === 'float32' ? Math.fround(r.weight) : r.weight), 0),
    1e-12,
  );
  feeds[PPO_IO.weightTotal] = scalarTensor(total, float);
  feeds[PPO_IO.clip] = scalarTensor(coef.clip, float);
  feeds[PPO_IO.clipHigh] = scalarTensor(coef.clipHigh ?? coef.clip, float);
  feeds[PPO_IO.klCoef] = scalarTensor(coef.klCoef, float);
  feeds[PPO_IO.entropyCoef] = scalarTensor(coef.entropyCoef, float);
  return feeds;
}

function checkCoefficients(c: PpoCoefficients): PpoCoefficients {
  if (!(c.clip > 0)) throw new RangeError(`policy trainer: clip must be > 0, got ${c.clip}`);
  if (c.clipHigh !== undefined && !(c.clipHigh > 0))
    throw new RangeError(`policy trainer: clipHigh must be > 0, got ${c.clipHigh}`);
  if (!(c.klCoef >= 0)) throw new RangeError(`policy trainer: klCoef must be >= 0, got ${c.klCoef}`);
  if (!(c.entropyCoef >= 0)) throw new RangeError(`policy trainer: entropyCoef must be >= 0, got ${c.entropyCoef}`);
  return c;
}

export class PolicyTrainer {
  readonly tokenizer: WordTokenizer;
  private evalSession: Session | null = null;

  private constructor(
    private readonly session: TrainSession,
    readonly config: VlaConfig,
    readonly opts: PolicyTrainerOptions,
    private readonly float: FloatType,
  ) {
    this.tokenizer = new WordTokenizer(config.tokenizer);
  }

  static async create(
    configIn: VlaConfigInput,
    params: ParamStore,
    opts: PolicyTrainerOptions,
  ): Promise<PolicyTrainer> {
    const config = parseVlaConfig(configIn);
    if (!Number.isInteger(opts.batch) || opts.batch < 1)
      throw new RangeError(`policy trainer: batch must be a positive integer, got ${opts.batch}`);
    const shards = opts.shards ?? 1;
    if (!Number.isInteger(shards) || shards < 1 || opts.batch % shards !== 0)
      throw new RangeError(`policy trainer: shards (${shards}) must divide the batch (${opts.batch})`);
    if (!(opts.lr >= 0)) throw new RangeError(`policy trainer: lr must be >= 0, got ${opts.lr}`);
    checkCoefficients({ ...PPO_DEFAULTS, ...opts.coefficients });
    if (!((opts.temperature ?? 1) > 0))
      throw new RangeError(`policy trainer: temperature must be > 0, got ${opts.temperature}`);
    const session = await TrainSession.create(ppoLossBuilder(config, opts.batch / shards, opts.temperature), params, {
      ...opts.runtime,
      optimizer: { weightDecay: opts.weightDecay ?? 0, maxGradNorm: opts.maxGradNorm ?? 1 },
      maxNonFiniteSteps: opts.maxNonFiniteSteps,
      shards,
      hosts: opts.hosts,
    });
    return new PolicyTrainer(session, config, opts, params.float);
  }

  private coefficients(over: Partial<PpoCoefficients>): PpoCoefficients {
    return checkCoefficients({ ...PPO_DEFAULTS, ...this.opts.coefficients, ...over });
  }

  /** One AdamW step on `rows` (1..batch). Metrics use the parameters before the update. */
  async step(
    rows: readonly PolicySample[],
    lr = this.opts.lr,
    coef: Partial<PpoCoefficients> = {},
  ): Promise<PolicyStepResult> {
    const feeds = ppoFeeds(this.config, this.tokenizer, rows, this.opts.batch, this.coefficients(coef), this.float);
    const r = await this.session.step(feeds, lr);
    const logp = this.jointLogp(r.metrics, rows.length);
    const m = (name: string): number => scalarOf(r.metrics[name]);
    return {
      loss: r.loss,
      gradNorm: r.gradNorm,
      finite: r.finite,
      policyLoss: m(PPO_IO.policyLoss),
      kl: m(PPO_IO.kl),
      entropy: m(PPO_IO.entropy),
      clipFraction: m(PPO_IO.clipFraction),
      approxKl: m(PPO_IO.approxKl),
      logp,
      logpGap: maxGap(logp, rows),
    };
  }

  /** The trainer's joint log-prob of each row's tokens under the current parameters (no update). */
  async logp(rows: readonly PolicySample[]): Promise<Float64Array> {
    const feeds = ppoFeeds(this.config, this.tokenizer, rows, this.opts.batch, this.coefficients({}), this.float);
    const params = this.session.params();
    for (const name of params.names) feeds[name] = tensor(this.float, params.get(name), params.info(name).shape);
    return this.jointLogp(await (await this.forward()).run(feeds), rows.length);
  }

  /** Joint log-prob of the first n rows: the per-dimension values summed in float64, in the
   *  sampler's order, so that equal per-dimension bits give an equal joint. */
  private jointLogp(out: Record<string, OrtTensor>, n: number): Float64Array {
    const joint = new Float64Array(n);
    for (const a of this.config.actions) {
      const lp = floatData(out[PPO_IO.logpDim(a.name)]);
      for (let i = 0; i < n; i++) joint[i] += lp[i];
    }
    return joint;
  }

  /** max |trainer log-prob - stored behaviour log-prob| over `rows` for the current parameters. */
  async logpGap(rows: readonly PolicySample[]): Promise<number> {
    return maxGap(await this.logp(rows), rows);
  }

  /** The loss graph's forward part with the parameters fed, built on first use. */
  private async forward(): Promise<Session> {
    if (!this.evalSession) {
      const g = new Graph(this.float);
      const { metrics } = ppoLossBuilder(this.config, this.opts.batch, this.opts.temperature)(g);
      for (const a of this.config.actions) g.output(PPO_IO.logpDim(a.name), metrics![PPO_IO.logpDim(a.name)]);
      this.evalSession = await Session.create(writeOnnx(g), this.opts.runtime, this.float);
    }
    return this.evalSession;
  }

  /** Optimizer steps taken (skipped non-finite steps do not count). */
  get stepCount(): number {
    return this.session.stepCount;
  }

  params(): ParamStore {
    return this.session.params();
  }

  exportOptimizer(): OptimizerState {
    return this.session.exportOptimizer();
  }

  importOptimizer(s: OptimizerState): void {
    this.session.importOptimizer(s);
  }

  async close(): Promise<void> {
    await this.evalSession?.close();
    await this.session.close();
  }
}

function maxGap(logp: Float64Array, rows: readonly PolicySample[]): number {
  let gap = 0;
  rows.forEach((r, i) => (gap = Math.max(gap, Math.abs(logp[i] - r.behaviourLogp))));
  return gap;
}
