import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import {
  checkOutputDir,
  checkOutputFile,
  fileLockPath,
  folderLockPath,
  lockFile,
  lockFolder,
  LockedError,
  truncateMetrics,
} from '../../src/store/index.ts';

const root = mkdtempSync(join(tmpdir(), 'wmrl-lock-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const owner = (pid: number, host = hostname()) =>
  JSON.stringify({ pid, host, command: 'wmrl pretrain --out x.onnx', started: '2025-01-01T00:00:00.000Z' });
const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid!;

describe('output locks: one writer per output', () => {
  it('refuses a second writer of the same folder or file, naming the flag, the owner and the lock file', () => {
    const dir = join(root, 'run-a');
    const lock = lockFolder(dir, '--run-dir');
    expect(JSON.parse(readFileSync(folderLockPath(dir), 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    expect(() => lockFolder(dir, '--run-dir')).toThrow(LockedError);
    expect(() => lockFolder(dir, '--run-dir')).toThrow(
      new RegExp(`^--run-dir: ${dir} is being written by another wmrl command \\(pid ${process.pid} on `),
    );
    lock.release();
    expect(existsSync(folderLockPath(dir))).toBe(false);
    lockFolder(dir, '--run-dir').release();
    const file = join(root, 'models', 'm.onnx');
    const fl = lockFile(file, '--out');
    expect(fileLockPath(file)).toBe(join(root, 'models', '.m.onnx.lock'));
    expect(() => lockFile(file, '--out')).toThrow(/^--out: .*m\.onnx is being written/);
    fl.release();
  });

  it('takes over a stale lock whose process is gone; refuses a live, foreign-host or unreadable one', () => {
    const dir = join(root, 'run-b');
    mkdirSync(dir, { recursive: true });
    writeFileSync(folderLockPath(dir), owner(deadPid()));
    const lock = lockFolder(dir, '--run-dir');
    expect(JSON.parse(readFileSync(folderLockPath(dir), 'utf8')).pid).toBe(process.pid);
    lock.release();
    writeFileSync(folderLockPath(dir), owner(process.ppid));
    expect(() => lockFolder(dir, '--run-dir')).toThrow(/wait for it to finish/);
    writeFileSync(folderLockPath(dir), owner(deadPid(), 'another-host'));
    expect(() => lockFolder(dir, '--run-dir')).toThrow(/on another-host/);
    writeFileSync(folderLockPath(dir), '');
    expect(() => lockFolder(dir, '--run-dir')).toThrow(/owner unreadable.*delete the lock file/);
  });

  it('is released when the process exits', () => {
    const dir = join(root, 'run-c');
    const lockTs = resolve(import.meta.dirname, '../../src/store/lock.ts');
    const r = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `const m = await import(${JSON.stringify(lockTs)}); m.lockFolder(${JSON.stringify(dir)}, '--run-dir'); console.log('held'); process.exit(3);`,
      ],
      { encoding: 'utf8' },
    );
    expect(r.stdout.trim(), r.stderr).toBe('held');
    expect(r.status).toBe(3);
    expect(existsSync(folderLockPath(dir))).toBe(false);
  });
});

describe('output paths are checked before any work', () => {
  it('names the flag when a file output is a folder, a folder output is a file, or a parent is a file', () => {
    const file = join(root, 'plain.txt');
    writeFileSync(file, 'x');
    expect(() => checkOutputFile(root, '--out')).toThrow(
      new InputError(`--out: ${root} is a folder, expected a file path`),
    );
    expect(() => checkOutputFile(join(file, 'm.onnx'), '--out')).toThrow(
      `--out: cannot create ${join(file, 'm.onnx')}: ${file} is a file, not a folder`,
    );
    expect(() => checkOutputDir(file, '--run-dir')).toThrow(`--run-dir: ${file} is a file, expected a folder`);
    expect(() => checkOutputDir(join(file, 'run'), '--run-dir')).toThrow(/is a file, not a folder/);
    checkOutputFile(join(root, 'new', 'deeper', 'm.onnx'), '--out');
    checkOutputDir(join(root, 'new', 'run'), '--run-dir');
    expect(existsSync(join(root, 'new'))).toBe(false); // checking creates nothing
  });

  it('truncates a metrics file to a step, refusing a line that is not JSON', () => {
    const path = join(root, 'metrics.jsonl');
    writeFileSync(
      path,
      ['{"kind":"budget","step":0}', '{"step":5}', '{"step":10}', '{"kind":"heldout"}', ''].join('\n'),
    );
    truncateMetrics(path, 5);
    expect(readFileSync(path, 'utf8')).toBe('{"kind":"budget","step":0}\n{"step":5}\n');
    writeFileSync(path, '{"step":1}\n{"step":\n');
    expect(() => truncateMetrics(path, 5)).toThrow(`${path}: line 2 is not JSON`);
  });
});
