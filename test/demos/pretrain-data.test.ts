// `wmrl pretrain --data` as a user runs it (child processes): several demonstration folders (repeated
// flag or a comma list) train on the union of their rows; each folder's rows are cached in the run
// folder and reused; a cache made for other data is rebuilt, a damaged one refused with exit 2.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoRows, readDemoFolder } from '../../src/demos/index.ts';
import { wmrlProcess } from '../cli/helpers.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-pretrain-data-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const TRAIN = ['--steps', '20', '--batch', '8', '--size', 'tiny', '--log-every', '10', '--json'];
const pretrain = (...args: string[]) => wmrlProcess(tmp, 'pretrain', ...args, ...TRAIN);
const caches = (run: string) => readdirSync(join(tmp, run, 'rows')).map((name) => join(tmp, run, 'rows', name));
const shardOf = (cache: string) => join(cache, readdirSync(cache).find((f) => f.startsWith('shard-'))!);

beforeAll(async () => {
  for (const [out, task] of [
    ['d1', 'pick-place'],
    ['d2', 'push'],
  ]) {
    const c = await wmrlProcess(tmp, 'collect', '--task', task, '--episodes', '2', '--out', out);
    expect(c.code, c.stderr).toBe(0);
  }
}, 60_000);

describe('pretrain --data', () => {
  it('trains on the union of several folders, caches their rows in the run folder and reuses them', {
    timeout: 120_000,
  }, async () => {
    const rows = ['d1', 'd2'].map((d) => demoRows(readDemoFolder(join(tmp, d)).demos, true));
    const a = await pretrain('--data', 'd1', '--data', 'd2', '--out', 'a/bc.onnx', '--run-dir', 'run');
    expect(a.code, a.stderr).toBe(0);
    expect(JSON.parse(a.stdout)).toMatchObject({ demos: 4, samples: rows[0] + rows[1] });
    expect(a.stderr.match(/re-simulating 2 demonstrations of d\d into /g)).toHaveLength(2);
    expect(caches('run')).toHaveLength(2);

    const b = await pretrain('--data', 'd1,d2', '--out', 'b/bc.onnx', '--run-dir', 'run');
    expect(b.code, b.stderr).toBe(0);
    expect(b.stderr).not.toMatch(/re-simulating/);
    expect(readFileSync(join(tmp, 'b/bc.onnx')).equals(readFileSync(join(tmp, 'a/bc.onnx')))).toBe(true);

    const one = await pretrain('--data', 'd1', '--out', 'b/bc.onnx', '--run-dir', 'run', '--resume');
    expect(one.code).toBe(2);
    expect(one.stderr).toMatch(
      /--resume: the checkpoint in run belongs to a run with different options or data: dataHash/,
    );

    // The same run folder on d1 alone: d2's cache is deleted, d1's reused.
    const c = await pretrain('--data', 'd1', '--out', 'c/bc.onnx', '--run-dir', 'run');
    expect(c.code, c.stderr).toBe(0);
    expect(JSON.parse(c.stdout).samples).toBe(rows[0]);
    expect(c.stderr).not.toMatch(/re-simulating/);
    expect(caches('run')).toHaveLength(1);
  });

  it('rebuilds a cache made for other data, and refuses a damaged one naming the shard (exit 2)', {
    timeout: 120_000,
  }, async () => {
    const first = await pretrain('--data', 'd2', '--out', 'e/bc.onnx', '--run-dir', 'run2');
    expect(first.code, first.stderr).toBe(0);
    const [other] = caches('run2');
    const [mine] = caches('run');
    rmSync(mine, { recursive: true });
    cpSync(other, mine, { recursive: true });
    const rebuilt = await pretrain('--data', 'd1', '--out', 'c/bc.onnx', '--run-dir', 'run');
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(rebuilt.stderr).toMatch(
      /rebuilding the rows of d1: .*manifest\.json: made for something else: source\.dataHash/,
    );
    expect(readFileSync(join(tmp, 'c/bc.onnx')).length).toBeGreaterThan(0);

    const shard = shardOf(mine);
    const size = statSync(shard).size;
    truncateSync(shard, size - 1000);
    const bad = await pretrain('--data', 'd1', '--out', 'c/bc.onnx', '--run-dir', 'run');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      `${shard.slice(tmp.length + 1)}: ${size - 1000} bytes, manifest.json says ${size} (truncated)`,
    );
    expect(bad.stderr).toMatch(/\(the cached rows of d1: delete run\/rows\/[0-9a-f-]+ to re-simulate them\)/);
  });
});
