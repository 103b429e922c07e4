import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lockFolder } from '../../src/store/index.ts';
import { wmrlProcess } from './helpers.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-locks-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('one writer per output folder', () => {
  const commands: [string, (out: string) => string[]][] = [
    ['collect', (out) => ['collect', '--task', 'push', '--episodes', '1', '--out', out]],
    ['rollout', (out) => ['rollout', '--task', 'push', '--episodes', '1', '--out', out]],
    ['eval', (out) => ['eval', '--policy', 'expert', '--task', 'push', '--episodes', '1', '--out', out]],
    ['shadow', (out) => ['shadow', '--model', 'physics', '--task', 'push', '--episodes', '1', '--out', out]],
  ];
  for (const [name, args] of commands) {
    it(`${name}: a second writer of the same --out is refused (exit 2, naming the owner) and writes nothing`, async () => {
      const out = join(tmp, name);
      const lock = lockFolder(out, '--out'); // held by this (live) process
      try {
        const r = await wmrlProcess(tmp, ...args(out));
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toMatch(new RegExp(`--out: ${out}.*(locked|being written).*pid ${process.pid}`, 's'));
        expect(
          existsSync(join(out, 'index.json')) ||
            existsSync(join(out, 'report.json')) ||
            existsSync(join(out, 'shadow.json')),
        ).toBe(false);
      } finally {
        lock.release();
      }
    });
  }

  it('a command that fails after taking the lock leaves no empty output folder behind', async () => {
    const out = join(tmp, 'never-made');
    const r = await wmrlProcess(
      tmp,
      'eval',
      '--policy',
      'no-such-policy.onnx',
      '--task',
      'push',
      '--episodes',
      '1',
      '--out',
      out,
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--policy: model file "no-such-policy\.onnx" does not exist/);
    expect(existsSync(out)).toBe(false);
  });
});
