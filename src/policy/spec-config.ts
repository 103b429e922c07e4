// VLA configs derived from an env spec: cameras (if any), proprioception (or any feature box), instruction
// and one head per discrete action dimension come from the spec's named entries; layer sizes (and the
// autoregressive heads, if any) come from a size preset. Browser-safe.
import { type EnvSpec, canonicalJson } from '../core/spec.ts';
import { hashOf } from '../core/hash.ts';
import type { TokenizerConfig } from './tokenizer.ts';
import { type VlaConfig, type VlaConfigInput, parseVlaConfig } from './vla.ts';

export type VlaSizes = Pick<
  VlaConfigInput,
  | 'conv'
  | 'secondConv'
  | 'imageFeatures'
  | 'embedDim'
  | 'pooling'
  | 'roles'
  | 'trunk'
  | 'act'
  | 'layerNorm'
  | 'film'
  | 'keypoints'
  | 'autoregressive'
> & {
  proprioHidden: number;
};

/** The benchmarked tabletop policy (~0.4 M parameters, 64x64 input). */
export const VLA_SIZES_DEFAULT: VlaSizes = {
  conv: [
    { out: 16, k: 5, stride: 2, pad: 2 },
    { out: 32, k: 3, stride: 2, pad: 1 },
    { out: 32, k: 3, stride: 2, pad: 1 },
    { out: 64, k: 3, stride: 2, pad: 1 },
  ],
  imageFeatures: 256,
  embedDim: 32,
  proprioHidden: 64,
  trunk: [256],
};

/** A tiny policy for fixtures, demos and the browser. */
export const VLA_SIZES_TINY: VlaSizes = {
  conv: [
    { out: 8, k: 5, stride: 2, pad: 2 },
    { out: 16, k: 3, stride: 2, pad: 1 },
    { out: 16, k: 3, stride: 2, pad: 1 },
  ],
  imageFeatures: 64,
  embedDim: 16,
  proprioHidden: 16,
  trunk: [64],
};

/** Builds a VLA config for `spec`: image entries (0-2, same size) are the cameras, the single text entry is
 *  the instruction, a single rank-1 box entry (if any) is proprioception; every action must be discrete.
 *  Without images the sizes' image settings (conv, secondConv, imageFeatures, film, keypoints) are dropped. */
export function vlaConfigFromSpec(spec: EnvSpec, tokenizer: TokenizerConfig, sizes: VlaSizes): VlaConfig {
  const images = spec.observation.filter((e) => e.kind === 'image');
  const texts = spec.observation.filter((e) => e.kind === 'text');
  const boxes = spec.observation.filter((e) => e.kind === 'box');
  if (images.length > 2)
    throw new Error(`spec ${spec.id}: the VLA takes at most 2 image observations, found ${images.length}`);
  const [h, w] = images.length ? images[0].shape : [];
  const odd = images.find((e) => e.shape[0] !== h || e.shape[1] !== w);
  if (odd)
    throw new Error(
      `spec ${spec.id}: observation "${odd.name}" is ${odd.shape[0]}x${odd.shape[1]}, "${images[0].name}" is ${h}x${w}`,
    );
  if (texts.length !== 1)
    throw new Error(`spec ${spec.id}: the VLA needs exactly one text observation, found ${texts.length}`);
  if (boxes.length > 1 || boxes.some((b) => b.shape.length !== 1))
    throw new Error(`spec ${spec.id}: the VLA takes at most one rank-1 box observation`);
  const bad = spec.action.find((a) => a.kind !== 'discrete');
  if (bad)
    throw new Error(
      `spec ${spec.id}: action "${bad.name}" is not discrete (the VLA has one categorical head per dimension)`,
    );
  const { proprioHidden, ...rest } = sizes;
  if (!images.length)
    for (const k of ['conv', 'secondConv', 'imageFeatures', 'film', 'keypoints'] as const) delete rest[k];
  return parseVlaConfig({
    ...rest,
    cameras: images.map((e) => e.name),
    ...(images.length ? { imageSize: [h, w] as [number, number] } : {}),
    tokenizer,
    instruction: texts[0].name,
    proprio: boxes.length ? { name: boxes[0].name, dim: boxes[0].shape[0], hidden: proprioHidden } : null,
    actions: spec.action.map((a) => ({ name: a.name, n: a.kind === 'discrete' ? a.n : 0 })),
  });
}

/** Hash of a spec's observation and action entries (what a model's inputs and outputs depend on). */
export function specInterfaceHash(spec: EnvSpec): string {
  return hashOf(canonicalJson({ observation: spec.observation, action: spec.action }));
}
