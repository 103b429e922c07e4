// The rows folder (wmrl-bc-rows/1): re-simulated BC rows on disk. manifest.json (zod below) names the
// scene, tokenizer, layout, source demonstrations and shards; it is committed last, so it is the folder's
// commit point (shards it does not name are leftovers of an interrupted write). A shard is
//   [HEADER_BYTES of JSON: format, scene, tokenizer, data, index][frames][rows]
// frame: each camera's uint8 HWC image, then proprio float32; row: int32 frame (in this shard), episode,
// maxLength token ids, one label per action head. Little-endian, like every binary file of the project.
// Node-only (no fs here, but only Node code reads these folders).
import { z } from 'zod';
import { hashOf } from '../core/hash.ts';
import { canonicalJson } from '../core/spec.ts';
import type { BcRowLayout } from '../policy/bc.ts';
import type { TokenizerConfig } from '../policy/tokenizer.ts';
import type { Scene } from '../scene/index.ts';

export const ROWS_FORMAT = 'wmrl-bc-rows/1';
export const ROWS_MANIFEST = 'manifest.json';
export const HEADER_BYTES = 256;

const hash16 = z.string().regex(/^[0-9a-f]{16}$/, '16 hex digits');
const name = z.string().min(1);

export const RowLayoutSchema = z.object({
  imageSize: z.tuple([z.number().int().positive(), z.number().int().positive()]),
  cameras: z.array(name),
  proprio: z.object({ name, dim: z.number().int().positive() }).nullable(),
  maxLength: z.number().int().positive(),
  actions: z.array(z.object({ name, n: z.number().int().min(2) })).min(1),
});

/** What the rows were made for: a reader refuses a folder made for another scene or tokenizer. */
export const RowsIdentitySchema = z.object({
  scene: z.object({ name, hash: hash16 }),
  tokenizer: hash16,
});
export type RowsIdentity = z.infer<typeof RowsIdentitySchema>;

/** What the rows were made from: the demonstration folder's data and the options that pick its rows. */
export const RowsSourceSchema = z.object({
  dataHash: hash16,
  counterfactualHash: hash16.nullable(),
  counterfactual: z.boolean(),
  onlySuccess: z.boolean(),
  demos: z.number().int().min(0),
});
export type RowsSource = z.infer<typeof RowsSourceSchema>;

export const ShardEntrySchema = z.object({
  file: z.string().regex(/^shard-\d{5}-[0-9a-f]{16}\.bin$/, 'shard-NNNNN-<16 hex>.bin'),
  frames: z.number().int().min(1),
  rows: z.number().int().min(1),
  bytes: z.number().int().positive(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, '64 hex digits'),
});
export type ShardEntry = z.infer<typeof ShardEntrySchema>;

export const RowsManifestSchema = z.object({
  format: z.literal(ROWS_FORMAT),
  ...RowsIdentitySchema.shape,
  layout: RowLayoutSchema,
  source: RowsSourceSchema,
  frames: z.number().int().min(0),
  rows: z.number().int().min(0),
  shards: z.array(ShardEntrySchema),
});
export type RowsManifest = z.infer<typeof RowsManifestSchema>;

export const ShardHeaderSchema = z.object({
  format: z.literal(ROWS_FORMAT),
  scene: hash16,
  tokenizer: hash16,
  data: hash16,
  index: z.number().int().min(0),
});
export type ShardHeader = z.infer<typeof ShardHeaderSchema>;

export function rowsIdentity(scene: Scene, tokenizer: TokenizerConfig): RowsIdentity {
  return {
    scene: { name: scene.name, hash: hashOf(canonicalJson(scene)) },
    tokenizer: hashOf(canonicalJson(tokenizer)),
  };
}

/** Bytes of one frame record. */
export function frameBytes(l: BcRowLayout): number {
  return l.cameras.length * l.imageSize[0] * l.imageSize[1] * 3 + 4 * (l.proprio?.dim ?? 0);
}

/** Int32 values of one row record: frame, episode, tokens, labels. */
export function rowInts(l: BcRowLayout): number {
  return 2 + l.maxLength + l.actions.length;
}

export function shardBytes(l: BcRowLayout, frames: number, rows: number): number {
  return HEADER_BYTES + frames * frameBytes(l) + rows * 4 * rowInts(l);
}

/** The header block: canonical JSON padded with spaces to HEADER_BYTES. */
export function encodeHeader(h: ShardHeader): Uint8Array {
  const text = canonicalJson(ShardHeaderSchema.parse(h));
  if (text.length > HEADER_BYTES) throw new Error(`shard header over ${HEADER_BYTES} bytes`);
  return new TextEncoder().encode(text.padEnd(HEADER_BYTES, ' '));
}

export function shardFileName(index: number, sha256: string): string {
  return `shard-${String(index).padStart(5, '0')}-${sha256.slice(0, 16)}.bin`;
}
