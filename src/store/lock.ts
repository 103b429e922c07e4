// One writer per output: a lock file created exclusively (written in full to a temp file, then
// hard-linked into place, which fails if a lock exists) naming its owner: pid, host, command line.
// A lock whose owner process is gone (same host) is stale and is taken over. Locks are released by
// release() and, as a last resort, when the process exits. Node-only.
import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { checkOutputDir } from './paths.ts';

export const LockOwnerSchema = z.object({
  pid: z.number().int().positive(),
  host: z.string(),
  command: z.string(),
  started: z.string(),
});
export type LockOwner = z.infer<typeof LockOwnerSchema>;

/** Another command writes the same output (exit code 2 in the CLI). */
export class LockedError extends InputError {
  override name = 'LockedError';
}

export interface Lock {
  readonly path: string;
  release(): void;
}

const held = new Map<string, LockOwner>();
let exitHook = false;

/** The lock file of an output folder. */
export function folderLockPath(dir: string): string {
  return join(dir, '.wmrl.lock');
}

/** The lock file of an output file (next to it). */
export function fileLockPath(path: string): string {
  return join(dirname(path), `.${basename(path)}.lock`);
}

/** Locks the folder `dir` (created if missing) for this process; `flag` names it in errors. */
export function lockFolder(dir: string, flag: string): Lock {
  mkdirSync(dir, { recursive: true });
  return acquire(folderLockPath(dir), dir, flag);
}

/** Locks the output file `path` (its folder is created if missing). */
export function lockFile(path: string, flag: string): Lock {
  mkdirSync(dirname(path), { recursive: true });
  return acquire(fileLockPath(path), path, flag);
}

/** Checks that `dir` can be an output folder, then runs `fn` holding its lock (before any work starts,
 *  so a bad --out or a second writer fails fast). */
export async function withFolderLock<T>(dir: string, flag: string, fn: () => Promise<T>): Promise<T> {
  checkOutputDir(dir, flag);
  const existed = existsSync(dir);
  const lock = lockFolder(dir, flag);
  try {
    return await fn();
  } catch (err) {
    lock.release();
    // a command that failed (e.g. on a bad flag found late) leaves no empty folder it made itself
    if (!existed && readdirSync(dir).length === 0) rmdirSync(dir);
    throw err;
  } finally {
    lock.release();
  }
}

/** Whether process `pid` (on this host) is running. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOwner(path: string): LockOwner | null {
  try {
    return LockOwnerSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
  } catch {
    return null;
  }
}

/** Creates the lock file holding `owner`; false when one exists. */
function create(path: string, owner: LockOwner): boolean {
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(owner)}\n`);
  try {
    linkSync(tmp, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
}

function busy(flag: string, target: string, path: string, owner: LockOwner | null, why: string): LockedError {
  const who = owner
    ? `pid ${owner.pid} on ${owner.host}, since ${owner.started}: ${owner.command}`
    : 'owner unreadable';
  return new LockedError(
    `${flag}: ${target} is being written by another wmrl command (${who}); ${why} (lock file ${path})`,
  );
}

function acquire(path: string, target: string, flag: string): Lock {
  const me: LockOwner = {
    pid: process.pid,
    host: hostname(),
    command: process.argv.slice(1).join(' '),
    started: new Date().toISOString(),
  };
  if (!create(path, me)) {
    const owner = readOwner(path);
    const stale = owner !== null && owner.host === me.host && !pidAlive(owner.pid);
    if (!stale)
      throw busy(
        flag,
        target,
        path,
        owner,
        owner ? 'wait for it to finish' : 'delete the lock file if no command is running',
      );
    // Take the stale lock over: move it aside, check it is the one we judged stale, then create ours.
    const aside = `${path}.${process.pid}.stale`;
    try {
      renameSync(path, aside);
    } catch {
      /* another taker moved it first */
    }
    const moved = existsSync(aside) ? readOwner(aside) : null;
    rmSync(aside, { force: true });
    if (moved && moved.pid !== owner.pid) throw busy(flag, target, path, moved, 'it started just now');
    if (!create(path, me)) throw busy(flag, target, path, readOwner(path), 'it took over the stale lock first');
  }
  held.set(path, me);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const p of [...held.keys()]) releasePath(p);
    });
  }
  return { path, release: () => releasePath(path) };
}

/** Removes the lock file if it is still ours. */
function releasePath(path: string): void {
  const mine = held.get(path);
  if (!mine) return;
  held.delete(path);
  const owner = readOwner(path);
  if (owner && owner.pid === mine.pid && owner.started === mine.started) rmSync(path, { force: true });
}
