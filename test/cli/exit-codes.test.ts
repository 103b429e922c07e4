import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import { failure } from '../../src/cli/main.ts';
import { UsageError } from '../../src/cli/options.ts';
import { SceneError } from '../../src/scene/index.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-exit-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const thrown = (f: () => unknown): unknown => {
  try {
    f();
  } catch (err) {
    return err;
  }
  throw new Error('did not throw');
};

describe('exit codes: 2 for bad input, 1 for internal failures', () => {
  it('InputError, UsageError and SceneError are bad input', () => {
    expect(failure(new InputError('x.json: $.a: bad'))).toEqual({ message: 'x.json: $.a: bad', code: 2 });
    expect(failure(new UsageError('--episodes: must be >= 1')).code).toBe(2);
    expect(failure(new SceneError('s.json', [{ path: '$.robot', message: 'missing' }]))).toEqual({
      message: 's.json: $.robot: missing',
      code: 2,
    });
  });

  it('a path that is missing or of the wrong kind is bad input, named without a stack', () => {
    writeFileSync(join(tmp, 'file'), '');
    expect(failure(thrown(() => readFileSync(join(tmp, 'missing'))))).toEqual({
      message: `${join(tmp, 'missing')}: no such file or directory`,
      code: 2,
    });
    expect(failure(thrown(() => mkdirSync(join(tmp, 'file'), { recursive: true })))).toEqual({
      message: `${join(tmp, 'file')}: is a file, not a folder`,
      code: 2,
    });
  });

  it('anything else is an internal failure', () => {
    expect(failure(new TypeError("Cannot read properties of undefined (reading 'dx')"))).toMatchObject({ code: 1 });
    expect(failure(new RangeError('bad index')).code).toBe(1);
    expect(failure('a string')).toEqual({ message: 'a string', code: 1 });
  });
});
