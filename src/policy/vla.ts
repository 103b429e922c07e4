// The VLA policy network: camera images (none for a text-only agent) through a conv encoder (a second camera
// through the same one or its own, cheaper `secondConv`), the instruction through a word embedding (masked
// mean, attention or role pooling), proprioception (or any box of features) through an MLP, fused by an MLP
// trunk into one categorical head per action dimension, either independent or autoregressive over the
// earlier dimensions' tokens. Browser-safe.
import { z } from 'zod';
import { DYN, type Graph, type Tensor } from '../nn/ir.ts';
import * as o from '../nn/ops.ts';
import * as L from '../nn/layers.ts';
import { PAD_ID, TokenizerConfigSchema } from './tokenizer.ts';

const obsName = z.string().regex(/^[a-z][a-z0-9_]*$/, 'lower_snake_case name');

const ConvLayers = z.array(
  z.object({
    out: z.number().int().positive(),
    k: z.number().int().positive(),
    stride: z.number().int().positive(),
    pad: z.number().int().min(0),
  }),
);

export const VlaConfigSchema = z.object({
  /** Observation names of the cameras (0, 1 or 2), each uint8 [N, H, W, 3]; none: no image encoder. */
  cameras: z.array(obsName).max(2).default(['image']),
  imageSize: z.tuple([z.number().int().positive(), z.number().int().positive()]).default([64, 64]),
  /** The image encoder's conv layers: at least one with cameras, none (the default) without them. */
  conv: ConvLayers.default([]),
  /** The second camera's own encoder (only with 2 cameras): its conv layers (weights vla.cam1.*), FiLM on
   *  its last `film` layers, the same keypoints setting and its own image fc to `imageFeatures`. Absent: the
   *  second camera goes through the first camera's encoder (shared weights, twice its cost). A first layer
   *  with k = stride and pad 0 is a patch embedding. Optional without a default so that older configs (and
   *  their sidecars) stay byte-identical. */
  secondConv: ConvLayers.min(1).optional(),
  /** Width of the image features: required with cameras, absent without them. */
  imageFeatures: z.number().int().positive().optional(),
  /** FiLM (Perez et al. 2018): the last `film` conv layers are modulated by the instruction embedding,
   *  x = x * (1 + gamma(text)) + beta(text) per channel, before the activation (0 = late fusion only). */
  film: z.number().int().min(0).optional(),
  /** Spatial-softmax keypoints (Levine et al. 2016) of the last conv map: per channel the expected (x, y)
   *  image coordinate, 2C features, concatenated with the flattened map ('concat') or instead of it.
   *  Both are optional without defaults so that older configs (and their sidecars) stay byte-identical. */
  keypoints: z.enum(['off', 'concat', 'replace']).optional(),
  tokenizer: TokenizerConfigSchema,
  /** Observation name of the instruction text. */
  instruction: obsName.default('instruction'),
  embedDim: z.number().int().positive(),
  /** How the word embeddings become the instruction feature: 'mean' (masked mean), 'attention' (one learned
   *  query, a masked softmax over positions) or 'roles' (see `roles`). Mean and one query see a bag of words:
   *  "stack the blue cube on the green cube" and its swap get the same feature. */
  pooling: z.enum(['mean', 'attention', 'roles']).default('mean'),
  /** Role pooling (pooling 'roles'): learned position embeddings are added to the word embeddings, then each
   *  of `queries` learned attention queries (2: roughly the object and the target, which the templates name
   *  in that order) pools the words by its own masked softmax over positions. Each pooled vector goes through
   *  the text layer (shared weights); the trunk reads them concatenated (queries x embedDim wide), and so do
   *  the FiLM generators ('concat'), or FiLM layer j of the FiLM-modulated layers reads only query
   *  j mod queries ('split'). Absent with pooling 'roles': these defaults; only allowed with it. Optional
   *  without a default so that older configs (and their sidecars) stay byte-identical. */
  roles: z
    .object({
      queries: z.number().int().min(1).default(2),
      film: z.enum(['concat', 'split']).default('concat'),
    })
    .strict()
    .optional(),
  proprio: z
    .object({ name: obsName, dim: z.number().int().positive(), hidden: z.number().int().positive() })
    .nullable(),
  trunk: z.array(z.number().int().positive()).min(1),
  layerNorm: z.boolean().default(true),
  act: z.enum(['relu', 'silu', 'tanh']).default('relu'),
  /** One categorical head per action dimension, in env action order. */
  actions: z.array(z.object({ name: obsName, n: z.number().int().min(2) })).min(1),
  /** Autoregressive heads (a program of token slots): head t = logSoftmax(linear(act(proj(trunk) +
   *  sum_{s<t} embed_s(token s)))), one `embedDim`-wide embedding table per slot, in action order. The
   *  graph then takes the action tokens as inputs (teacher forcing). Absent: independent heads. */
  autoregressive: z.object({ embedDim: z.number().int().positive() }).strict().optional(),
});
export type VlaConfigInput = z.input<typeof VlaConfigSchema>;
export type VlaConfig = z.output<typeof VlaConfigSchema>;

export function parseVlaConfig(c: VlaConfigInput): VlaConfig {
  const r = VlaConfigSchema.safeParse(c);
  if (!r.success)
    throw new Error(`VLA config: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const names = [...r.data.cameras, r.data.instruction, ...(r.data.proprio ? [r.data.proprio.name] : [])];
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw new Error(`VLA config: observation name "${dup}" used twice`);
  if (r.data.cameras.length) {
    if (!r.data.conv.length) throw new Error('VLA config: conv: at least one layer is needed with cameras');
    if (r.data.imageFeatures === undefined) throw new Error('VLA config: imageFeatures: required with cameras');
  } else {
    const extra =
      (['imageFeatures', 'film', 'keypoints', 'secondConv'] as const).find((k) => r.data[k] !== undefined) ??
      (r.data.conv.length ? 'conv' : null);
    if (extra) throw new Error(`VLA config: ${extra}: an image setting, but there are no cameras`);
  }
  if (r.data.roles && r.data.pooling !== 'roles')
    throw new Error(`VLA config: roles: set, but pooling is "${r.data.pooling}", not "roles"`);
  if ((r.data.film ?? 0) > r.data.conv.length)
    throw new Error(`VLA config: film: ${r.data.film} layers but only ${r.data.conv.length} conv layers`);
  const second = r.data.secondConv;
  if (second && r.data.cameras.length !== 2)
    throw new Error(
      `VLA config: secondConv: the second camera's encoder, but there ${r.data.cameras.length === 1 ? 'is 1 camera' : `are ${r.data.cameras.length} cameras`}`,
    );
  if (second && (r.data.film ?? 0) > second.length)
    throw new Error(`VLA config: secondConv: ${second.length} conv layers, fewer than the ${r.data.film} FiLM layers`);
  return r.data;
}

/** Graph input names. */
export const VLA_IO = {
  tokens: 'tokens',
  action: (name: string) => `action.${name}`,
  logp: (name: string) => `logp.${name}`,
} as const;

export interface VlaInputs {
  images: Tensor[];
  tokens: Tensor;
  proprio: Tensor | null;
  /** Autoregressive configs: the action tokens int32 [N] per dimension (the same graph inputs as
   *  vlaActionInputs). */
  actions?: Record<string, Tensor>;
}

export interface VlaNet {
  config: VlaConfig;
  /** Log-probabilities [N, n] per action dimension. */
  logp: Record<string, Tensor>;
}

/** Declares the observation inputs (batch may be DYN for inference graphs), and for autoregressive
 *  configs the action-token inputs the heads condition on. */
export function vlaInputs(g: Graph, config: VlaConfig, batch: number): VlaInputs {
  const inputs = vlaObsInputs(g, config, batch);
  if (config.autoregressive) inputs.actions = vlaActionInputs(g, config, batch);
  return inputs;
}

/** The observation inputs only. */
function vlaObsInputs(g: Graph, config: VlaConfig, batch: number): VlaInputs {
  const [h, w] = config.imageSize;
  return {
    images: config.cameras.map((c) => g.input(c, [batch, h, w, 3], 'uint8')),
    tokens: g.input(VLA_IO.tokens, [batch, config.tokenizer.maxLength], 'int32'),
    proprio: config.proprio ? g.input(config.proprio.name, [batch, config.proprio.dim]) : null,
  };
}

/** Integer action-token inputs [N] per action dimension (for training graphs); those vlaInputs has
 *  already declared (autoregressive configs) are returned as they are. */
export function vlaActionInputs(g: Graph, config: VlaConfig, batch: number): Record<string, Tensor> {
  return Object.fromEntries(
    config.actions.map((a) => {
      const name = VLA_IO.action(a.name);
      const known = g.inputs.find((t) => t.name === name);
      if (known && (known.dtype !== 'int32' || known.shape.length !== 1 || known.shape[0] !== batch))
        throw new Error(`vlaActionInputs: input ${name} is ${known.dtype} [${known.shape}], not int32 [${batch}]`);
      return [a.name, known ?? g.input(name, [batch], 'int32')];
    }),
  );
}

/** Per-channel expected (x, y) in [-1, 1] of a softmax over the positions of `x` [N, C, h, w] -> [N, 2C]. */
export function spatialSoftmax(x: Tensor): Tensor {
  const [, ch, h, w] = x.shape;
  const coords: number[] = [];
  for (let y = 0; y < h; y++)
    for (let i = 0; i < w; i++) coords.push(w > 1 ? (2 * i) / (w - 1) - 1 : 0, h > 1 ? (2 * y) / (h - 1) - 1 : 0);
  const attn = L.softmax(o.reshape(x, [DYN, ch, h * w])); // [N, C, h*w]
  const xy = o.matmul(attn, x.graph.constant(coords, [h * w, 2])); // [N, C, 2]
  return o.reshape(xy, [DYN, 2 * ch]);
}

/** The instruction feature: `all` [N, F] for the trunk, and what FiLM layer j (0-based among the FiLM-
 *  modulated layers) reads. */
interface TextCode {
  all: Tensor;
  film(j: number): Tensor;
}

type ConvLayer = VlaConfig['conv'][number];

/** One camera's encoder: conv `layers` (weights `${prefix}conv<i>`, FiLM generators `${prefix}film<i>` on the
 *  last `film` layers), keypoints as the config says, then the image fc `${prefix}img.fc`. */
function encodeImage(
  img: Tensor,
  c: VlaConfig,
  layers: readonly ConvLayer[],
  prefix: string,
  text: TextCode | null,
): Tensor {
  // NHWC -> NCHW on the uint8 pixels (a quarter of the bytes of the float image), then (p - 128) / 255:
  // one DequantizeLinear pass in float32 graphs, the same arithmetic spelled out in float64 ones.
  const chw = o.transpose(img, [0, 3, 1, 2]);
  let x =
    img.graph.float === 'float32'
      ? o.dequantize(chw, 1 / 255, 128)
      : o.mul(o.sub(o.cast(chw, 'float64'), 128), 1 / 255);
  let pre = x;
  layers.forEach((l, i) => {
    pre = L.conv2d(x, `${prefix}conv${i}`, l.out, l.k, { stride: l.stride, pad: l.pad });
    const firstFilm = layers.length - (c.film ?? 0);
    if (text && i >= firstFilm) {
      const gb = L.linear(text.film(i - firstFilm), `${prefix}film${i}`, 2 * l.out, { std: 0.01 }); // [N, 2C]
      const gamma = o.reshape(o.slice(gb, 1, 0, l.out), [DYN, l.out, 1, 1]);
      const beta = o.reshape(o.slice(gb, 1, l.out, 2 * l.out), [DYN, l.out, 1, 1]);
      pre = o.add(o.mul(pre, o.add(gamma, 1)), beta);
    }
    x = L.activate(pre, c.act);
  });
  const parts: Tensor[] = [];
  const kp = c.keypoints ?? 'off';
  if (kp !== 'replace') parts.push(o.reshape(x, [DYN, x.shape[1] * x.shape[2] * x.shape[3]]));
  if (kp !== 'off') parts.push(spatialSoftmax(pre));
  const feats = parts.length > 1 ? o.concat(parts, 1) : parts[0];
  // parseVlaConfig: imageFeatures is defined whenever there are cameras
  return L.activate(L.linear(feats, `${prefix}img.fc`, c.imageFeatures ?? 0), c.act);
}

function encodeText(tokens: Tensor, c: VlaConfig): TextCode {
  const g = tokens.graph;
  const emb = L.embedding(tokens, 'vla.text.embed', c.tokenizer.vocab.length, c.embedDim); // [N, L, D]
  const mask = o.cast(o.not(o.equal(tokens, g.scalar(PAD_ID, tokens.dtype))), g.float); // [N, L]
  if (c.pooling === 'roles') return encodeRoles(emb, mask, c);
  let weights: Tensor;
  if (c.pooling === 'mean') {
    weights = o.div(mask, o.maximum(L.sumLast(mask, true), 1));
  } else {
    const q = g.param('vla.text.query', [c.embedDim, 1], { kind: 'normal', std: 1 / Math.sqrt(c.embedDim) });
    const scores = o.reshape(o.matmul(emb, q), [DYN, c.tokenizer.maxLength]);
    weights = L.softmax(o.add(o.mul(scores, 1 / Math.sqrt(c.embedDim)), o.mul(o.sub(mask, 1), 1e9)));
  }
  // sum over positions, with the positions last so the sum is batch-invariant (L.sumLast)
  const pooled = L.sumLast(o.mul(o.transpose(emb, [0, 2, 1]), o.reshape(weights, [DYN, 1, c.tokenizer.maxLength])));
  const text = L.activate(L.linear(pooled, 'vla.text.fc', c.embedDim), c.act);
  return { all: text, film: () => text };
}

/** Role pooling (config `roles`): K queries over position-tagged words, K pooled vectors. */
function encodeRoles(emb: Tensor, mask: Tensor, c: VlaConfig): TextCode {
  const g = emb.graph;
  const [len, d] = [c.tokenizer.maxLength, c.embedDim];
  const k = c.roles?.queries ?? 2;
  const pos = g.param('vla.text.pos', [len, d], { kind: 'normal', std: 1 / Math.sqrt(d) });
  const x = o.add(emb, pos); // [N, L, D]
  const q = g.param('vla.text.queries', [d, k], { kind: 'normal', std: 1 / Math.sqrt(d) });
  const scores = o.transpose(o.matmul(x, q), [0, 2, 1]); // [N, K, L]
  const pad = o.reshape(o.mul(o.sub(mask, 1), 1e9), [DYN, 1, len]);
  const weights = L.softmax(o.add(o.mul(scores, 1 / Math.sqrt(d)), pad)); // [N, K, L], a softmax per query
  // [N, 1, D, L] x [N, K, 1, L] summed over the positions, last (batch-invariant, L.sumLast): [N, K, D]
  const pooled = L.sumLast(
    o.mul(o.reshape(o.transpose(x, [0, 2, 1]), [DYN, 1, d, len]), o.reshape(weights, [DYN, k, 1, len])),
  );
  const roles = L.activate(L.linear(pooled, 'vla.text.fc', d), c.act); // [N, K, D]
  const all = o.reshape(roles, [DYN, k * d]);
  if ((c.roles?.film ?? 'concat') === 'concat') return { all, film: () => all };
  const each = new Map<number, Tensor>(); // built on first use (every camera's encoder shares them)
  return {
    all,
    film: (j) => {
      const r = j % k;
      if (!each.has(r)) each.set(r, o.reshape(o.slice(roles, 1, r, r + 1), [DYN, d]));
      return each.get(r)!;
    },
  };
}

/** The policy network on declared inputs. */
export function vlaNet(inputs: VlaInputs, configIn: VlaConfigInput): VlaNet {
  const c = parseVlaConfig(configIn);
  const trunk = vlaTrunk(inputs, c);
  const logp = c.autoregressive ? autoregressiveHeads(arBase(trunk, c), c, inputs.actions) : independentHeads(trunk, c);
  return { config: c, logp };
}

/** The fused features [N, trunk width] of the observations: encoders and trunk, no heads. */
function vlaTrunk(inputs: VlaInputs, c: VlaConfig): Tensor {
  const g = inputs.tokens.graph;
  // Without FiLM the images are encoded first (the parameter order of older models).
  const early = (c.film ?? 0) > 0 ? encodeText(inputs.tokens, c) : null;
  // The second camera has its own encoder (secondConv) or the first camera's (shared weights).
  const feats = inputs.images.map((img, i) => {
    if (i === 0) return encodeImage(img, c, c.conv, 'vla.', early);
    if (c.secondConv) return encodeImage(img, c, c.secondConv, 'vla.cam1.', early);
    return g.withReuse(() => encodeImage(img, c, c.conv, 'vla.', early));
  });
  feats.push((early ?? encodeText(inputs.tokens, c)).all);
  if (inputs.proprio && c.proprio)
    feats.push(L.activate(L.linear(inputs.proprio, 'vla.proprio.fc', c.proprio.hidden), c.act));
  return L.mlp(feats.length > 1 ? o.concat(feats, 1) : feats[0], 'vla.trunk', c.trunk, undefined, {
    act: c.act,
    layerNorm: c.layerNorm,
  });
}

function independentHeads(trunk: Tensor, c: VlaConfig): Record<string, Tensor> {
  const logp: Record<string, Tensor> = {};
  for (const a of c.actions) logp[a.name] = L.logSoftmax(L.linear(trunk, `vla.head.${a.name}`, a.n, { std: 0.01 }));
  return logp;
}

/** The autoregressive heads' shared projection of the trunk, proj(trunk) [N, embedDim] (before the
 *  activation): what every head adds its prefix to. */
function arBase(trunk: Tensor, c: VlaConfig): Tensor {
  return L.linear(trunk, 'vla.ar.proj', c.autoregressive!.embedDim);
}

/** Head t sees the trunk and the tokens of slots s < t only: act(base + prefix_t), with base =
 *  proj(trunk) and prefix_t = sum_{s<t} embed_s(token s) accumulated by elementwise adds (exact per row,
 *  so batch-invariant, and no later token enters head t's graph at all). The last slot's token
 *  conditions nothing, so it has no table. */
function autoregressiveHeads(
  base: Tensor,
  c: VlaConfig,
  actions: Record<string, Tensor> | undefined,
): Record<string, Tensor> {
  const dim = c.autoregressive!.embedDim;
  const logp: Record<string, Tensor> = {};
  let prefix: Tensor | null = null;
  c.actions.forEach((a, t) => {
    const h = L.activate(prefix ? o.add(base, prefix) : base, c.act);
    logp[a.name] = L.logSoftmax(L.linear(h, `vla.head.${a.name}`, a.n, { std: 0.01 }));
    if (t === c.actions.length - 1) return;
    const tok = actions?.[a.name];
    if (!tok)
      throw new Error(
        `vlaNet: the autoregressive heads need the action tokens (vlaInputs declares them); none for "${a.name}"`,
      );
    const e = L.embedding(tok, `vla.ar.embed.${a.name}`, a.n, dim); // [N, dim]
    prefix = prefix ? o.add(prefix, e) : e;
  });
  return logp;
}

export interface ActionScores {
  /** Joint log-probability [N] of the given action tokens (sum over dimensions). */
  logp: Tensor;
  /** Joint entropy [N]: the sum over dimensions. Independent heads: exact. Autoregressive heads: the
   *  per-slot entropies given the sampled prefix, whose sum is by the chain rule an unbiased
   *  one-sample estimate of the joint entropy when the tokens come from the policy itself. */
  entropy: Tensor;
  perDim: Record<string, Tensor>;
}

/** Log-probability and entropy of given action tokens (int32 [N] per dimension). */
export function actionScores(net: VlaNet, actions: Record<string, Tensor>, temperature = 1): ActionScores {
  let logp: Tensor | null = null;
  let entropy: Tensor | null = null;
  const perDim: Record<string, Tensor> = {};
  for (const a of net.config.actions) {
    const tok = actions[a.name];
    if (!tok) throw new Error(`actionScores: no tokens for action "${a.name}"`);
    // the tempered policy log softmax(logp / T); temperature 1 keeps the graph (and its bits) unchanged
    const dist = temperature === 1 ? net.logp[a.name] : L.logSoftmax(o.div(net.logp[a.name], temperature));
    const lp = L.categoricalLogProb(dist, tok);
    const h = L.categoricalEntropy(dist);
    perDim[a.name] = lp;
    logp = logp ? o.add(logp, lp) : lp;
    entropy = entropy ? o.add(entropy, h) : h;
  }
  return { logp: logp!, entropy: entropy!, perDim };
}

/** The sampler's outputs: logp.<dim> [N, n]. */
export function vlaOutputs(net: VlaNet): Record<string, Tensor> {
  const out: Record<string, Tensor> = {};
  for (const a of net.config.actions) out[VLA_IO.logp(a.name)] = net.logp[a.name];
  return out;
}

/** A whole inference graph builder for ForwardSession (batch may be DYN). */
export function vlaForwardBuilder(config: VlaConfigInput, batch: number = DYN): (g: Graph) => Record<string, Tensor> {
  const c = parseVlaConfig(config);
  return (g) => vlaOutputs(vlaNet(vlaInputs(g, c, batch), c));
}

/** The two graphs an autoregressive sampler runs instead of the whole network once per slot: the
 *  encoders, trunk and head projection once per step (output AR_BASE, [N, embedDim]), then only the
 *  heads per slot, on that projection and the tokens chosen so far. Together they are vlaNet's own ops
 *  in its order, cut at the projection; each declares only its own parameters. */
export const AR_BASE = 'ar.base';

export function vlaArBaseBuilder(config: VlaConfigInput, batch: number = DYN): (g: Graph) => Record<string, Tensor> {
  const c = parseVlaConfig(config);
  if (!c.autoregressive) throw new Error('vlaArBaseBuilder: the config has independent heads');
  return (g) => ({ [AR_BASE]: arBase(vlaTrunk(vlaObsInputs(g, c, batch), c), c) });
}

export function vlaArHeadsBuilder(config: VlaConfigInput, batch: number = DYN): (g: Graph) => Record<string, Tensor> {
  const c = parseVlaConfig(config);
  if (!c.autoregressive) throw new Error('vlaArHeadsBuilder: the config has independent heads');
  return (g) => {
    const base = g.input(AR_BASE, [batch, c.autoregressive!.embedDim]);
    return vlaOutputs({ config: c, logp: autoregressiveHeads(base, c, vlaActionInputs(g, c, batch)) });
  };
}
