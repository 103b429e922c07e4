// Node-only readers of files the user names (flags, run folders): every failure is an InputError
// whose message names the file. Not exported from core/index.ts (which stays browser-safe).
import { readFileSync, statSync } from 'node:fs';
import type { z } from 'zod';
import { InputError } from './errors.ts';
import { formatZodError } from './spec.ts';

/** A file-system error as a short reason: "no such file or directory", "is a directory", ... */
export function fsReason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  switch (e.code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'ENOTDIR':
      return 'a part of the path is a file, not a folder';
    case 'EISDIR':
      return 'is a folder, not a file';
    case 'EEXIST':
      return e.syscall === 'mkdir' ? 'is a file, not a folder' : 'already exists';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    default:
      return e.message;
  }
}

/** Node's file-system errors that mean a path the user gave is wrong (missing, wrong kind, not allowed). */
export function isPathError(err: unknown): err is NodeJS.ErrnoException & { path: string } {
  const e = err as NodeJS.ErrnoException;
  return (
    typeof e?.path === 'string' && ['ENOENT', 'ENOTDIR', 'EISDIR', 'EEXIST', 'EACCES', 'EPERM'].includes(e.code ?? '')
  );
}

/** Throws unless `dir` is an existing folder; `what` says what it should hold. */
export function checkFolder(dir: string, what: string): void {
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (err) {
    throw new InputError(`${dir}: cannot read ${what}: ${fsReason(err)}`);
  }
  if (!isDir) throw new InputError(`${dir}: is a file, not ${what}`);
}

/** The bytes of a file the user named; `hint` is added when it does not exist. */
export function readInputFile(path: string, what: string, hint = ''): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT' && hint ? ` (${hint})` : '';
    throw new InputError(`${path}: cannot read ${what}: ${fsReason(err)}${missing}`);
  }
}

/** JSON text read from `path` (e.g. bytes already checked against a hash), parsed, not yet validated. */
export function parseInputJsonText(path: string, text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InputError(`${path}: ${what} is not valid JSON: ${(err as Error).message}`);
  }
}

/** The parsed JSON of a file the user named (not yet validated). */
export function readInputJsonRaw(path: string, what: string, hint = ''): unknown {
  return parseInputJsonText(path, readInputFile(path, what, hint).toString('utf8'), what);
}

/** Validate parsed JSON: a failure names the file and every bad field ("file: $.a[3].b: ..."). */
export function parseInput<T extends z.ZodType>(raw: unknown, schema: T, path: string): z.infer<T> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new InputError(formatZodError(parsed.error, `${path}: `));
  return parsed.data;
}

export function readInputJson<T extends z.ZodType>(path: string, schema: T, what: string, hint = ''): z.infer<T> {
  return parseInput(readInputJsonRaw(path, what, hint), schema, path);
}

/** A binary file of little-endian 4-byte words; its length must be a whole number of words. */
export function readWords(path: string, what: string): DataView {
  const buf = readInputFile(path, what);
  if (buf.byteLength % 4 !== 0)
    throw new InputError(
      `${path}: ${buf.byteLength} bytes is not a whole number of 4-byte values (truncated or not ${what}?)`,
    );
  return new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
}
