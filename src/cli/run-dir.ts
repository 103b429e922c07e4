// Default run folders (runs/<kind>-<time>): made for one command, so two started in the same second get
// two folders (the second gets -2, then -3, ...) instead of one refusing the other's lock.
import { mkdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../core/errors.ts';

/** Makes and returns a new folder `<root>/<kind>-<yyyymmdd-hhmmss>` (UTC), with `-2`, `-3`, ... when
 *  that name is taken: created non-recursively, so two commands never get the same one. A folder this
 *  left empty (the command failed before writing) is removed when the process exits. */
export function defaultRunDir(kind: string, o: { now?: Date; root?: string } = {}): string {
  const root = o.root ?? 'runs';
  const time = (o.now ?? new Date()).toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const cannot = (dir: string, err: unknown) =>
    new InputError(`--out (default ${dir}): cannot make the folder: ${(err as Error).message}`);
  try {
    mkdirSync(root, { recursive: true });
  } catch (err) {
    throw cannot(root, err);
  }
  for (let k = 1; ; k++) {
    const dir = join(root, k === 1 ? `${kind}-${time}` : `${kind}-${time}-${k}`);
    try {
      mkdirSync(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw cannot(dir, err);
    }
    process.once('exit', () => removeIfEmpty(dir));
    return dir;
  }
}

function removeIfEmpty(dir: string): void {
  try {
    rmdirSync(dir); // only an empty folder
  } catch {
    // written to, or gone: keep it as it is
  }
}
