import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readInputJson } from '../../src/core/input-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'wmrl-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const Schema = z.object({ name: z.string(), runs: z.array(z.object({ steps: z.number().int() })) });

describe('JSON files', () => {
  it('reads and validates a JSON file', () => {
    const path = join(dir, 'ok.json');
    writeFileSync(path, JSON.stringify({ name: 'a', runs: [{ steps: 3 }] }));
    expect(readInputJson(path, Schema, 'run list')).toEqual({ name: 'a', runs: [{ steps: 3 }] });
  });

  it('names the file and what it should hold when it is missing or not JSON', () => {
    const missing = join(dir, 'missing.json');
    expect(() => readInputJson(missing, Schema, 'run list')).toThrow(
      `${missing}: cannot read run list: no such file or directory`,
    );
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{"name": ');
    expect(() => readInputJson(broken, Schema, 'run list')).toThrow(
      new RegExp(`^${broken}: run list is not valid JSON: `),
    );
  });

  it('names the file and every bad field on a schema failure', () => {
    const path = join(dir, 'bad.json');
    writeFileSync(path, JSON.stringify({ name: 7, runs: [{ steps: 1 }, { steps: 1.5 }] }));
    const message = (() => {
      try {
        readInputJson(path, Schema, 'run list');
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    })();
    expect(message.split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^${path}: \\$\\.name: `)),
      expect.stringMatching(new RegExp(`^${path}: \\$\\.runs\\[1\\]\\.steps: `)),
    ]);
  });
});
