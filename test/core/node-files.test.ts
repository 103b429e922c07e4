import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readJsonFile, writeJsonAtomic } from '../../src/core/node-files.ts';

const dir = mkdtempSync(join(tmpdir(), 'wmrl-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const Schema = z.object({ name: z.string(), runs: z.array(z.object({ steps: z.number().int() })) });

describe('JSON files', () => {
  it('round-trips through an atomic write, leaving no temp files', () => {
    const path = join(dir, 'sub', 'ok.json');
    writeJsonAtomic(path, { name: 'a', runs: [{ steps: 3 }] });
    expect(readJsonFile(path, Schema, 'run list')).toEqual({ name: 'a', runs: [{ steps: 3 }] });
    expect(readdirSync(join(dir, 'sub'))).toEqual(['ok.json']);
  });

  it('names the file and what it should hold when it is missing or not JSON', () => {
    const missing = join(dir, 'missing.json');
    expect(() => readJsonFile(missing, Schema, 'run list')).toThrow(`${missing}: cannot read run list: ENOENT`);
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{"name": ');
    expect(() => readJsonFile(broken, Schema, 'run list')).toThrow(new RegExp(`^${broken}: cannot read run list: .*JSON`));
  });

  it('names the file and every bad field on a schema failure', () => {
    const path = join(dir, 'bad.json');
    writeFileSync(path, JSON.stringify({ name: 7, runs: [{ steps: 1 }, { steps: 1.5 }] }));
    const message = (() => { try { readJsonFile(path, Schema, 'run list'); } catch (e) { return (e as Error).message; } return ''; })();
    expect(message.split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^${path}: \\$\\.name: `)),
      expect.stringMatching(new RegExp(`^${path}: \\$\\.runs\\[1\\]\\.steps: `)),
    ]);
  });
});
