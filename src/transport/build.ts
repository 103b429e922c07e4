// The identity of the code a job must run on: a hash of every file under src/, the lockfile (package
// versions) and the CPU architecture. A worker on another commit or machine kind would give other
// rollouts without a word; with this it refuses the job instead.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
let cached: string | undefined;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
  );
}

export function buildId(): string {
  if (cached) return cached;
  const h = createHash('sha256').update(`${process.arch}\n`);
  for (const f of [...files(join(ROOT, 'src')), join(ROOT, 'package-lock.json')].sort())
    h.update(`${relative(ROOT, f)}\n`).update(readFileSync(f));
  cached = h.digest('hex').slice(0, 16);
  return cached;
}
