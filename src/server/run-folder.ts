// The run folders a server may read: ids are paths below one root, resolved so that nothing outside the
// root is reachable (no "..", no absolute paths, no symlink that leads out). Node-only.
import { existsSync, readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { type MetricsRow, MetricsRowSchema, type RunSummary, isRunId } from '../protocol/index.ts';

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

/** metrics.jsonl rows that parse; a torn last line (a run being written) is skipped. */
export function readMetrics(dir: string): MetricsRow[] {
  const path = join(dir, METRICS_FILE);
  if (!existsSync(path)) return [];
  const rows: MetricsRow[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      const row = MetricsRowSchema.safeParse(JSON.parse(line));
      if (row.success) rows.push(row.data);
    } catch {
      // a line still being appended
    }
  }
  return rows;
}
