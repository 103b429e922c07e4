import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJson } from './helpers.ts';

// Every random draw of episode k derives from (seed, episode, step), never from the batch layout: the
// same command at --num-envs 1, 3 and 8 writes byte-identical files (docs/run-state.md#determinism).
const TINY = join(import.meta.dirname, '../../models/tiny-policy.onnx');
let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'wmrl-determinism-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Every file a command wrote into `out` (provenance files, which record the command line, aside). */
function files(out: string): Record<string, string> {
  const names = readdirSync(out)
    .filter((f) => f !== 'run.json')
    .sort();
  return Object.fromEntries(names.map((f) => [f, readFileSync(join(out, f)).toString('base64')]));
}

async function atEveryLayout(name: string, args: string[]): Promise<Record<string, string>[]> {
  const got = [];
  for (const n of [1, 3, 8]) {
    const out = join(dir, `${name}-${n}`);
    await runJson([...args, '--num-envs', String(n), '--out', out, '--json']);
    got.push(files(out));
  }
  return got;
}

describe('results do not depend on --num-envs', () => {
  it('eval of a sampled model policy: byte-identical report.json, chart and page', async () => {
    const [a, b, c] = await atEveryLayout('eval', [
      'eval',
      '--policy',
      TINY,
      '--task',
      'pick-place',
      '--episodes',
      '5',
      '--temperature',
      '1',
    ]);
    expect(Object.keys(a)).toEqual(['index.html', 'report.json', 'success.png']);
    expect(b).toEqual(a);
    expect(c).toEqual(a);
  });

  it('collect with token noise: byte-identical demonstration folders', async () => {
    const [a, b, c] = await atEveryLayout('collect', [
      'collect',
      '--task',
      'push',
      '--episodes',
      '5',
      '--noise',
      '0.2',
      '--seed',
      '3',
    ]);
    expect(Object.keys(a)).toEqual(expect.arrayContaining(['episodes.bin', 'index.json', 'labels.bin', 'demos.json']));
    expect(b).toEqual(a);
    expect(c).toEqual(a);
  });

  it('rollout of the noisy expert: byte-identical episode folders', async () => {
    const [a, b, c] = await atEveryLayout('rollout', [
      'rollout',
      '--policy',
      'expert',
      '--noise',
      '0.2',
      '--task',
      'stack',
      '--episodes',
      '5',
    ]);
    expect(Object.keys(a)).toEqual(expect.arrayContaining(['episodes.bin', 'index.json']));
    expect(b).toEqual(a);
    expect(c).toEqual(a);
  });
});
