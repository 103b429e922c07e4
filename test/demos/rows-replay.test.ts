// Re-simulated demonstrations: the rows folder (shards on disk) and the in-memory dataset hold the same
// rows in the same order, so BC batches are byte-identical whichever one the trainer samples from.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadScene } from '../../src/cli/scene.ts';
import { collectDemos, type Demo, demoRows, demosToDataset } from '../../src/demos/index.ts';
import { writeDemoRows } from '../../src/demos/rows-cache.ts';
import { rowsIdentity } from '../../src/demos/rows-format.ts';
import { RowsFolder } from '../../src/demos/rows-source.ts';
import { fixedCameras, tabletopSpec } from '../../src/physics/index.ts';
import { type BcData, type BcDataset, bcBatch, bcRowLayout, gatherBcRows } from '../../src/policy/bc.ts';
import { PRETRAIN_SIZES, sceneWords } from '../../src/policy/presets.ts';
import { vlaConfigFromSpec } from '../../src/policy/spec-config.ts';
import { WordTokenizer } from '../../src/policy/tokenizer.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-rows-replay-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const scene = loadScene(undefined);
const words = sceneWords(scene);
const tokenizer = WordTokenizer.fromCorpus(words.corpus, { maxLength: words.maxLength });
const config = vlaConfigFromSpec(
  tabletopSpec(scene, 'tabletop/pick-place', fixedCameras(scene)),
  tokenizer.config,
  PRETRAIN_SIZES.tiny,
);
const source = (demos: Demo[]) => ({
  dataHash: '0123456789abcdef',
  counterfactualHash: null,
  counterfactual: true,
  onlySuccess: false,
  demos: demos.length,
});

let demos: Demo[] = [];
beforeAll(async () => {
  const o = { episodes: 3, noise: 0.05, seed: 0, seedOffset: 0, numEnvs: 3 };
  demos = [
    ...(await collectDemos(scene, 'tabletop/pick-place', o)),
    ...(await collectDemos(scene, 'tabletop/push', o)),
  ];
}, 60_000);

const sha = (d: ArrayBufferView) =>
  createHash('sha256')
    .update(new Uint8Array(d.buffer, d.byteOffset, d.byteLength))
    .digest('hex');
const rowsDigest = (ds: BcDataset) => [
  ...config.cameras.map((c) => sha(ds.images[c])),
  sha(ds.proprio!),
  sha(ds.tokens),
  ...config.actions.map((a) => sha(ds.labels[a.name])),
  sha(ds.episode!),
];
const batchDigest = (data: BcData, step: number) =>
  Object.entries(bcBatch(data, config, 64, 5, step, 2, 0.1).feeds).map(
    ([k, t]) => `${k}:${sha(t.data as ArrayBufferView)}`,
  );

describe('re-simulated rows on disk vs in memory', () => {
  it('hold the same rows, and the BC batches are byte-identical', { timeout: 60_000 }, async () => {
    const memory = await demosToDataset(scene, demos, config, tokenizer, { counterfactual: true });
    expect(memory.size).toBe(demoRows(demos, true));
    expect(demos.some((d) => d.counterfactual.length)).toBe(true);
    const dir = join(tmp, 'rows');
    await writeDemoRows(dir, scene, demos, config, tokenizer, source(demos), { framesPerShard: 50 });
    const want = {
      identity: rowsIdentity(scene, tokenizer.config),
      layout: bcRowLayout(config),
      source: source(demos),
    };
    const rows = RowsFolder.open(dir, want);
    try {
      expect(rows.size).toBe(memory.size);
      expect(rows.manifest.frames).toBe(demos.reduce((s, d) => s + d.length, 0));
      expect(rows.manifest.shards.length).toBeGreaterThan(1);
      const every = Int32Array.from({ length: rows.size }, (_, i) => i);
      const back = { ...gatherBcRows(rows, config, every), episode: new Int32Array(rows.size) };
      rows.readRows(every, back);
      expect(rowsDigest(back)).toEqual(rowsDigest(memory));
      for (let step = 0; step < 10; step++) expect(batchDigest(rows, step)).toEqual(batchDigest(memory, step));
    } finally {
      rows.close();
    }
  });
});
