// The rows folder: written streaming in shards (each frame once), read back in batches byte-identical to
// the in-memory dataset, committed as one unit, refused when damaged or made for something else, and
// read with buffers that do not grow with the rows.
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import { hashOf } from '../../src/core/hash.ts';
import { frameBytes, HEADER_BYTES, rowInts, type RowsManifest } from '../../src/demos/rows-format.ts';
import { RowsFolder, type RowsExpectation, RowsUnion, StaleRowsError } from '../../src/demos/rows-source.ts';
import { type BcData, type BcDataset, bcBatch, bcRowLayout, gatherBcRows } from '../../src/policy/bc.ts';
import { SimulatedCrash } from '../../src/store/index.ts';
import {
  CONFIG,
  IDENTITY,
  SOURCE,
  startSyntheticRows,
  syntheticDataset,
  syntheticRows,
  writeSyntheticRows,
} from './rows-fixtures.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-rows-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(tmp, `r${n++}`);
const manifestOf = (dir: string): RowsManifest => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
const shardPath = (dir: string, k: number) => join(dir, manifestOf(dir).shards[k].file);
const all = (size: number) => Int32Array.from({ length: size }, (_, i) => i);

function openError(dir: string, want: RowsExpectation = {}): InputError {
  try {
    RowsFolder.open(dir, want).close();
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return err as InputError;
  }
  throw new Error(`${dir} opened without an error`);
}

const bytesOf = (d: ArrayBufferView) => Buffer.from(d.buffer, d.byteOffset, d.byteLength);

/** Every array of a dataset (or a batch's feeds) as name -> sha256 of its bytes: a cheap exact compare. */
function digest(arrays: Record<string, ArrayBufferView | null | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(arrays)
      .filter(([, v]) => v)
      .map(([k, v]) => [k, createHash('sha256').update(bytesOf(v!)).digest('hex')]),
  );
}
const rowsDigest = (ds: BcDataset) => ({
  ...digest({ tokens: ds.tokens, proprio: ds.proprio, episode: ds.episode }),
  ...digest(ds.images),
  ...digest(ds.labels),
});
const feedDigest = (data: BcData, step: number) =>
  digest(
    Object.fromEntries(
      Object.entries(bcBatch(data, CONFIG, 32, 7, step, 2, 0.2).feeds).map(([k, t]) => [k, t.data as ArrayBufferView]),
    ),
  );

describe('rows folders (wmrl-bc-rows/1)', () => {
  it('read back byte-identical to the in-memory dataset, each frame stored once', () => {
    const dir = fresh();
    writeSyntheticRows(dir, 50, { framesPerShard: 16 });
    const m = manifestOf(dir);
    expect(m.shards.map((s) => s.frames)).toEqual([16, 16, 16, 2]);
    expect(m.rows).toBe(syntheticRows(50));
    const bytes = m.shards.reduce((s, x) => s + statSync(join(dir, x.file)).size, 0);
    const layout = bcRowLayout(CONFIG);
    expect(bytes).toBe(4 * HEADER_BYTES + 50 * frameBytes(layout) + m.rows * 4 * rowInts(layout));
    const ds = syntheticDataset(50);
    const rows = RowsFolder.open(dir, { identity: IDENTITY, layout, source: SOURCE });
    try {
      const back = { ...gatherBcRows(rows, CONFIG, all(rows.size)), episode: new Int32Array(rows.size) };
      rows.readRows(all(rows.size), back);
      expect(rowsDigest(back)).toEqual(rowsDigest(ds));
      for (let step = 0; step < 8; step++) expect(feedDigest(rows, step)).toEqual(feedDigest(ds, step));
      const union = new RowsUnion([rows, rows]);
      expect(union.size).toBe(2 * rows.size);
      const tail = Int32Array.from({ length: rows.size }, (_, i) => rows.size + i);
      expect(rowsDigest(gatherBcRows(union, CONFIG, tail))).toEqual(rowsDigest(gatherBcRows(ds, CONFIG, all(ds.size))));
    } finally {
      rows.close();
    }
  });

  it('a truncated, grown, changed or missing shard is an InputError naming the shard', () => {
    const dir = fresh();
    writeSyntheticRows(dir, 40);
    const path = shardPath(dir, 1);
    const good = readFileSync(path);
    truncateSync(path, good.length - 100);
    expect(openError(dir).message).toBe(
      `${path}: ${good.length - 100} bytes, manifest.json says ${good.length} (truncated)`,
    );
    writeFileSync(path, Buffer.concat([good, Buffer.alloc(1)]));
    expect(openError(dir).message).toMatch(/ \(grown\)$/);
    const changed = Buffer.from(good);
    changed[HEADER_BYTES + 5] ^= 1;
    writeFileSync(path, changed);
    expect(openError(dir).message).toBe(`${path}: its bytes do not match the sha256 in manifest.json`);
    rmSync(path);
    expect(openError(dir).message).toBe(`${path}: missing (named by manifest.json)`);
  });

  it('a shard made for another scene or tokenizer is an InputError naming the shard and what differs', () => {
    const dir = fresh();
    writeSyntheticRows(dir, 20);
    for (const [field, identity] of [
      ['scene', { ...IDENTITY, scene: { name: 'tabletop', hash: hashOf('other scene') } }],
      ['tokenizer', { ...IDENTITY, tokenizer: hashOf('other tokenizer') }],
    ] as const) {
      const other = fresh();
      writeSyntheticRows(other, 20, { identity });
      copyFileSync(shardPath(other, 0), shardPath(dir, 0));
      const made = field === 'scene' ? identity.scene.hash : identity.tokenizer;
      const want = field === 'scene' ? IDENTITY.scene.hash : IDENTITY.tokenizer;
      expect(openError(dir).message).toBe(
        `${shardPath(dir, 0)}: a shard made for ${field} ${made}, but manifest.json says ${want}`,
      );
    }
  });

  it('a folder made for another scene, tokenizer or source is refused (StaleRowsError) naming manifest.json', () => {
    const dir = fresh();
    writeSyntheticRows(dir, 20);
    const path = join(dir, 'manifest.json');
    const tok = openError(dir, { identity: { ...IDENTITY, tokenizer: hashOf('other') } });
    expect(tok).toBeInstanceOf(StaleRowsError);
    expect(tok.message).toBe(
      `${path}: made for something else: tokenizer is ${IDENTITY.tokenizer}, expected ${hashOf('other')}`,
    );
    const scene = openError(dir, { identity: { ...IDENTITY, scene: { name: 'kitchen', hash: hashOf('k') } } });
    expect(scene.message).toMatch(/scene\.name is tabletop, expected kitchen; scene\.hash is [0-9a-f]{16}, expected/);
    const src = openError(dir, { source: { ...SOURCE, counterfactual: false } });
    expect(src.message).toMatch(/source\.counterfactual is true, expected false$/);
    writeFileSync(path, JSON.stringify({ ...manifestOf(dir), format: 'wmrl-bc-rows/0' }));
    expect(openError(dir)).toBeInstanceOf(StaleRowsError);
  });

  it('is committed as one unit: a crash at any point of a rewrite leaves the old rows or the new ones', () => {
    const dir = fresh();
    writeSyntheticRows(dir, 30);
    const old = manifestOf(dir);
    // killed while writing shards: the old manifest still reads, its shards intact
    startSyntheticRows(dir, 40, { seed: 1 });
    expect(readdirSync(dir).filter((f) => f.startsWith('shard-')).length).toBeGreaterThan(old.shards.length);
    RowsFolder.open(dir).close();
    expect(manifestOf(dir)).toEqual(old);
    for (let boundary = 0; ; boundary++) {
      const writer = startSyntheticRows(dir, 40, { seed: 1 });
      const fault = (b: number) => {
        if (b === boundary) throw new SimulatedCrash(`boundary ${b}`);
      };
      let crashed = false;
      try {
        writer.finish({ fault });
      } catch (err) {
        if (!(err instanceof SimulatedCrash)) throw err;
        crashed = true;
      }
      const rows = RowsFolder.open(dir);
      expect([old.rows, syntheticRows(40)]).toContain(rows.size);
      rows.close();
      if (!crashed) break;
    }
    expect(manifestOf(dir).rows).toBe(syntheticRows(40));
    const named = manifestOf(dir).shards.map((s) => s.file);
    expect(
      readdirSync(dir)
        .filter((f) => f.startsWith('shard-'))
        .sort(),
    ).toEqual([...named].sort());
  });

  it('memory stays flat as the rows grow 4x: the source holds one row; the in-memory dataset grows', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const arrayBuffers = () => {
      gc();
      gc();
      return process.memoryUsage().arrayBuffers;
    };
    const [small, large] = [fresh(), fresh()];
    writeSyntheticRows(small, 300, { framesPerShard: 128 });
    writeSyntheticRows(large, 1200, { framesPerShard: 128 });
    const bound = 2 << 20;
    const used = (dir: string, inMemory: boolean) => {
      const base = arrayBuffers();
      const rows = RowsFolder.open(dir);
      let kept: unknown = null;
      try {
        if (inMemory) kept = gatherBcRows(rows, CONFIG, all(rows.size));
        for (let step = 0; step < 20; step++) bcBatch(rows, CONFIG, 64, 3, step, 1);
        return { bytes: arrayBuffers() - base, own: rows.bufferBytes, size: rows.size, kept: !!kept };
      } finally {
        rows.close();
      }
    };
    const [s1, s4] = [used(small, false), used(large, false)];
    expect(s4.size).toBeGreaterThan(3.9 * s1.size);
    expect(s4.own).toBe(s1.own);
    expect(s4.bytes - s1.bytes).toBeLessThan(bound);
    const [m1, m4] = [used(small, true), used(large, true)];
    console.log(
      `arrayBuffers growth from 1x to 4x rows (${s1.size} -> ${s4.size}): shards ${s4.bytes - s1.bytes} B, ` +
        `in memory ${m4.bytes - m1.bytes} B (bound ${bound} B)`,
    );
    expect(m4.bytes - m1.bytes).toBeGreaterThan(bound);
  });
});
