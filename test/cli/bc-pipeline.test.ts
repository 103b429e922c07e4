import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDemoFolder } from '../../src/demos/index.ts';
import { EvalReportSchema, runEval } from '../../src/eval/index.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';
import { runJson } from './helpers.ts';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'wmrl-bc-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('wmrl collect -> pretrain -> eval (tabletop, tiny)', () => {
  it('collects DART demos, clones them and beats random on the train split', { timeout: 120_000 }, async () => {
    const data = join(dir, 'demos');
    const c = await runJson([
      'collect',
      '--task',
      'pick-place',
      '--episodes',
      '6',
      '--noise',
      '0.05',
      '--out',
      data,
      '--json',
    ]);
    expect(c.episodes).toBe(6);
    const { demos, meta } = readDemoFolder(data);
    expect(meta.labels).toBe('expert');
    expect(demos.every((d) => d.labels.length === d.actions.length)).toBe(true);
    // Noise changed some executed tokens; the labels are the expert's clean choices.
    const changed = demos.reduce((s, d) => s + d.labels.filter((l, i) => l !== d.actions[i]).length, 0);
    expect(changed).toBeGreaterThan(0);
    // Counterfactual labels: approach-phase steps relabelled for the other objects.
    const cf = demos.flatMap((d) => d.counterfactual);
    expect(cf.length).toBeGreaterThan(0);
    expect(cf.every((x) => x.tokens.length === 5 && x.object >= 0 && x.object < 4)).toBe(true);

    const model = join(dir, 'bc.onnx');
    const runDir = join(dir, 'run');
    const p = await runJson([
      'pretrain',
      '--data',
      data,
      '--out',
      model,
      '--steps',
      '1000',
      '--lr',
      '0.003',
      '--batch',
      '32',
      '--size',
      'tiny',
      '--shift',
      '2',
      '--word-dropout', // 1000 steps on a few demos: every word is needed to tell the cubes apart
      '0',
      '--log-every',
      '250',
      '--checkpoint-every',
      '500',
      '--run-dir',
      runDir,
      '--no-counterfactual',
      '--json',
    ]);
    expect(p.samples).toBe(demos.reduce((s, d) => s + d.length, 0));
    const lines = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.step)).toEqual([250, 500, 750, 1000]);
    expect(lines[3].loss).toBeLessThan(lines[0].loss);
    expect(existsSync(join(runDir, 'checkpoint.json'))).toBe(true);

    const opts = {
      scene: loadSceneFile(DEFAULT_SCENE_PATH),
      tasks: ['tabletop/pick-place'],
      policies: [model, 'random'],
      split: 'train' as const,
      episodes: 6,
      seed: 0,
      temperature: 1,
      numEnvs: 6,
    };
    const report = await runEval(opts);
    EvalReportSchema.parse(report);
    const [bc, rnd] = report.policies.map((x) => x.results.overall);
    console.log(
      `tiny BC on pick-place (train split, 6 episodes): success ${bc.success_rate}, progress ${bc.mean_progress.toFixed(2)}; random: progress ${rnd.mean_progress.toFixed(2)}`,
    );
    expect(bc.mean_progress).toBeGreaterThan(rnd.mean_progress);
    // Same policy and seed: identical report.
    expect(await runEval(opts)).toEqual(report);
  });
});
