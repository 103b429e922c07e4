// Synthetic rows folders for the rows tests: frames of a cheap pattern, one to three rows per frame (a
// real row and counterfactual ones), written by RowsWriter and, for comparison, held in memory.
import { hashOf } from '../../src/core/hash.ts';
import type { RowsIdentity, RowsSource } from '../../src/demos/rows-format.ts';
import { RowsWriter } from '../../src/demos/rows-writer.ts';
import { type BcDataset, bcRowLayout, emptyBcDataset } from '../../src/policy/bc.ts';
import type { VlaConfig } from '../../src/policy/vla.ts';
import { tinyConfig } from '../policy/fixtures.ts';

export const CONFIG: VlaConfig = tinyConfig({ imageSize: [64, 64] });
export const IDENTITY: RowsIdentity = { scene: { name: 'tabletop', hash: hashOf('scene') }, tokenizer: hashOf('tok') };
export const SOURCE: RowsSource = {
  dataHash: hashOf('data'),
  counterfactualHash: null,
  counterfactual: true,
  onlySuccess: false,
  demos: 1,
};

const rowsOfFrame = (f: number) => 1 + (f % 3);

/** The frames' images and proprio, and the rows' tokens, labels and episodes. */
function frameOf(f: number, seed: number): { images: Uint8Array[]; proprio: Float32Array } {
  const [h, w] = CONFIG.imageSize;
  const images = CONFIG.cameras.map((_, c) => {
    const img = new Uint8Array(h * w * 3);
    for (let k = 0; k < img.length; k++) img[k] = (k * 7 + f * 13 + c * 101 + seed) & 255;
    return img;
  });
  return { images, proprio: Float32Array.from({ length: CONFIG.proprio!.dim }, (_, k) => f + k / 8 + seed) };
}

function rowOf(f: number, j: number): { tokens: Int32Array; labels: number[]; episode: number } {
  const L = CONFIG.tokenizer.maxLength;
  const tokens = Int32Array.from({ length: L }, (_, k) => (k < 3 + j ? 2 + ((f + k + j) % 7) : 0));
  return { tokens, labels: CONFIG.actions.map((a, d) => (f + j + d) % a.n), episode: Math.floor(f / 10) };
}

export function syntheticRows(frames: number): number {
  let n = 0;
  for (let f = 0; f < frames; f++) n += rowsOfFrame(f);
  return n;
}

export interface SyntheticOptions {
  identity?: RowsIdentity;
  source?: RowsSource;
  framesPerShard?: number;
  seed?: number;
}

/** A writer with `frames` frames added (not finished). */
export function startSyntheticRows(dir: string, frames: number, o: SyntheticOptions = {}): RowsWriter {
  const writer = new RowsWriter(dir, {
    identity: o.identity ?? IDENTITY,
    layout: bcRowLayout(CONFIG),
    source: o.source ?? SOURCE,
    framesPerShard: o.framesPerShard ?? 16,
  });
  for (let f = 0; f < frames; f++) {
    const { images, proprio } = frameOf(f, o.seed ?? 0);
    writer.addFrame(images, proprio);
    for (let j = 0; j < rowsOfFrame(f); j++) {
      const r = rowOf(f, j);
      writer.row(r.tokens, r.labels, r.episode);
    }
  }
  return writer;
}

export function writeSyntheticRows(dir: string, frames: number, o: SyntheticOptions = {}): void {
  startSyntheticRows(dir, frames, o).finish();
}

/** The same rows in memory, every row with its own copy of its frame (the old layout). */
export function syntheticDataset(frames: number, seed = 0): BcDataset {
  const size = syntheticRows(frames);
  const ds: BcDataset = { ...emptyBcDataset(CONFIG, size), episode: new Int32Array(size) };
  const [h, w] = CONFIG.imageSize;
  const px = h * w * 3;
  const L = CONFIG.tokenizer.maxLength;
  const dim = CONFIG.proprio!.dim;
  let row = 0;
  for (let f = 0; f < frames; f++) {
    const { images, proprio } = frameOf(f, seed);
    for (let j = 0; j < rowsOfFrame(f); j++, row++) {
      const r = rowOf(f, j);
      CONFIG.cameras.forEach((cam, c) => ds.images[cam].set(images[c], row * px));
      ds.proprio!.set(proprio, row * dim);
      ds.tokens.set(r.tokens, row * L);
      CONFIG.actions.forEach((a, d) => (ds.labels[a.name][row] = r.labels[d]));
      ds.episode![row] = r.episode;
    }
  }
  return ds;
}
