// Demonstration folders as rows folders cached in a run folder: rows/<data hash>-<options hash>/, made
// once by re-simulation (replayDemos into a RowsWriter) and reused by a resume or a re-run. A cache made
// for something else (another scene, tokenizer, layout or build of the format) is rebuilt; a damaged one
// (a shard missing, truncated, foreign or changed) is refused, naming the shard. Node-only.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../core/errors.ts';
import { hashOf } from '../core/hash.ts';
import { canonicalJson } from '../core/spec.ts';
import { ACTION_NAMES, camerasOf } from '../physics/index.ts';
import { bcRowLayout } from '../policy/bc.ts';
import type { WordTokenizer } from '../policy/tokenizer.ts';
import type { VlaConfig } from '../policy/vla.ts';
import type { Scene } from '../scene/index.ts';
import { replayDemos } from './demos.ts';
import type { Demo } from './labels.ts';
import { ROWS_MANIFEST, rowsIdentity, type RowsSource } from './rows-format.ts';
import { RowsFolder, type RowsExpectation, StaleRowsError } from './rows-source.ts';
import { RowsWriter } from './rows-writer.ts';

/** The data hash of a demonstration folder (episodes.bin and labels.bin, as run keys have always used). */
export function demoDataHash(dir: string): string {
  return hashOf(readFileSync(join(dir, 'episodes.bin')), readFileSync(join(dir, 'labels.bin')));
}

/** What a rows folder of `dir`'s demos is made from. */
export function demoRowsSource(
  dir: string,
  demos: readonly Demo[],
  o: { counterfactual: boolean; onlySuccess: boolean },
): RowsSource {
  const cf = join(dir, 'counterfactual.bin');
  return {
    dataHash: demoDataHash(dir),
    counterfactualHash: existsSync(cf) ? hashOf(readFileSync(cf)) : null,
    counterfactual: o.counterfactual,
    onlySuccess: o.onlySuccess,
    demos: demos.length,
  };
}

/** Re-simulates `demos` into a rows folder at `dir` (replacing what is there as one commit). */
export async function writeDemoRows(
  dir: string,
  scene: Scene,
  demos: Demo[],
  config: VlaConfig,
  tokenizer: WordTokenizer,
  source: RowsSource,
  o: { framesPerShard?: number; numEnvs?: number } = {},
): Promise<void> {
  const layout = bcRowLayout(config);
  if (canonicalJson(layout.actions.map((a) => a.name)) !== canonicalJson(ACTION_NAMES))
    throw new Error(`rows: the policy's action heads are not ${ACTION_NAMES.join(', ')}`);
  const writer = new RowsWriter(dir, {
    identity: rowsIdentity(scene, tokenizer.config),
    layout,
    source,
    framesPerShard: o.framesPerShard,
  });
  try {
    await replayDemos(scene, demos, tokenizer, writer, {
      numEnvs: o.numEnvs,
      counterfactual: source.counterfactual,
      cameras: camerasOf(config.cameras),
    });
  } catch (err) {
    writer.abort();
    throw err;
  }
  writer.finish();
}

export interface CachedRowsInput {
  /** The demonstration folder. */
  data: string;
  demos: Demo[];
  source: RowsSource;
}

/** The rows of each input, from its cache under `root` (made when missing or stale); with `prune`, caches
 *  no input uses are deleted. */
export async function cachedDemoRows(
  root: string,
  prune: boolean,
  inputs: readonly CachedRowsInput[],
  scene: Scene,
  config: VlaConfig,
  tokenizer: WordTokenizer,
  log?: (line: string) => void,
): Promise<RowsFolder[]> {
  const keep = new Set<string>();
  const folders: RowsFolder[] = [];
  try {
    for (const x of inputs) {
      const name = `${x.source.dataHash}-${hashOf(canonicalJson(x.source)).slice(0, 8)}`;
      keep.add(name);
      const want = { identity: rowsIdentity(scene, tokenizer.config), layout: bcRowLayout(config), source: x.source };
      const dir = join(root, name);
      const cached = openCache(dir, x.data, want, log);
      if (cached) {
        folders.push(cached);
        continue;
      }
      log?.(`re-simulating ${x.demos.length} demonstrations of ${x.data} into ${dir} ...`);
      await writeDemoRows(dir, scene, x.demos, config, tokenizer, x.source);
      folders.push(RowsFolder.open(dir, want, { verify: false }));
    }
  } catch (err) {
    for (const f of folders) f.close();
    throw err;
  }
  for (const name of prune && existsSync(root) ? readdirSync(root) : [])
    if (!keep.has(name)) rmSync(join(root, name), { recursive: true, force: true });
  return folders;
}

/** The cache at `dir` when it holds what `want` says; null when there is none or it is stale. */
function openCache(dir: string, data: string, want: RowsExpectation, log?: (line: string) => void): RowsFolder | null {
  if (!existsSync(join(dir, ROWS_MANIFEST))) return null;
  try {
    return RowsFolder.open(dir, want);
  } catch (err) {
    if (err instanceof StaleRowsError) {
      log?.(`rebuilding the rows of ${data}: ${err.message}`);
      return null;
    }
    if (err instanceof InputError)
      throw new InputError(`${err.message}\n(the cached rows of ${data}: delete ${dir} to re-simulate them)`);
    throw err;
  }
}
