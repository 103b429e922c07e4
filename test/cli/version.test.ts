// `wmrl version`: the code version a docs figure names (the one runs, stamps and caches record).
import { describe, expect, it } from 'vitest';
import { codeVersion, formatCodeVersion } from '../../src/store/index.ts';
import { runCli, runJson } from './helpers.ts';

describe('wmrl version', () => {
  it("prints this code's source hash, commit and clean flag (one JSON object with --json)", async () => {
    expect(await runJson(['version', '--json'])).toEqual(codeVersion());
    const text = await runCli(['version']);
    expect(text).toBe(`${formatCodeVersion(codeVersion())}\nsource ${codeVersion().source}\n`);
  });
});
