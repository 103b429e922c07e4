// The version of the code a run, stamp or cache was made by: a sha256 over the sorted paths and contents
// of src/**/*.ts and package-lock.json (what decides results), plus the git commit and whether the tree
// was clean where git answers. Computed once per process. Two versions are the same code when their
// source hashes are equal (the commit only names it). Node-only.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { z } from 'zod';

export const CodeVersionSchema = z.object({
  /** sha256 (hex) of the source: src/**\/*.ts and package-lock.json, sorted by path. */
  source: z.string().min(1),
  /** `git rev-parse HEAD`, null without git. */
  commit: z.string().nullable(),
  /** No tracked file differs from the commit (`git status --porcelain --untracked-files=no`); null without git. */
  clean: z.boolean().nullable(),
});
export type CodeVersion = z.infer<typeof CodeVersionSchema>;

const REPO = resolve(import.meta.dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.isFile() && e.name.endsWith('.ts') ? [path] : [];
  });
}

/** The source hash of the tree at `root` (its src/**\/*.ts and package-lock.json). */
export function sourceHash(root = REPO): string {
  const files = [...sourceFiles(join(root, 'src')), join(root, 'package-lock.json')];
  const hash = createHash('sha256');
  for (const path of files.map((f) => relative(root, f)).sort()) {
    let data: Buffer;
    try {
      data = readFileSync(join(root, path));
    } catch {
      continue; // no package-lock.json: the source alone
    }
    hash.update(`${path}\u0000${data.length}\u0000`).update(data);
  }
  return hash.digest('hex');
}

function git(root: string, args: string[]): string | null {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
}

/** The code version of the tree at `root`; without git (or outside a repository) commit and clean are null. */
export function readCodeVersion(root = REPO): CodeVersion {
  const commit = git(root, ['rev-parse', 'HEAD'])?.trim() || null;
  const status = commit === null ? null : git(root, ['status', '--porcelain', '--untracked-files=no']);
  return { source: sourceHash(root), commit, clean: status === null ? null : status.trim() === '' };
}

let current: CodeVersion | undefined;
/** This process's code version (computed on first use). */
export function codeVersion(): CodeVersion {
  current ??= readCodeVersion();
  return current;
}

/** Same code: equal source hashes (a missing version is never the same). */
export const sameCode = (a: CodeVersion | null | undefined, b: CodeVersion): boolean => a?.source === b.source;

/** "source 1a2b3c4d5e6f (commit 26f5244, clean)"; a missing version: "unknown code (made before code
 *  versions were recorded)". */
export function formatCodeVersion(v: CodeVersion | null | undefined): string {
  if (!v) return 'unknown code (made before code versions were recorded)';
  const where = v.commit
    ? `commit ${v.commit.slice(0, 12)}, ${v.clean ? 'clean' : 'with uncommitted changes'}`
    : 'no git';
  return `source ${v.source.slice(0, 12)} (${where})`;
}

/** The message of a code mismatch: what `what` was made by, what runs now, and what the caller does. */
export const codeMismatch = (what: string, made: CodeVersion | null | undefined, action: string): string =>
  `${what} was made by ${formatCodeVersion(made)}; this is ${formatCodeVersion(codeVersion())}: ${action}`;
