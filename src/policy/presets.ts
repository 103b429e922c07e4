// Network presets of the VLA (behaviour cloning and RL start from one of them), of the AutoResearch agent,
// and the tokenizer corpus of a scene. Browser-safe.
import type { Scene } from '../scene/index.ts';
import { VLA_SIZES_DEFAULT, VLA_SIZES_TINY, type VlaSizes } from './spec-config.ts';
import { splitWords } from './tokenizer.ts';
import type { VlaConfigInput } from './vla.ts';

/** Network presets: tiny, default (the benchmarked ~0.4 M-parameter VLA) and mid (three stride-2 convs
 *  keep an 8x8 feature map, so the flattened features keep where things are). */
export const PRETRAIN_SIZES = {
  tiny: VLA_SIZES_TINY,
  default: VLA_SIZES_DEFAULT,
  mid: {
    ...VLA_SIZES_DEFAULT,
    conv: [
      { out: 16, k: 5, stride: 2, pad: 2 },
      { out: 32, k: 3, stride: 2, pad: 1 },
      { out: 32, k: 3, stride: 2, pad: 1 },
    ],
  },
  /** mid with a two-layer trunk: late fusion needs depth to gate image features by the instruction. */
  deep: {
    ...VLA_SIZES_DEFAULT,
    conv: [
      { out: 16, k: 5, stride: 2, pad: 2 },
      { out: 32, k: 3, stride: 2, pad: 1 },
      { out: 32, k: 3, stride: 2, pad: 1 },
    ],
    trunk: [256, 256],
  },
  /** mid with the instruction FiLM-modulating the last two conv layers and spatial-softmax keypoints of
   *  the last map next to the flattened one: the text picks the channels, the keypoints say where. */
  film: {
    ...VLA_SIZES_DEFAULT,
    conv: [
      { out: 16, k: 5, stride: 2, pad: 2 },
      { out: 32, k: 3, stride: 2, pad: 1 },
      { out: 32, k: 3, stride: 2, pad: 1 },
    ],
    film: 2,
    keypoints: 'concat',
  },
  /** film with only the keypoints (no flattened map): far fewer image parameters to memorise layouts with. */
  keypoints: {
    ...VLA_SIZES_DEFAULT,
    conv: [
      { out: 16, k: 5, stride: 2, pad: 2 },
      { out: 32, k: 3, stride: 2, pad: 1 },
      { out: 32, k: 3, stride: 2, pad: 1 },
    ],
    film: 2,
    keypoints: 'replace',
  },
  /** keypoints read from a 16x16 map (the third conv keeps stride 1): finer positions. */
  keypoints16: {
    ...VLA_SIZES_DEFAULT,
    conv: [
      { out: 16, k: 5, stride: 2, pad: 2 },
      { out: 32, k: 3, stride: 2, pad: 1 },
      { out: 32, k: 3, stride: 1, pad: 1 },
    ],
    film: 2,
    keypoints: 'replace',
  },
  /** keypoints16 reading the instruction by role: position embeddings and two attention queries (roughly
   *  the object and the target) instead of the mean, whose bag of words cannot tell "stack the blue cube on
   *  the green cube" from its swap. Both pooled vectors feed the FiLM generators and the trunk. */
  roles16: {
    ...VLA_SIZES_DEFAULT,
    conv: [
      { out: 16, k: 5, stride: 2, pad: 2 },
      { out: 32, k: 3, stride: 2, pad: 1 },
      { out: 32, k: 3, stride: 1, pad: 1 },
    ],
    film: 2,
    keypoints: 'replace',
    pooling: 'roles',
    roles: { queries: 2 },
  },
} satisfies Record<string, VlaSizes>;

/** The AutoResearch agent (docs/autoresearch.md#the-agent): no camera; the task text + feedback through attention
 *  pooling, the dataset meta-features as the box, and autoregressive heads over the program's token slots
 *  (~93 k parameters with the 50-token DSL vocabulary, 12 slots and a ~25-word text vocabulary). */
export const AGENT_SIZES: VlaSizes = {
  embedDim: 32,
  pooling: 'attention',
  proprioHidden: 32,
  trunk: [128],
  act: 'relu',
  autoregressive: { embedDim: 64 },
};

export type PresetName = keyof typeof PRETRAIN_SIZES;
export const PRESET_NAMES = Object.keys(PRETRAIN_SIZES) as [PresetName, ...PresetName[]];

/** The action head of a tabletop preset (`--head`): one independent categorical per action dimension
 *  (every shipped model), or autoregressive heads over (dx, dy, dz, dyaw, grip) in that order, each
 *  conditioned on the tokens chosen before it through 64-wide embeddings (vla.ts `autoregressive`). */
export const HEAD_NAMES = ['independent', 'autoregressive'] as const;
export type HeadName = (typeof HEAD_NAMES)[number];
export const TABLETOP_AR_EMBED = 64;

/** `sizes` with the action head `head` (independent: the sizes as they are, less any autoregressive head). */
export function withHead(sizes: VlaSizes, head: HeadName): VlaSizes {
  const { autoregressive: _, ...rest } = sizes;
  return head === 'autoregressive' ? { ...rest, autoregressive: { embedDim: TABLETOP_AR_EMBED } } : rest;
}

/** The second camera's encoder of a tabletop preset (`--second-encoder`, only with 2 cameras): 'shared' reads
 *  it with the first camera's encoder (the same weights, twice the encoder's cost); 'light' gives it its own,
 *  cheaper encoder (vla.ts `secondConv`, lightSecondConv). */
export const SECOND_ENCODER_NAMES = ['shared', 'light'] as const;
export type SecondEncoderName = (typeof SECOND_ENCODER_NAMES)[number];

/** Channels of every layer of the light second-camera encoder. */
export const LIGHT_CHANNELS = 16;

/** The light second-camera encoder of `sizes` on `imageSize` images: a 4x4 stride-4 patch embedding
 *  (non-overlapping patches) then 3x3 convs, all 16 channels; stride 2 while the map is larger than the first
 *  encoder's last map, at least one conv and at least `film` layers in all (the FiLM-modulated ones). On
 *  roles16 and keypoints16 (16x16 maps, FiLM 2): [16 4x4/4, 16 3x3/1], 16 keypoints of a 16x16 map. */
export function lightSecondConv(sizes: VlaSizes, imageSize: readonly [number, number]): VlaConfigInput['conv'] {
  const conv = sizes.conv ?? [];
  if (!conv.length) throw new Error('lightSecondConv: the first encoder has no conv layers');
  const side = (n: number) => conv.reduce((s, l) => Math.floor((s + 2 * l.pad - l.k) / l.stride) + 1, n);
  const target = Math.max(side(imageSize[0]), side(imageSize[1]));
  const layers = [{ out: LIGHT_CHANNELS, k: 4, stride: 4, pad: 0 }];
  let map = Math.floor(Math.max(...imageSize) / 4);
  while (layers.length < 2 || map > target || layers.length < (sizes.film ?? 0)) {
    const stride = map > target ? 2 : 1;
    layers.push({ out: LIGHT_CHANNELS, k: 3, stride, pad: 1 });
    map = Math.floor((map - 1) / stride) + 1;
  }
  return layers;
}

/** `sizes` with the second camera's encoder `kind` for `imageSize` images (shared: the sizes as they are,
 *  less any second encoder). */
export function withSecondEncoder(
  sizes: VlaSizes,
  kind: SecondEncoderName,
  imageSize: readonly [number, number],
): VlaSizes {
  const { secondConv: _, ...rest } = sizes;
  return kind === 'light' ? { ...rest, secondConv: lightSecondConv(sizes, imageSize) } : rest;
}

/** Every instruction template and object/target phrase of the scene: the tokenizer's corpus, so
 *  held-out object-target combinations use known words. */
export function sceneWords(scene: Scene): { corpus: string[]; maxLength: number } {
  const phrases = [...scene.objects, ...scene.zones, ...scene.bins].flatMap((x) => x.words);
  const templates = scene.tasks.flatMap((t) => t.templates);
  const longestPhrase = Math.max(...phrases.map((p) => splitWords(p).length));
  const longest = Math.max(...templates.map((t) => splitWords(t.replace(/\{\w+\}/g, ' ')).length + 2 * longestPhrase));
  return { corpus: [...templates.map((t) => t.replace(/\{\w+\}/g, ' ')), ...phrases], maxLength: longest };
}
