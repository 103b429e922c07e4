// Node-only file helpers (not exported from core/index.ts, which stays browser-safe).
import { mkdirSync, readFileSync, renameSync, writeFileSync, rmSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';
import type { z } from 'zod';
import { InputError } from './errors.ts';
import { formatZodError } from './spec.ts';

/** Write a file atomically: a temp file in the same folder, then rename over the target. A crash
 *  midway leaves either the old file or the new one, never a torn one. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  try {
    writeFileSync(tmp, data);
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** Append one JSON line (metrics files). */
export function jsonLine(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

/** Read a JSON file and validate it: a missing or malformed file is an InputError naming the file and
 *  `what` it should hold; a schema failure names the file and every bad field ("file: $.a.b: ..."). */
export function readJsonFile<T extends z.ZodType>(path: string, schema: T, what: string): z.infer<T> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new InputError(`${path}: cannot read ${what}: ${(err as Error).message}`);
  }
  return parseJsonText(path, text, schema, what);
}

/** readJsonFile for text already read (e.g. bytes checked against a hash); `path` names it in errors. */
export function parseJsonText<T extends z.ZodType>(path: string, text: string, schema: T, what: string): z.infer<T> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new InputError(`${path}: cannot read ${what}: ${(err as Error).message}`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new InputError(formatZodError(parsed.error, `${path}: `));
  return parsed.data;
}
