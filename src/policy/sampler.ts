// Policy inference: a ForwardSession with the weights baked in, observation feeding, seeded sampling of
// action tokens, and the sampler's exact log-probabilities for the trainer to store.
import type { BatchObs } from '../env/types.ts';
import { dexp } from '../core/dmath.ts';
import type { Rng } from '../core/rng.ts';
import type { ParamStore } from '../nn/params.ts';
import { type Feeds, type RuntimeOptions, floatData, tensor } from '../nn/runtime.ts';
import { ForwardSession } from '../nn/train.ts';
import { WordTokenizer } from './tokenizer.ts';
import { VLA_IO, type VlaConfig, type VlaConfigInput, parseVlaConfig, vlaForwardBuilder } from './vla.ts';

export interface PolicyForward {
  /** Log-probabilities [N * n] per action dimension (row-major). */
  logp: Record<string, Float32Array>;
  value: Float32Array | null;
}

export interface PolicyAction {
  /** Sampled bin index per env, per action dimension. */
  actions: Record<string, Int32Array>;
  /** Joint log-probability of the sampled tokens per env, summed from the sampler's float32 values. */
  logp: Float64Array;
  logpPerDim: Record<string, Float32Array>;
  value: Float32Array | null;
}

/** Builds the network's feeds from a batched observation (env contract layout). */
export function policyFeeds(config: VlaConfig, tokenizer: WordTokenizer, obs: BatchObs, n: number): Feeds {
  const [h, w] = config.imageSize;
  const feeds: Feeds = {};
  for (const cam of config.cameras) {
    const img = obs[cam];
    if (!(img instanceof Uint8Array) || img.length !== n * h * w * 3) throw new Error(`policy: observation "${cam}" must be Uint8Array(${n}*${h}*${w}*3)`);
    feeds[cam] = tensor('uint8', img, [n, h, w, 3]);
  }
  const text = obs[config.instruction];
  if (!Array.isArray(text) || text.length !== n) throw new Error(`policy: observation "${config.instruction}" must be string[${n}]`);
  feeds[VLA_IO.tokens] = tensor('int32', tokenizer.encodeBatch(text), [n, tokenizer.maxLength]);
  if (config.proprio) {
    const p = obs[config.proprio.name];
    if (!(p instanceof Float32Array) || p.length !== n * config.proprio.dim) throw new Error(`policy: observation "${config.proprio.name}" must be Float32Array(${n}*${config.proprio.dim})`);
    feeds[config.proprio.name] = tensor('float32', p, [n, config.proprio.dim]);
  }
  return feeds;
}

/** Index drawn from log-probabilities with deterministic exp and the project's Rng. */
export function sampleLogits(logp: Float32Array, offset: number, n: number, rng: Rng): number {
  if (probs.length < n) probs = new Float64Array(n);
  const p = probs;
  let total = 0;
  for (let k = 0; k < n; k++) total += p[k] = dexp(logp[offset + k]);
  let u = rng.uniform() * total;
  for (let k = 0; k < n; k++) {
    u -= p[k];
    if (u < 0) return k;
  }
  return n - 1;
}
/** sampleLogits' scratch (reused: sampling runs on one thread and keeps nothing). */
let probs = new Float64Array(32);

function argmax(logp: Float32Array, offset: number, n: number): number {
  let best = 0;
  for (let k = 1; k < n; k++) if (logp[offset + k] > logp[offset + best]) best = k;
  return best;
}

export class PolicySampler {
  readonly config: VlaConfig;
  readonly tokenizer: WordTokenizer;

  private constructor(private readonly session: ForwardSession, config: VlaConfig) {
    this.config = config;
    this.tokenizer = new WordTokenizer(config.tokenizer);
  }

  static async create(config: VlaConfigInput, params: ParamStore, opts: RuntimeOptions = {}): Promise<PolicySampler> {
    const c = parseVlaConfig(config);
    return new PolicySampler(await ForwardSession.create(vlaForwardBuilder(c), params, opts), c);
  }

  /** ONNX bytes of the current sampler (weights included, dynamic batch). */
  get model(): Uint8Array {
    return this.session.model;
  }

  async forward(obs: BatchObs, n: number): Promise<PolicyForward> {
    const out = await this.session.run(policyFeeds(this.config, this.tokenizer, obs, n));
    const logp: Record<string, Float32Array> = {};
    for (const a of this.config.actions) logp[a.name] = floatData(out[VLA_IO.logp(a.name)]) as Float32Array;
    return { logp, value: this.config.valueHead ? (floatData(out[VLA_IO.value]) as Float32Array) : null };
  }

  /** Samples (or, greedy, takes the mode of) every action dimension for n envs. */
  async act(obs: BatchObs, n: number, rng: Rng | null, greedy = false): Promise<PolicyAction> {
    if (!greedy && !rng) throw new Error('PolicySampler.act: sampling needs an Rng (or greedy = true)');
    const f = await this.forward(obs, n);
    const actions: Record<string, Int32Array> = {};
    const logpPerDim: Record<string, Float32Array> = {};
    const joint = new Float64Array(n);
    const dims = this.config.actions.map((a) => {
      actions[a.name] = new Int32Array(n);
      logpPerDim[a.name] = new Float32Array(n);
      return { bins: a.n, lp: f.logp[a.name], token: actions[a.name], chosen: logpPerDim[a.name] };
    });
    for (let i = 0; i < n; i++) {
      for (const { bins, lp, token, chosen } of dims) {
        const k = greedy ? argmax(lp, i * bins, bins) : sampleLogits(lp, i * bins, bins, rng!);
        token[i] = k;
        chosen[i] = lp[i * bins + k];
        joint[i] += lp[i * bins + k];
      }
    }
    return { actions, logp: joint, logpPerDim, value: f.value };
  }

  /** Rebake the weights after an update. */
  update(params: ParamStore): Promise<void> {
    return this.session.update(params);
  }

  close(): Promise<void> {
    return this.session.close();
  }
}
