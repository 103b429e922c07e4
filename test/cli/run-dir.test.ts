// Default run folders: two commands started in the same second get two folders.
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultRunDir } from '../../src/cli/run-dir.ts';
import { InputError } from '../../src/core/errors.ts';
import { withFolderLock } from '../../src/store/index.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-run-dir-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('default run folders', () => {
  const now = new Date('2026-12-06T12:34:56.789Z');

  it('two started in the same second get two folders, each made for its command', () => {
    const root = join(tmp, 'runs');
    const a = defaultRunDir('eval', { now, root });
    const b = defaultRunDir('eval', { now, root });
    const c = defaultRunDir('eval', { now, root });
    expect([a, b, c]).toEqual([
      join(root, 'eval-20261206-123456'),
      join(root, 'eval-20261206-123456-2'),
      join(root, 'eval-20261206-123456-3'),
    ]);
    for (const d of [a, b, c]) expect(statSync(d).isDirectory()).toBe(true);
    expect(defaultRunDir('rollout', { now, root })).toBe(join(root, 'rollout-20261206-123456'));
  });

  it('both commands write at once: neither refuses the other', async () => {
    const root = join(tmp, 'both');
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const first = withFolderLock(defaultRunDir('eval', { now, root }), '--out', () => held);
    const second = withFolderLock(defaultRunDir('eval', { now, root }), '--out', async () => 'written');
    await expect(second).resolves.toBe('written');
    release();
    await first;
  });

  it('a root that is a file is bad input naming --out', () => {
    const root = join(tmp, 'file');
    writeFileSync(root, '');
    expect(() => defaultRunDir('eval', { now, root })).toThrow(InputError);
    expect(() => defaultRunDir('eval', { now, root })).toThrow(/^--out \(default .*file\): cannot make the folder/);
  });
});
