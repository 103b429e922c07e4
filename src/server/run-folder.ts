// The run folders a server may read: ids are paths below one root, resolved so that nothing outside the
// root is reachable (no "..", no absolute paths, no symlink that leads out). Node-only.
import { existsSync, readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import {
  type MetricsChunk,
  type MetricsCursor,
  type MetricsRow,
  MetricsRowSchema,
  type RunSummary,
  isRunId,
} from '../protocol/index.ts';

export const METRICS_FILE = 'metrics.jsonl';
export const EPISODE_INDEX = 'index.json';
/** How deep below the root runs are looked for (runs/speedup/wmrl-seed1 is depth 2). */
const MAX_DEPTH = 3;
const MAX_LISTED = 500;

export class PathRefused extends Error {}

/** The real path of run `id` under `root`, or PathRefused. */
export function resolveRun(root: string, id: string): string {
  if (!isRunId(id)) throw new PathRefused(`run "${id}": not a path inside the run folder`);
  const base = realpathSync(root);
  const path = resolve(base, id);
  if (!existsSync(path)) throw new PathRefused(`run "${id}": no such run`);
  const real = realpathSync(path);
  if (real !== base && !real.startsWith(base + sep)) throw new PathRefused(`run "${id}": leads outside the run folder`);
  return real;
}

function isRun(dir: string): { episodes: number; metrics: boolean } | null {
  const metrics = existsSync(join(dir, METRICS_FILE));
  let episodes = 0;
  if (existsSync(join(dir, EPISODE_INDEX))) {
    try {
      const index = JSON.parse(readFileSync(join(dir, EPISODE_INDEX), 'utf8')) as { episodes?: unknown[] };
      episodes = Array.isArray(index.episodes) ? index.episodes.length : 0;
    } catch {
      episodes = 0;
    }
  }
  return metrics || episodes > 0 ? { episodes, metrics } : null;
}

/** Every run below `root` (the root itself when it is one), sorted by id; symlinks are not followed. */
export function listRuns(root: string, live?: string): RunSummary[] {
  const base = realpathSync(root);
  const runs: RunSummary[] = [];
  const visit = (dir: string, depth: number) => {
    if (runs.length >= MAX_LISTED) return;
    const found = isRun(dir);
    const id = relative(base, dir).split(sep).join('/') || '.';
    if (found) runs.push({ id, ...found, live: id === live });
    if (depth >= MAX_DEPTH) return;
    for (const name of readdirSync(dir).sort()) {
      const child = join(dir, name);
      if (!name.startsWith('.') && statSync(child, { throwIfNoEntry: false })?.isDirectory() && !isSymlink(child))
        visit(child, depth + 1);
    }
  };
  visit(base, 0);
  return runs;
}

function isSymlink(path: string): boolean {
  return realpathSync(path) !== resolve(path);
}

/** Bytes read per metrics answer at most (more than one line's worth). */
const METRICS_CHUNK = 4 << 20;

/** metrics.jsonl's complete lines after `after` that parse (rows a reader does not know are skipped; a
 *  line still being appended waits for the next request), read without blocking and at most
 *  METRICS_CHUNK bytes at a time. The file is known by its inode: a rewritten or shorter file restarts. */
export async function readMetricsAfter(dir: string, after?: MetricsCursor): Promise<MetricsChunk> {
  const path = join(dir, METRICS_FILE);
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch {
    return { rows: [], next: { file: '', offset: 0 }, restart: true, more: false };
  }
  try {
    const { ino, size } = await handle.stat();
    const file = String(ino);
    const restart = !after || after.file !== file || after.offset > size;
    const start = restart ? 0 : after.offset;
    let bytes = Buffer.alloc(0);
    let end = -1; // the last newline read
    for (let want = METRICS_CHUNK; end < 0 && start + bytes.length < size; want *= 2) {
      const next = Buffer.alloc(Math.min(want, size - start));
      const { bytesRead } = await handle.read(next, 0, next.length, start);
      bytes = next.subarray(0, bytesRead);
      end = bytes.lastIndexOf(0x0a);
      if (bytesRead < next.length) break;
    }
    const rows: MetricsRow[] = [];
    for (const line of bytes
      .subarray(0, end + 1)
      .toString('utf8')
      .split('\n')) {
      if (!line.trim()) continue;
      try {
        const row = MetricsRowSchema.safeParse(JSON.parse(line));
        if (row.success) rows.push(row.data);
      } catch {
        // not JSON: skipped
      }
    }
    return { rows, next: { file, offset: start + end + 1 }, restart, more: start + bytes.length < size };
  } finally {
    await handle.close();
  }
}
