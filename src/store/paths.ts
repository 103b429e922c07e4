// Output-path checks run before any work starts. Node-only.
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { InputError } from '../core/errors.ts';

/** The nearest existing ancestor of `path` must be a writable folder (so the rest can be created). */
function checkCreatable(path: string, flag: string): void {
  let dir = dirname(resolve(path));
  while (!existsSync(dir)) dir = dirname(dir);
  if (!statSync(dir).isDirectory())
    throw new InputError(`${flag}: cannot create ${path}: ${dir} is a file, not a folder`);
  try {
    accessSync(dir, constants.W_OK);
  } catch {
    throw new InputError(`${flag}: cannot create ${path}: ${dir} is not writable`);
  }
}

/** `path` can be written as a file: it is not an existing folder and its folder can be created. */
export function checkOutputFile(path: string, flag: string): void {
  if (existsSync(path) && statSync(path).isDirectory())
    throw new InputError(`${flag}: ${path} is a folder, expected a file path`);
  checkCreatable(path, flag);
}

/** `path` can be used as an output folder: it is not an existing file and can be created. */
export function checkOutputDir(path: string, flag: string): void {
  if (existsSync(path)) {
    if (!statSync(path).isDirectory()) throw new InputError(`${flag}: ${path} is a file, expected a folder`);
    return;
  }
  checkCreatable(path, flag);
}
