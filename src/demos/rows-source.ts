// Reads a rows folder (rows-format.ts) as a BC row source: open checks the manifest against what the
// caller expects (scene, tokenizer, layout, source) and every shard's size, header and sha256; a batch
// is then two positioned reads per row (its record, its frame) into buffers of one row, so memory stays
// flat however many rows the folder holds. RowsUnion concatenates folders. Node-only.
import { createHash } from 'node:crypto';
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../core/errors.ts';
import { checkFolder, parseInput, readInputJsonRaw } from '../core/input-file.ts';
import { canonicalJson } from '../core/spec.ts';
import type { BcDataset, BcRowLayout, BcRowSource } from '../policy/bc.ts';
import { recoverFolder, runKeyDiff } from '../store/index.ts';
import {
  frameBytes,
  HEADER_BYTES,
  ROWS_FORMAT,
  ROWS_MANIFEST,
  type RowsIdentity,
  type RowsManifest,
  RowsManifestSchema,
  type RowsSource,
  rowInts,
  type ShardEntry,
  shardBytes,
  ShardHeaderSchema,
} from './rows-format.ts';

/** A folder made for something else (another format, scene, tokenizer, layout or source data): a cache
 *  rebuilds it; anything else wrong with a folder is a plain InputError. */
export class StaleRowsError extends InputError {}

export interface RowsExpectation {
  identity?: RowsIdentity;
  layout?: BcRowLayout;
  source?: RowsSource;
}

/** The differences between what the folder was made for and what is expected, as "field (a, want b)". */
function differences(m: RowsManifest, want: RowsExpectation): string[] {
  const made = { identity: { scene: m.scene, tokenizer: m.tokenizer }, layout: m.layout, source: m.source };
  const show = (v: unknown) => (typeof v === 'string' ? v : canonicalJson(v));
  return runKeyDiff(
    {
      identity: want.identity && made.identity,
      layout: want.layout && made.layout,
      source: want.source && made.source,
    },
    want,
  ).map((d) => `${d.key.replace(/^identity\./, '')} is ${show(d.saved)}, expected ${show(d.current)}`);
}

export class RowsFolder implements BcRowSource {
  readonly size: number;
  readonly layout: BcRowLayout;
  private readonly fds: number[] = [];
  /** First row of each shard, and the total at the end. */
  private readonly starts: number[] = [0];
  private readonly record: Int32Array;
  private readonly frame: Uint8Array;
  private readonly proprio: Float32Array;

  private constructor(
    readonly dir: string,
    readonly manifest: RowsManifest,
  ) {
    this.layout = manifest.layout;
    this.size = manifest.rows;
    for (const s of manifest.shards) this.starts.push(this.starts[this.starts.length - 1] + s.rows);
    this.record = new Int32Array(rowInts(this.layout));
    this.frame = new Uint8Array(frameBytes(this.layout));
    this.proprio = new Float32Array(this.layout.proprio?.dim ?? 0);
  }

  /** Opens and checks a folder: made for something else -> StaleRowsError naming manifest.json and the
   *  fields; a missing, truncated, foreign or changed shard -> InputError naming the shard. `verify`
   *  (default true) also checks every shard's sha256 (one read of the folder). */
  static open(dir: string, want: RowsExpectation = {}, o: { verify?: boolean } = {}): RowsFolder {
    checkFolder(dir, 'a BC rows folder');
    recoverFolder(dir);
    const path = join(dir, ROWS_MANIFEST);
    const raw = readInputJsonRaw(path, 'BC rows manifest', `is ${dir} a rows folder?`);
    const format = (raw as { format?: unknown } | null)?.format;
    if (format !== ROWS_FORMAT)
      throw new StaleRowsError(`${path}: format ${JSON.stringify(format)}, this build reads ${ROWS_FORMAT}`);
    const m = parseInput(raw, RowsManifestSchema, path);
    const diff = differences(m, want);
    if (diff.length) throw new StaleRowsError(`${path}: made for something else: ${diff.join('; ')}`);
    const sum = (k: 'frames' | 'rows') => m.shards.reduce((s, x) => s + x[k], 0);
    if (sum('frames') !== m.frames || sum('rows') !== m.rows)
      throw new InputError(
        `${path}: its shards hold ${sum('frames')} frames and ${sum('rows')} rows, not ${m.frames} and ${m.rows}`,
      );
    const folder = new RowsFolder(dir, m);
    try {
      m.shards.forEach((s, k) => folder.fds.push(openShard(dir, m, s, k, o.verify ?? true)));
    } catch (err) {
      folder.close();
      throw err;
    }
    return folder;
  }

  /** Bytes of this source's own buffers (one row record, one frame): the same for any number of rows. */
  get bufferBytes(): number {
    return this.record.byteLength + this.frame.byteLength + this.proprio.byteLength;
  }

  readRows(rows: Int32Array, into: BcDataset): void {
    rows.forEach((r, b) => this.readRow(r, into, b));
  }

  /** Copies row `row` into slot `b` of `into` (and its episode, when `into` has an episode column). */
  readRow(row: number, into: BcDataset, b: number): void {
    if (!(row >= 0 && row < this.size)) throw new RangeError(`rows: row ${row} outside [0, ${this.size})`);
    let k = 0;
    for (let hi = this.manifest.shards.length - 1; k < hi; ) {
      const mid = (k + hi + 1) >> 1;
      if (this.starts[mid] <= row) k = mid;
      else hi = mid - 1;
    }
    const s = this.manifest.shards[k];
    const { cameras, imageSize, maxLength: L, actions } = this.layout;
    const frames = HEADER_BYTES + s.frames * this.frame.length;
    const local = row - this.starts[k];
    const where = `${join(this.dir, s.file)}: row ${local}`;
    this.read(k, new Uint8Array(this.record.buffer), frames + local * this.record.byteLength);
    const f = this.record[0];
    if (!(f >= 0 && f < s.frames)) throw new InputError(`${where} names frame ${f}, the shard has ${s.frames}`);
    this.read(k, this.frame, HEADER_BYTES + f * this.frame.length);
    const px = imageSize[0] * imageSize[1] * 3;
    cameras.forEach((cam, c) => into.images[cam].set(this.frame.subarray(c * px, (c + 1) * px), b * px));
    if (into.proprio) {
      new Uint8Array(this.proprio.buffer).set(this.frame.subarray(cameras.length * px));
      into.proprio.set(this.proprio, b * this.proprio.length);
    }
    into.tokens.set(this.record.subarray(2, 2 + L), b * L);
    actions.forEach((a, j) => {
      const v = this.record[2 + L + j];
      if (!(v >= 0 && v < a.n)) throw new InputError(`${where}: label ${a.name} = ${v} is not a bin in [0, ${a.n})`);
      into.labels[a.name][b] = v;
    });
    if (into.episode) into.episode[b] = this.record[1];
  }

  close(): void {
    for (const fd of this.fds.splice(0)) closeSync(fd);
  }

  private read(k: number, into: Uint8Array, position: number): void {
    for (let off = 0; off < into.length; ) {
      const n = readSync(this.fds[k], into, off, into.length - off, position + off);
      if (n === 0)
        throw new InputError(
          `${join(this.dir, this.manifest.shards[k].file)}: ends before byte ${position + into.length}`,
        );
      off += n;
    }
  }
}

/** Opens shard `k` and checks its size, header and (with `verify`) sha256 against the manifest. */
function openShard(dir: string, m: RowsManifest, s: ShardEntry, k: number, verify: boolean): number {
  const path = join(dir, s.file);
  const entry = `${join(dir, ROWS_MANIFEST)}: $.shards[${k}]`;
  const want = shardBytes(m.layout, s.frames, s.rows);
  if (s.bytes !== want)
    throw new InputError(`${entry}: ${s.bytes} bytes, but ${s.frames} frames and ${s.rows} rows take ${want}`);
  if (!existsSync(path)) throw new InputError(`${path}: missing (named by ${ROWS_MANIFEST})`);
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size !== s.bytes)
      throw new InputError(
        `${path}: ${size} bytes, ${ROWS_MANIFEST} says ${s.bytes} (${size < s.bytes ? 'truncated' : 'grown'})`,
      );
    const head = new Uint8Array(HEADER_BYTES);
    readSync(fd, head, 0, HEADER_BYTES, 0);
    let h: unknown;
    try {
      h = JSON.parse(new TextDecoder().decode(head));
    } catch {
      throw new InputError(`${path}: its first ${HEADER_BYTES} bytes are not a ${ROWS_FORMAT} shard header`);
    }
    const header = parseInput(h, ShardHeaderSchema, `${path}: header`);
    const expected = { scene: m.scene.hash, tokenizer: m.tokenizer, data: m.source.dataHash, index: k };
    for (const [key, v] of Object.entries(expected)) {
      const got = header[key as keyof typeof expected];
      if (got !== v) throw new InputError(`${path}: a shard made for ${key} ${got}, but ${ROWS_MANIFEST} says ${v}`);
    }
    if (verify && sha256Of(fd, size) !== s.sha256)
      throw new InputError(`${path}: its bytes do not match the sha256 in ${ROWS_MANIFEST}`);
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** The sha256 of an open file, read in pieces of 1 MiB (a shard may be far larger). */
function sha256Of(fd: number, size: number): string {
  const hash = createHash('sha256');
  const piece = new Uint8Array(Math.min(size, 1 << 20));
  for (let at = 0; at < size; ) {
    const n = readSync(fd, piece, 0, Math.min(piece.length, size - at), at);
    if (n === 0) break;
    hash.update(piece.subarray(0, n));
    at += n;
  }
  return hash.digest('hex');
}

/** Rows folders one after another (all of one layout). */
export class RowsUnion implements BcRowSource {
  readonly size: number;
  readonly layout: BcRowLayout;
  private readonly starts: number[] = [0];

  constructor(readonly folders: readonly RowsFolder[]) {
    if (!folders.length) throw new Error('RowsUnion: no folders');
    this.layout = folders[0].layout;
    for (const f of folders) {
      if (canonicalJson(f.layout) !== canonicalJson(this.layout))
        throw new InputError(`${f.dir}: its rows are laid out unlike those of ${folders[0].dir}`);
      this.starts.push(this.starts[this.starts.length - 1] + f.size);
    }
    this.size = this.starts[folders.length];
  }

  get bufferBytes(): number {
    return this.folders.reduce((s, f) => s + f.bufferBytes, 0);
  }

  readRows(rows: Int32Array, into: BcDataset): void {
    rows.forEach((r, b) => {
      if (!(r >= 0 && r < this.size)) throw new RangeError(`rows: row ${r} outside [0, ${this.size})`);
      let k = 0;
      while (this.starts[k + 1] <= r) k++;
      this.folders[k].readRow(r - this.starts[k], into, b);
    });
  }

  close(): void {
    for (const f of this.folders) f.close();
  }
}
