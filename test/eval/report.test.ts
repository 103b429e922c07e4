import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import {
  EvalReportSchema,
  type FamilyResult,
  comparePolicies,
  pairedDifference,
  policyResult,
  runEval,
  validateReport,
  writeEvalFolder,
} from '../../src/eval/index.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';
import { sampleTask, splitSeed, usesReservedPair } from '../../src/task/index.ts';
import { runJson } from '../cli/helpers.ts';

const ep = (success: boolean, progress = success ? 1 : 0.5) => ({
  seed: 0,
  success,
  length: success ? 40 : 100,
  progress,
});

describe('eval report', () => {
  it('summarises per family with Wilson intervals and an overall entry', () => {
    const r = policyResult('p', [
      { taskId: 'tabletop/push', episodes: [ep(true), ep(false), ep(true), ep(true)] },
      { taskId: 'tabletop/stack', episodes: [ep(false), ep(false)] },
    ]);
    expect(r.results['tabletop/push']).toMatchObject({
      success_rate: 0.75,
      episodes: 4,
      mean_length: 55,
      mean_progress: 0.875,
    });
    expect(r.results.overall.episodes).toBe(6);
    expect(r.results.overall.success_rate).toBeCloseTo(0.5);
    expect(r.results.overall.ci_low).toBeLessThan(0.5);
    expect(r.outcomes['tabletop/stack']).toEqual([0, 0]);
  });

  it('counts episodes that ended with an object off the table, per family and overall', () => {
    const off = { ...ep(false), length: 30, offTable: true };
    const r = policyResult('p', [
      { taskId: 'tabletop/push', episodes: [off, { ...ep(true), offTable: false }, off] },
      { taskId: 'tabletop/stack', episodes: [{ ...ep(false), offTable: false }] },
    ]);
    expect(r.results['tabletop/push'].off_table).toBe(2);
    expect(r.results['tabletop/stack'].off_table).toBe(0);
    expect(r.results.overall.off_table).toBe(2);
    expect(policyResult('q', [{ taskId: 't', episodes: [ep(true)] }]).results.t.off_table).toBeUndefined();
  });

  it('pairs outcomes on the same seeds', () => {
    expect(pairedDifference([1, 1, 1, 1], [1, 1, 1, 1])).toEqual({ diff: 0, ci_low: 0, ci_high: 0, episodes: 4 });
    const d = pairedDifference([1, 1, 1, 0, 1, 1, 0, 1], [0, 1, 0, 0, 0, 1, 0, 0]);
    expect(d.diff).toBeCloseTo(0.5);
    expect(d.ci_low).toBeGreaterThan(0.1);
    expect(d.ci_high).toBeLessThan(0.9);
    expect(() => pairedDifference([1], [1, 0])).toThrow(/share seeds/);
    const a = policyResult('a', [{ taskId: 't', episodes: [ep(true), ep(true)] }]);
    const b = policyResult('b', [{ taskId: 't', episodes: [ep(false), ep(true)] }]);
    expect(comparePolicies(a, b).overall.diff).toBeCloseTo(0.5);
  });

  it('validates against its schema, names bad fields, and writes json + png + html', async () => {
    const report = await runEval({
      scene: loadSceneFile(DEFAULT_SCENE_PATH),
      tasks: ['tabletop/push'],
      policies: ['expert'],
      split: 'heldout',
      episodes: 2,
      seed: 3,
      temperature: 1,
      numEnvs: 2,
    });
    expect(EvalReportSchema.safeParse(report).success).toBe(true);
    expect(report.policies[0].results['tabletop/push'].success_rate).toBe(1);
    expect(report.policies[0].results['tabletop/push'].off_table).toBe(0);
    const { overall: _drop, ...noOverall } = report.policies[0].results;
    expect(() => validateReport({ ...report, policies: [{ ...report.policies[0], results: noOverall }] })).toThrow(
      /policies\.0\.results: must have an "overall" entry/,
    );
    expect(() => validateReport({ ...report, temperature: -1 })).toThrow(/temperature/);
    const dir = await mkdtemp(join(tmpdir(), 'wmrl-eval-'));
    try {
      const files = writeEvalFolder(dir, report);
      expect(validateReport(JSON.parse(await readFile(files.json, 'utf8')))).toEqual(report);
      const png = PNG.sync.read(await readFile(files.png));
      expect([png.width, png.height]).toEqual([480, 240]);
      expect(await readFile(files.html, 'utf8')).toContain('success.png');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('held-out reports split the episodes into seen and reserved object-target pairs, pooled and per family', async () => {
    const scene = loadSceneFile(DEFAULT_SCENE_PATH);
    const tasks = ['tabletop/push', 'tabletop/put-in-bin'];
    const report = await runEval({
      scene,
      tasks,
      policies: ['expert'],
      split: 'heldout',
      episodes: 12,
      seed: 0,
      temperature: 1,
      numEnvs: 4,
    });
    const { seen, reserved, tasks: perTask } = report.policies[0].pairs!;
    const reservedOf = (task: string) =>
      Array.from({ length: 12 }, (_, k) =>
        usesReservedPair(scene, sampleTask(scene, task, splitSeed(scene, 'heldout', k))),
      ).filter(Boolean).length;
    for (const task of tasks) {
      expect(perTask![task].reserved.episodes).toBe(reservedOf(task));
      expect(perTask![task].seen.episodes + perTask![task].reserved.episodes).toBe(12);
      const successes = (r: FamilyResult) => Math.round(r.success_rate * r.episodes);
      const family = report.policies[0].results[task];
      expect(successes(perTask![task].seen) + successes(perTask![task].reserved)).toBe(successes(family));
    }
    expect(reserved.episodes).toBe(reservedOf(tasks[0]) + reservedOf(tasks[1]));
    expect(reserved.episodes).toBeGreaterThan(0);
    expect(seen.episodes + reserved.episodes).toBe(24);
  });

  it('--wording unseen: the policy reads other instructions on the same episodes', { timeout: 60_000 }, async () => {
    const scene = loadSceneFile(DEFAULT_SCENE_PATH);
    const run = (wording: 'scene' | 'unseen') =>
      runEval({
        scene,
        tasks: ['tabletop/put-in-bin'],
        policies: ['models/vla-base.onnx'],
        split: 'heldout',
        episodes: 8,
        seed: 0,
        temperature: 1,
        numEnvs: 8,
        wording,
      });
    const [own, unseen] = [await run('scene'), await run('unseen')];
    expect(unseen.wording).toBe('unseen');
    expect(own.wording).toBeUndefined();
    // the same seeds and random draws: only the text the policy reads differs
    const progress = (r: typeof own) =>
      r.policies[0].results.overall.mean_progress + r.policies[0].results.overall.mean_length;
    expect(progress(unseen)).not.toBe(progress(own));
  });

  it('the same policy and seed give an identical report; --json prints per-family keys and overall', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'wmrl-eval-'));
    try {
      const args = ['eval', '--policy', 'random', '--task', 'put-in-bin', '--episodes', '3', '--seed', '5', '--json'];
      const a = await runJson([...args, '--out', join(dir, 'a')]);
      await runJson([...args, '--out', join(dir, 'b')]);
      for (const k of ['tabletop/put-in-bin', 'overall'])
        expect(Object.keys(a.results[k])).toEqual(
          expect.arrayContaining(['success_rate', 'ci_low', 'ci_high', 'episodes']),
        );
      expect(await readFile(join(dir, 'a', 'report.json'), 'utf8')).toBe(
        await readFile(join(dir, 'b', 'report.json'), 'utf8'),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
