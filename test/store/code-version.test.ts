// The code version: a source hash that follows src/**/*.ts and package-lock.json only, and the git
// commit and clean flag where git answers (null without it, never an error).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { codeVersion, formatCodeVersion, readCodeVersion, sameCode, sourceHash } from '../../src/store/index.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-code-version-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let made = 0;
/** A small tree: src/a.ts, src/deep/b.ts, a README and a lock file. */
function tree(): string {
  const root = join(tmp, `t${made++}`);
  mkdirSync(join(root, 'src/deep'), { recursive: true });
  writeFileSync(join(root, 'src/a.ts'), 'export const a = 1;\n');
  writeFileSync(join(root, 'src/deep/b.ts'), 'export const b = 2;\n');
  writeFileSync(join(root, 'README.md'), '# a tree\n');
  writeFileSync(join(root, 'package-lock.json'), '{}\n');
  return root;
}
const hasGit = (() => {
  try {
    execFileSync('git', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe('the code version', () => {
  it('the source hash follows the .ts files under src and the lock file, nothing else', () => {
    const root = tree();
    const before = sourceHash(root);
    expect(sourceHash(tree())).toBe(before); // same contents, another place
    writeFileSync(join(root, 'README.md'), '# changed\n');
    writeFileSync(join(root, 'src/notes.txt'), 'not code\n');
    expect(sourceHash(root)).toBe(before);
    writeFileSync(join(root, 'src/deep/b.ts'), 'export const b = 3;\n');
    const edited = sourceHash(root);
    expect(edited).not.toBe(before);
    writeFileSync(join(root, 'package-lock.json'), '{ "lockfileVersion": 3 }\n');
    expect(sourceHash(root)).not.toBe(edited);
  });

  it('without git: commit and clean are null, never an error', () => {
    const v = readCodeVersion(tree());
    expect(v).toEqual({ source: expect.stringMatching(/^[0-9a-f]{64}$/), commit: null, clean: null });
    expect(formatCodeVersion(v)).toBe(`source ${v.source.slice(0, 12)} (no git)`);
  });

  it.skipIf(!hasGit)('with git: the commit, and whether tracked files differ from it', () => {
    const root = tree();
    const run = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
    run('init', '-q');
    run('add', '.');
    run('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'one');
    const clean = readCodeVersion(root);
    expect(clean.commit).toBe(run('rev-parse', 'HEAD'));
    expect(clean.clean).toBe(true);
    writeFileSync(join(root, 'src/a.ts'), 'export const a = 9;\n');
    const dirty = readCodeVersion(root);
    expect(dirty).toMatchObject({ commit: clean.commit, clean: false });
    expect(sameCode(dirty, clean)).toBe(false);
    expect(formatCodeVersion(dirty)).toMatch(/\(commit [0-9a-f]{12}, with uncommitted changes\)$/);
  });

  it("this process's version is computed once and compares by source", () => {
    expect(codeVersion()).toBe(codeVersion());
    const v = codeVersion();
    expect(sameCode({ ...v, commit: 'another' }, v)).toBe(true);
    expect(sameCode({ ...v, source: 'other' }, v)).toBe(false);
    expect(sameCode(null, v)).toBe(false);
    expect(formatCodeVersion(null)).toMatch(/unknown code/);
  });
});
