// Policy inference: ForwardSessions with the weights baked in, observation feeding, seeded sampling of
// action tokens (slot by slot for autoregressive heads: the encoders and trunk once per step, then only
// the small head graph per slot), and the sampler's exact log-probabilities for the trainer to store.
import { selectRows } from '../env/batch.ts';
import type { BatchObs } from '../env/types.ts';
import { dexp, dlog } from '../core/dmath.ts';
import { DRAW, drawRng, type Rng } from '../core/rng.ts';
import { ParamStore } from '../nn/params.ts';
import type { Policy } from '../rollout/collect.ts';
import { type Feeds, type OrtBinding, type RuntimeOptions, floatData, ort, tensor } from '../nn/runtime.ts';
import { ForwardSession } from '../nn/train.ts';
import { Graph, type ParamDecl, type Tensor } from '../nn/ir.ts';
import { WordTokenizer } from './tokenizer.ts';
import {
  AR_BASE,
  VLA_IO,
  type VlaConfig,
  type VlaConfigInput,
  parseVlaConfig,
  vlaArBaseBuilder,
  vlaArHeadsBuilder,
  vlaForwardBuilder,
} from './vla.ts';

export interface PolicyForward {
  /** Log-probabilities [N * n] per action dimension (row-major). */
  logp: Record<string, Float32Array>;
}

export interface PolicyAction {
  /** Sampled bin index per env, per action dimension. */
  actions: Record<string, Int32Array>;
  /** Joint log-probability of the sampled tokens per env, summed from the sampler's float32 values. */
  logp: Float64Array;
  logpPerDim: Record<string, Float32Array>;
}

/** Builds the network's feeds (tensors of `binding`) from a batched observation (env contract layout). */
export function policyFeeds(
  config: VlaConfig,
  tokenizer: WordTokenizer,
  obs: BatchObs,
  n: number,
  binding: OrtBinding = ort,
): Feeds {
  const [h, w] = config.imageSize;
  const feeds: Feeds = {};
  for (const cam of config.cameras) {
    const img = obs[cam];
    if (!(img instanceof Uint8Array) || img.length !== n * h * w * 3)
      throw new Error(`policy: observation "${cam}" must be Uint8Array(${n}*${h}*${w}*3)`);
    feeds[cam] = tensor('uint8', img, [n, h, w, 3], binding);
  }
  const text = obs[config.instruction];
  if (!Array.isArray(text) || text.length !== n)
    throw new Error(`policy: observation "${config.instruction}" must be string[${n}]`);
  feeds[VLA_IO.tokens] = tensor('int32', tokenizer.encodeBatch(text), [n, tokenizer.maxLength], binding);
  if (config.proprio) {
    const p = obs[config.proprio.name];
    if (!(p instanceof Float32Array) || p.length !== n * config.proprio.dim)
      throw new Error(`policy: observation "${config.proprio.name}" must be Float32Array(${n}*${config.proprio.dim})`);
    feeds[config.proprio.name] = tensor('float32', p, [n, config.proprio.dim], binding);
  }
  return feeds;
}

/** Index drawn from log-probabilities at a temperature (0: the argmax) with deterministic exp and a
 *  uniform `u` in [0, 1) drawn beforehand: p_k ~ exp((logp_k - max) / temperature). */
function pickToken(logp: Float32Array, offset: number, n: number, temperature: number, u: number): number {
  let best = 0;
  for (let k = 1; k < n; k++) if (logp[offset + k] > logp[offset + best]) best = k;
  if (temperature === 0) return best;
  if (probs.length < n) probs = new Float64Array(n);
  const p = probs;
  let total = 0;
  for (let k = 0; k < n; k++) total += p[k] = dexp((logp[offset + k] - logp[offset + best]) / temperature);
  let left = u * total;
  for (let k = 0; k < n; k++) {
    left -= p[k];
    if (left < 0) return k;
  }
  return n - 1;
}
/** pickToken's scratch (reused: sampling runs on one thread and keeps nothing). */
let probs = new Float64Array(32);

/** Log-probability of token k under the distribution pickToken draws from at `temperature`:
 *  log softmax(logp / T)[k], in float64. Temperatures 0 and 1 return the model's own logp[k]. */
export function temperedLogp(
  logp: ArrayLike<number>,
  offset: number,
  n: number,
  temperature: number,
  k: number,
): number {
  if (temperature === 0 || temperature === 1) return logp[offset + k];
  let best = 0;
  for (let j = 1; j < n; j++) if (logp[offset + j] > logp[offset + best]) best = j;
  const top = logp[offset + best] / temperature;
  let total = 0;
  for (let j = 0; j < n; j++) total += dexp(logp[offset + j] / temperature - top);
  return logp[offset + k] / temperature - top - dlog(total);
}

/** The uniforms of one act() call, env-major: env i's d draws, in action order, from draw[i] (or from
 *  the shared Rng in env order), one per dimension, whatever order the dimensions are sampled in. */
function drawUniforms(draw: Rng | readonly Rng[] | null, n: number, d: number): Float64Array {
  const u = new Float64Array(n * d);
  for (let i = 0; i < n; i++) {
    const rng = Array.isArray(draw) ? draw[i] : (draw as Rng | null);
    if (!rng) throw new Error('PolicySampler.act: sampling at temperature > 0 needs an Rng');
    for (let t = 0; t < d; t++) u[i * d + t] = rng.uniform();
  }
  return u;
}

/** The values of `decls` from `params` (the same arrays, not copies): a graph's own parameters. */
function paramsOf(params: ParamStore, decls: readonly ParamDecl[]): ParamStore {
  const out = new ParamStore(params.float);
  for (const d of decls) out.add(params.info(d.name), params.get(d.name));
  return out;
}

/** A session on the part of the network `build` makes, with its own parameters baked in. */
async function partSession(
  build: (g: Graph) => Record<string, Tensor>,
  params: ParamStore,
  opts: RuntimeOptions,
): Promise<ForwardSession> {
  const g = new Graph(params.float);
  build(g);
  return ForwardSession.create(build, paramsOf(params, g.params), opts);
}

/** Independent heads: the whole network, one run per step. Autoregressive heads: `base` (encoders,
 *  trunk, head projection) once per step, then `heads` once per slot on base's output. */
type Sessions = { full: ForwardSession } | { base: ForwardSession; heads: ForwardSession };

export class PolicySampler {
  readonly config: VlaConfig;
  readonly tokenizer: WordTokenizer;

  private constructor(
    private readonly sessions: Sessions,
    config: VlaConfig,
  ) {
    this.config = config;
    this.tokenizer = new WordTokenizer(config.tokenizer);
  }

  static async create(config: VlaConfigInput, params: ParamStore, opts: RuntimeOptions = {}): Promise<PolicySampler> {
    const c = parseVlaConfig(config);
    if (!c.autoregressive)
      return new PolicySampler({ full: await ForwardSession.create(vlaForwardBuilder(c), params, opts) }, c);
    // every parameter must belong to one part: the whole network's check, before the parts take theirs
    const whole = new Graph(params.float);
    vlaForwardBuilder(c)(whole);
    params.checkAgainst(whole.params);
    const base = await partSession(vlaArBaseBuilder(c), params, opts);
    const heads = await partSession(vlaArHeadsBuilder(c), params, opts).catch(async (e) => {
      await base.close();
      throw e;
    });
    return new PolicySampler({ base, heads }, c);
  }

  private get ort(): OrtBinding {
    return 'full' in this.sessions ? this.sessions.full.ort : this.sessions.base.ort;
  }

  /** Log-probabilities of every action dimension. Autoregressive configs need `tokens` (int32 [n] per
   *  dimension): dimension t's distribution is then the one given the tokens of dimensions < t
   *  (teacher forcing, as in the training graph); independent configs ignore them. */
  async forward(obs: BatchObs, n: number, tokens?: Readonly<Record<string, Int32Array>>): Promise<PolicyForward> {
    const feeds = policyFeeds(this.config, this.tokenizer, obs, n, this.ort);
    if ('full' in this.sessions) return this.read(await this.sessions.full.run(feeds));
    if (!tokens)
      throw new Error('PolicySampler.forward: an autoregressive policy needs the action tokens its heads condition on');
    const heads = await this.baseFeeds(feeds);
    this.tokenFeeds(heads, tokens, n);
    return this.read(await this.sessions.heads.run(heads));
  }

  /** Runs the encoders and trunk (autoregressive configs): the head graph's feeds, tokens still to add. */
  private async baseFeeds(feeds: Feeds): Promise<Feeds> {
    const s = this.sessions as { base: ForwardSession };
    return { [AR_BASE]: (await s.base.run(feeds))[AR_BASE] };
  }

  private tokenFeeds(feeds: Feeds, tokens: Readonly<Record<string, Int32Array>>, n: number): void {
    for (const a of this.config.actions) {
      const t = tokens[a.name];
      if (!(t instanceof Int32Array) || t.length !== n)
        throw new Error(`policy: action tokens "${a.name}" must be Int32Array(${n})`);
      feeds[VLA_IO.action(a.name)] = tensor('int32', t, [n], this.ort);
    }
  }

  private read(out: Feeds): PolicyForward {
    const logp: Record<string, Float32Array> = {};
    for (const a of this.config.actions) logp[a.name] = floatData(out[VLA_IO.logp(a.name)]) as Float32Array;
    return { logp };
  }

  /** Samples every action dimension for n envs at `temperature` (0: greedy argmax, no Rng needed).
   *  `draw` is one Rng per env (env i draws its dimensions in order from draw[i]) or one Rng shared
   *  in env order: one uniform per env and dimension, so dimension t's draw depends only on the Rng
   *  and t. Autoregressive configs run the encoders and trunk once, then sample dimension by dimension,
   *  one run of the small head graph each, feeding the tokens chosen so far. The returned log-probabilities
   *  are those of the distribution the tokens were drawn from: the model's own at temperature 1 (or 0),
   *  exactly as the sampler computed them; log softmax(logp / T) otherwise (temperedLogp), as the loss
   *  graph at that temperature computes them. */
  async act(obs: BatchObs, n: number, draw: Rng | readonly Rng[] | null, temperature = 1): Promise<PolicyAction> {
    if (!(temperature >= 0)) throw new RangeError(`PolicySampler.act: temperature must be >= 0, got ${temperature}`);
    if (Array.isArray(draw) && draw.length !== n)
      throw new RangeError(`PolicySampler.act: ${draw.length} Rngs for ${n} envs`);
    const d = this.config.actions.length;
    const u = temperature === 0 ? null : drawUniforms(draw, n, d);
    const actions: Record<string, Int32Array> = {};
    const logpPerDim: Record<string, Float32Array> = {};
    for (const a of this.config.actions) {
      actions[a.name] = new Int32Array(n);
      logpPerDim[a.name] = new Float32Array(n);
    }
    const choose = (t: number, lp: Float32Array): void => {
      const { name, n: bins } = this.config.actions[t];
      const token = actions[name];
      const chosen = logpPerDim[name];
      for (let i = 0; i < n; i++) {
        const k = pickToken(lp, i * bins, bins, temperature, u ? u[i * d + t] : 0);
        token[i] = k;
        chosen[i] = temperedLogp(lp, i * bins, bins, temperature, k);
      }
    };
    if ('full' in this.sessions) {
      const f = await this.forward(obs, n);
      this.config.actions.forEach((a, t) => choose(t, f.logp[a.name]));
    } else {
      // The encoders and trunk once, then the head graph per slot. Dimension t's head sees only the
      // tokens of dimensions < t (vla.ts), so the not yet chosen ones (still 0) fed alongside change nothing.
      const feeds = await this.baseFeeds(policyFeeds(this.config, this.tokenizer, obs, n, this.ort));
      for (let t = 0; t < d; t++) {
        this.tokenFeeds(feeds, actions, n);
        const ft = this.read(await this.sessions.heads.run(feeds));
        choose(t, ft.logp[this.config.actions[t].name]);
      }
    }
    const joint = new Float64Array(n);
    for (let i = 0; i < n; i++) for (const a of this.config.actions) joint[i] += logpPerDim[a.name][i];
    return { actions, logp: joint, logpPerDim };
  }

  /** Rebake the weights after an update. */
  async update(params: ParamStore): Promise<void> {
    if ('full' in this.sessions) return this.sessions.full.update(params);
    const { base, heads } = this.sessions;
    params.checkAgainst([...base.graph.params, ...heads.graph.params]);
    await base.update(paramsOf(params, base.graph.params));
    await heads.update(paramsOf(params, heads.graph.params));
  }

  async close(): Promise<void> {
    for (const s of Object.values(this.sessions) as ForwardSession[]) await s.close();
  }
}

/** The sampler as a rollout Policy: env i's tokens at a step are drawn from
 *  drawRng(seed, episode key, step) (dimension t from its t-th uniform), so they never depend on the
 *  batch layout; the per-dimension log-probabilities of the chosen tokens come with them. Idle envs
 *  (key < 0) are left out of the forward pass and get token 0. */
export function samplerPolicy(sampler: PolicySampler, o: { seed: number; temperature: number }): Policy {
  return {
    async act(obs, ctx) {
      const n = ctx.keys.length;
      const live: number[] = [];
      for (let i = 0; i < n; i++) if (ctx.keys[i] >= 0) live.push(i);
      const draw = (i: number) => drawRng(o.seed, ctx.keys[i], ctx.steps[i], DRAW.policySample);
      const all = live.length === n;
      const a = live.length
        ? await sampler.act(all ? obs : selectRows(obs, live, n), live.length, live.map(draw), o.temperature)
        : null;
      if (a && all) return { actions: a.actions, logp: a.logpPerDim };
      const actions: Record<string, Int32Array> = {};
      const logp: Record<string, Float32Array> = {};
      for (const { name } of sampler.config.actions) {
        actions[name] = new Int32Array(n);
        logp[name] = new Float32Array(n);
        live.forEach((i, r) => {
          actions[name][i] = a!.actions[name][r];
          logp[name][i] = a!.logpPerDim[name][r];
        });
      }
      return { actions, logp };
    },
  };
}
