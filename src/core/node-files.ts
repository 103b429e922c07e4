// Node-only file helpers (not exported from core/index.ts, which stays browser-safe).
import { mkdirSync, renameSync, writeFileSync, rmSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';

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
