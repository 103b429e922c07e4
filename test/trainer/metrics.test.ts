import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type TrainMetrics, TrainMetricsSchema, trainSeconds } from '../../src/core/metrics.ts';
import { resolveConfig, train } from '../../src/trainer/index.ts';
import { setup } from './code-lock.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-metrics-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const lines = (path: string) =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('the metrics line schema', () => {
  const rows: Record<string, unknown>[] = [];
  const seen: TrainMetrics[] = [];

  it('every line the trainer writes parses (evaluation, fidelity and refresh-free lines alike) and equals what onIteration got', {
    timeout: 60_000,
  }, async () => {
    const cfg = resolveConfig('smoke', {
      mode: 'wmrl',
      iterations: 2,
      evalEvery: 1,
      evalEpisodes: 2,
      fidelityEvery: 2,
      fidelityHorizons: [2],
      horizon: 3,
      branchEvery: 2,
    });
    await train(
      setup((p) => 0.8 * p, 0.2),
      cfg,
      join(tmp, 'run'),
      { onIteration: (m) => seen.push(m) },
    );
    rows.push(...lines(join(tmp, 'run', 'metrics.jsonl')));
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(TrainMetricsSchema.safeParse(row).error).toBeUndefined();
    expect(rows).toEqual(JSON.parse(JSON.stringify(seen)));
    expect(rows[0]).toHaveProperty('eval_initial/success');
    // one task: its own rate is the pooled one, before training and after each evaluation
    for (const [row, at] of [
      [rows[0], 'eval_initial'],
      [rows[0], 'eval'],
      [rows[1], 'eval'],
    ] as const)
      expect(row[`${at}/success/toy/code-lock`], at).toBe(row[`${at}/success`]);
    expect(rows[1]).toHaveProperty(['fidelity/h2/rank_corr']);
    expect(rows[1]).toHaveProperty(['fidelity/whole/pairs']);
  });

  it('a value with nothing to measure is null, never 0 (no pairs, no refresh, a source without rollouts)', {
    timeout: 60_000,
  }, async () => {
    // wmrl's first line: the debiaser has no pairs before its first anchors are graded, no refresh ran
    const first = rows[0];
    expect(first['refresh/count']).toBe(0);
    expect(first['refresh/val_mse']).toBeNull();
    const run = async (mode: 'real' | 'wm') => {
      const cfg = resolveConfig('smoke', { mode, iterations: 1, evalEvery: 0 });
      await train(
        setup((p) => p, 0),
        cfg,
        join(tmp, mode),
      );
      return lines(join(tmp, mode, 'metrics.jsonl'))[0];
    };
    const real = await run('real');
    for (const key of ['reward/wm', 'success/wm', 'debias/bias_before', 'debias/bias_after', 'refresh/val_mse'])
      expect(real[key], key).toBeNull();
    expect(real['reward/anchor']).toEqual(expect.any(Number));
    const wm = await run('wm');
    for (const key of ['reward/anchor', 'success/anchor', 'denoise/eta2', 'debias/bias_before'])
      expect(wm[key], key).toBeNull();
    expect(wm['reward/wm']).toEqual(expect.any(Number));
    for (const row of [real, wm]) expect(TrainMetricsSchema.safeParse(row).error).toBeUndefined();
  });

  it('so do the lines of a real tabletop run (the viewer fixture)', () => {
    const fixture = lines(join(import.meta.dirname, '../fixtures/viewer/wmrl-seed1/metrics.jsonl'));
    for (const row of fixture) expect(TrainMetricsSchema.safeParse(row).error).toBeUndefined();
  });

  it('a missing, renamed or unknown key fails, naming it', () => {
    const row = rows[0];
    const { 'reward/wm': wm, ...missing } = row;
    const issues = (x: unknown) => TrainMetricsSchema.safeParse(x).error?.issues.map((i) => i.path.join('.'));
    expect(issues(missing)).toEqual(['reward/wm']);
    expect(issues({ ...missing, 'reward/world_model': wm })).toEqual(['reward/wm', 'reward/world_model']);
    expect(issues({ ...row, 'fidelity/h2/spearman': 0.5 })).toEqual(['fidelity/h2/spearman']);
    expect(issues({ ...row, 'eval/success': 'high' })).toEqual(['eval/success']);
    expect(issues({ ...row, 'eval/success/stack': 0.5 })).toBeUndefined();
    expect(issues({ ...row, 'eval/success/stack': null })).toEqual(['eval/success/stack']);
    expect(issues({ ...row, 'eval/success/Stack!': 0.5 })).toEqual(['eval/success/Stack!']);
  });

  it('names its keys in the type: a renamed key does not typecheck', () => {
    const m = TrainMetricsSchema.parse(rows[0]);
    // @ts-expect-error 'reward/world_model' is not a metric (the file says reward/wm)
    expect(m['reward/world_model']).toBeUndefined();
    expect(trainSeconds(m)).toBe(
      m['time/physics_s'] + m['time/world_model_s'] + m['time/training_s'] + m['time/refresh_s'],
    );
  });
});
