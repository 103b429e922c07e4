// Writes a rows folder (rows-format.ts) streaming: frames go to the open shard as they come, a shard's
// rows are held until it closes (a few thousand frames' worth), then it is fsynced and renamed to a name
// that carries its sha256. The manifest is committed last (store/commit.ts), so a crash leaves the old
// folder or the new one; shards no manifest names are deleted after the commit. One writer at a time.
// Node-only.
import { type Hash, createHash } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { BatchObs } from '../env/types.ts';
import type { BcRowLayout } from '../policy/bc.ts';
import { type CommitOptions, commitFiles, recoverFolder } from '../store/index.ts';
import {
  encodeHeader,
  frameBytes,
  ROWS_FORMAT,
  ROWS_MANIFEST,
  type RowsIdentity,
  type RowsManifest,
  RowsManifestSchema,
  type RowsSource,
  rowInts,
  type ShardEntry,
  shardBytes,
  shardFileName,
} from './rows-format.ts';

export const DEFAULT_FRAMES_PER_SHARD = 4096;

export interface RowsWriterOptions {
  identity: RowsIdentity;
  layout: BcRowLayout;
  source: RowsSource;
  framesPerShard?: number;
}

interface OpenShard {
  index: number;
  temp: string;
  fd: number;
  hash: Hash;
  frames: number;
  rows: number;
  /** Row records of this shard, grown by doubling. */
  records: Int32Array;
}

let tempSeq = 0;

export class RowsWriter {
  private shard: OpenShard | null = null;
  private readonly shards: ShardEntry[] = [];
  private readonly scratch: Uint8Array;
  private readonly px: number;
  private readonly perShard: number;
  private frames = 0;
  private rows = 0;

  constructor(
    readonly dir: string,
    private readonly o: RowsWriterOptions,
  ) {
    this.scratch = new Uint8Array(frameBytes(o.layout));
    this.px = o.layout.imageSize[0] * o.layout.imageSize[1] * 3;
    this.perShard = o.framesPerShard ?? DEFAULT_FRAMES_PER_SHARD;
    if (!Number.isInteger(this.perShard) || this.perShard < 1)
      throw new RangeError(`rows: framesPerShard must be a positive integer, got ${this.perShard}`);
    mkdirSync(dir, { recursive: true });
    recoverFolder(dir);
  }

  /** A new frame: one HWC image per camera (layout order) and the proprio vector. */
  addFrame(images: readonly Uint8Array[], proprio: Float32Array | null): void {
    const { layout } = this.o;
    if (images.length !== layout.cameras.length) throw new RangeError(`rows: ${images.length} images per frame`);
    images.forEach((img, c) => {
      if (img.length !== this.px) throw new RangeError(`rows: image ${c} holds ${img.length} bytes, not ${this.px}`);
      this.scratch.set(img, c * this.px);
    });
    const dim = layout.proprio?.dim ?? 0;
    if ((proprio?.length ?? 0) !== dim) throw new RangeError(`rows: proprio must hold ${dim} floats`);
    if (proprio) this.scratch.set(new Uint8Array(proprio.buffer, proprio.byteOffset, 4 * dim), images.length * this.px);
    if (this.shard && this.shard.frames === this.perShard) this.closeShard();
    const s = this.shard ?? this.openShard();
    this.write(s, this.scratch);
    s.frames++;
    this.frames++;
  }

  /** A row on the last frame; `labels` in layout.actions order. */
  row(tokens: ArrayLike<number>, labels: ArrayLike<number>, episode: number): void {
    const s = this.shard;
    if (!s || s.frames === 0) throw new Error('rows: a row before any frame');
    const { maxLength, actions } = this.o.layout;
    if (tokens.length !== maxLength) throw new RangeError(`rows: ${tokens.length} tokens, not ${maxLength}`);
    actions.forEach((a, j) => {
      if (!(labels[j] >= 0 && labels[j] < a.n)) throw new RangeError(`rows: label ${a.name} = ${labels[j]}`);
    });
    const R = rowInts(this.o.layout);
    if ((s.rows + 1) * R > s.records.length) {
      const grown = new Int32Array(s.records.length * 2);
      grown.set(s.records);
      s.records = grown;
    }
    const at = s.rows * R;
    s.records[at] = s.frames - 1;
    s.records[at + 1] = episode;
    for (let k = 0; k < maxLength; k++) s.records[at + 2 + k] = tokens[k];
    for (let j = 0; j < actions.length; j++) s.records[at + 2 + maxLength + j] = labels[j];
    s.rows++;
    this.rows++;
  }

  /** Slot i of a batched observation as the next frame (with row(): a RowSink of demos.ts). */
  frame(obs: BatchObs, i: number): void {
    const { cameras, proprio } = this.o.layout;
    const images = cameras.map((c) => (obs[c] as Uint8Array).subarray(i * this.px, (i + 1) * this.px));
    const p = proprio ? (obs[proprio.name] as Float32Array).subarray(i * proprio.dim, (i + 1) * proprio.dim) : null;
    this.addFrame(images, p);
  }

  /** Closes the last shard and commits the manifest; shards it does not name are deleted. */
  finish(commit?: CommitOptions): RowsManifest {
    if (this.shard) this.closeShard();
    const manifest = RowsManifestSchema.parse({
      format: ROWS_FORMAT,
      ...this.o.identity,
      layout: this.o.layout,
      source: this.o.source,
      frames: this.frames,
      rows: this.rows,
      shards: this.shards,
    });
    commitFiles([{ path: join(this.dir, ROWS_MANIFEST), data: `${JSON.stringify(manifest, null, 2)}\n` }], commit);
    const named = new Set(this.shards.map((s) => s.file));
    for (const f of readdirSync(this.dir))
      if (/^shard-.*\.bin$/.test(f) && !named.has(f)) rmSync(join(this.dir, f), { force: true });
    return manifest;
  }

  /** Gives up: the open shard's temp file is deleted; the folder keeps its last committed manifest. */
  abort(): void {
    const s = this.shard;
    this.shard = null;
    if (!s) return;
    closeSync(s.fd);
    rmSync(s.temp, { force: true });
  }

  private openShard(): OpenShard {
    const index = this.shards.length;
    const temp = join(this.dir, `.shard-${index}.bin.${process.pid}.${(tempSeq++).toString(36)}.tmp`);
    const { identity, source } = this.o;
    const s: OpenShard = {
      index,
      temp,
      fd: openSync(temp, 'wx'),
      hash: createHash('sha256'),
      frames: 0,
      rows: 0,
      records: new Int32Array(rowInts(this.o.layout) * this.perShard),
    };
    this.shard = s;
    const header = { scene: identity.scene.hash, tokenizer: identity.tokenizer, data: source.dataHash, index };
    this.write(s, encodeHeader({ format: ROWS_FORMAT, ...header }));
    return s;
  }

  private write(s: OpenShard, bytes: Uint8Array): void {
    for (let off = 0; off < bytes.length; ) off += writeSync(s.fd, bytes, off, bytes.length - off);
    s.hash.update(bytes);
  }

  private closeShard(): void {
    const s = this.shard!;
    const R = rowInts(this.o.layout);
    this.write(s, new Uint8Array(s.records.buffer, 0, s.rows * R * 4));
    fsyncSync(s.fd);
    closeSync(s.fd);
    this.shard = null;
    const sha256 = s.hash.digest('hex');
    const file = shardFileName(s.index, sha256);
    renameSync(s.temp, join(this.dir, file));
    const bytes = shardBytes(this.o.layout, s.frames, s.rows);
    this.shards.push({ file, frames: s.frames, rows: s.rows, bytes, sha256 });
  }
}
