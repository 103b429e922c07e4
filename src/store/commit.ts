// One commit for a multi-part state (a redo journal). Every part is written to a temp file in its
// folder and fsynced; then a journal naming (temp, final, sha256) of every part is renamed into place:
// that rename is the commit point. Then each temp is renamed onto its final path and the journal is
// deleted. recoverFolder() rolls a complete journal forward (idempotent) and deletes stale temp files;
// writers run it before writing and readers before reading. Node-only.
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { pidAlive } from './lock.ts';

/** A part's bytes: text, bytes, or bytes in pieces (written one after another, never joined, so a
 *  part may exceed what one buffer holds). */
export type PartData = string | Uint8Array | readonly Uint8Array[];

export interface Part {
  path: string;
  data: PartData;
}

/** Called before every write boundary (0, 1, ...); a test throws SimulatedCrash at boundary k. */
export type FaultHook = (boundary: number, what: string) => void;

export interface CommitOptions {
  fault?: FaultHook;
}

/** Thrown by a fault hook to stand for a kill: the commit leaves its files exactly as they are. */
export class SimulatedCrash extends Error {
  override name = 'SimulatedCrash';
}

const JournalSchema = z.object({
  format: z.literal('wmrl-commit/1'),
  parts: z
    .array(z.object({ temp: z.string().min(1), final: z.string().min(1), sha256: z.string().regex(/^[0-9a-f]{64}$/) }))
    .min(1),
});

/** Temp files: ".NAME.PID.TAG.tmp". */
const TEMP_RE = /^\..+\.(\d+)\.[0-9a-z]+\.tmp$/;
const JOURNAL_SUFFIX = '.commit';
let tempSeq = 0;

export function sha256Hex(data: PartData): string {
  const hash = createHash('sha256');
  if (typeof data === 'string') return hash.update(data).digest('hex');
  for (const bytes of data instanceof Uint8Array ? [data] : data)
    for (let off = 0; off < bytes.length; off += PIECE) hash.update(bytes.subarray(off, off + PIECE));
  return hash.digest('hex');
}

/** Pieces of at most this many bytes: below Node's 2 GiB limit on one read or write. */
const PIECE = 1 << 30;

/** A file read front to back in pieces of any size, with the sha256 of what was read. */
export class SequentialReader {
  private readonly fd: number;
  private position = 0;
  private readonly hash = createHash('sha256');
  readonly size: number;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'r');
    this.size = fstatSync(this.fd).size;
  }

  /** Fills `into` with the next bytes (an InputError when the file ends first). */
  read(into: Uint8Array): void {
    for (let off = 0; off < into.length; ) {
      const n = readSync(this.fd, into, off, Math.min(PIECE, into.length - off), this.position);
      if (n === 0) throw new InputError(`${this.path}: ends at byte ${this.position}, expected more`);
      this.hash.update(into.subarray(off, off + n));
      off += n;
      this.position += n;
    }
  }

  /** The sha256 of the bytes read so far. */
  sha256(): string {
    return this.hash.digest('hex');
  }

  close(): void {
    closeSync(this.fd);
  }
}

export function sha256File(path: string): string {
  const reader = new SequentialReader(path);
  try {
    const piece = new Uint8Array(Math.min(PIECE, reader.size));
    for (let left = reader.size; left > 0; left -= piece.length)
      reader.read(piece.subarray(0, Math.min(left, piece.length)));
    return reader.sha256();
  } finally {
    reader.close();
  }
}

export function journalPath(firstPart: string): string {
  return join(dirname(firstPart), `.${basename(firstPart)}${JOURNAL_SUFFIX}`);
}

function tempPath(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${(tempSeq++).toString(36)}.tmp`);
}

/** Creates `path` (which must not exist), writes `data` and fsyncs it. */
function writeSynced(path: string, data: PartData): void {
  const fd = openSync(path, 'wx');
  try {
    const pieces = typeof data === 'string' ? [Buffer.from(data, 'utf8')] : data instanceof Uint8Array ? [data] : data;
    for (const bytes of pieces)
      for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, Math.min(PIECE, bytes.length - off));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Makes renames in `dir` durable (a no-op where folders cannot be fsynced). */
function fsyncDir(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    /* not supported on this platform */
  }
}

/** Writes all `parts` (one folder) as one unit: after a crash at any point, recoverFolder() leaves either
 *  every old file or every new one. Synchronous, so no other commit of this process interleaves. */
export function commitFiles(parts: readonly Part[], opts: CommitOptions = {}): void {
  if (parts.length === 0) throw new Error('commitFiles: no parts');
  const dir = dirname(parts[0].path);
  for (const p of parts)
    if (dirname(p.path) !== dir) throw new Error(`commitFiles: ${p.path} is not in ${dir} (one commit, one folder)`);
  if (new Set(parts.map((p) => basename(p.path))).size !== parts.length)
    throw new Error('commitFiles: a part is listed twice');
  mkdirSync(dir, { recursive: true });
  recoverFolder(dir);
  let boundary = 0;
  const at = (what: string) => opts.fault?.(boundary++, what);
  const journal = journalPath(parts[0].path);
  const written: string[] = [];
  let committed = false;
  try {
    const entries = parts.map((p) => {
      at(`write ${basename(p.path)}`);
      const temp = tempPath(p.path);
      written.push(temp);
      writeSynced(temp, p.data);
      return { temp: basename(temp), final: basename(p.path), sha256: sha256Hex(p.data) };
    });
    at('write journal');
    const jtemp = tempPath(journal);
    written.push(jtemp);
    writeSynced(jtemp, `${JSON.stringify({ format: 'wmrl-commit/1', parts: entries }, null, 2)}\n`);
    at('commit');
    renameSync(jtemp, journal);
    committed = true;
    fsyncDir(dir);
    for (const e of entries) {
      at(`rename ${e.final}`);
      renameSync(join(dir, e.temp), join(dir, e.final));
    }
    fsyncDir(dir);
    at('delete journal');
    rmSync(journal);
    fsyncDir(dir);
  } catch (err) {
    // A real failure before the commit point removes its temp files; a simulated kill leaves them.
    if (!committed && !(err instanceof SimulatedCrash)) for (const t of written) rmSync(t, { force: true });
    throw err;
  }
}

/** Rolls every complete journal in `dir` forward, then deletes temp files of this process or of dead
 *  ones (no journal names them any more). A journal that cannot be rolled forward is an InputError. */
export function recoverFolder(dir: string): void {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    if (name.startsWith('.') && name.endsWith(JOURNAL_SUFFIX)) rollForward(dir, name);
  }
  for (const name of readdirSync(dir)) {
    const m = TEMP_RE.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    // Commits are synchronous: a temp of this process is left over from a failed one.
    if (pid === process.pid || !pidAlive(pid)) {
      try {
        rmSync(join(dir, name), { force: true });
      } catch {
        /* read-only folder: leave it */
      }
    }
  }
}

function rollForward(dir: string, name: string): void {
  const path = join(dir, name);
  let journal: z.infer<typeof JournalSchema>;
  try {
    journal = JournalSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
  } catch (err) {
    throw new InputError(
      `${path}: unreadable commit journal (${(err as Error).message.split('\n')[0]}); ` +
        'delete it to keep the files as they are',
    );
  }
  for (const p of journal.parts) {
    const temp = join(dir, p.temp);
    const final = join(dir, p.final);
    if (existsSync(temp)) {
      if (sha256File(temp) !== p.sha256)
        throw new InputError(`${temp}: does not match the sha256 in commit journal ${path}`);
      renameSync(temp, final);
    } else if (!existsSync(final) || sha256File(final) !== p.sha256) {
      throw new InputError(`${path}: part ${final} differs from the journal and its temp file ${p.temp} is gone`);
    }
  }
  fsyncDir(dir);
  rmSync(path, { force: true });
  fsyncDir(dir);
}
