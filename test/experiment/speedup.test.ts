import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  SpeedupConfigSchema,
  WMRL_BIN,
  curveOf,
  reach,
  runSpeedup,
  writeSpeedupReport,
} from '../../src/experiment/index.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-speedup-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const scene = loadSceneFile(DEFAULT_SCENE_PATH);

describe('speedup experiment', () => {
  it('curves put each evaluation at the training clock so far (evaluation off the clock) and its physics steps', () => {
    const line = (iteration: number, extra: Record<string, number> = {}) => ({
      iteration,
      'time/physics_s': 1,
      'time/world_model_s': 0.5,
      'time/training_s': 0.25,
      'time/refresh_s': 0.25,
      'time/eval_s': 100,
      'steps/physics': 10 * iteration,
      ...extra,
    });
    const curve = curveOf([
      line(1),
      line(2, { 'eval/success': 0.5, 'eval/ci_low': 0.4, 'eval/ci_high': 0.6 }),
      line(3),
      line(4, { 'eval/success': 0.7, 'eval/ci_low': 0.6, 'eval/ci_high': 0.8 }),
    ]);
    expect(curve).toEqual([
      { iteration: 2, seconds: 4, physicsSteps: 20, success: 0.5, low: 0.4, high: 0.6 },
      { iteration: 4, seconds: 8, physicsSteps: 40, success: 0.7, low: 0.6, high: 0.8 },
    ]);
  });

  it('a curve reaches a target where its mean from there on stays at or above it (an early spike does not count)', () => {
    const pt = (iteration: number, success: number) => ({
      iteration,
      seconds: iteration,
      physicsSteps: iteration,
      success,
      low: 0,
      high: 1,
    });
    expect(reach([pt(1, 0.6), pt(2, 0.4), pt(3, 0.45), pt(4, 0.52)], 0.5)?.iteration).toBe(4);
    expect(reach([pt(1, 0.4), pt(2, 0.55), pt(3, 0.48), pt(4, 0.5)], 0.5)?.iteration).toBe(2);
    expect(reach([pt(1, 0.4)], 0.5)).toBeNull();
  });

  it('runs real and wmrl as train children, evaluates them paired against the base, writes the report; a second call reuses every run', {
    timeout: 240_000,
  }, async () => {
    const cfg = SpeedupConfigSchema.parse({
      tasks: ['tabletop/pick-place'],
      modes: ['real', 'wmrl'],
      preset: 'smoke',
      iterations: { real: 2, model: 3 },
      evalEvery: { real: 1, model: 1 },
      evalEpisodes: 2,
      finalEpisodes: 4,
    });
    const paths = {
      runs: join(tmp, 'runs'),
      report: join(tmp, 'report'),
      policy: 'models/vla-base.onnx',
      worldModel: 'models/wm-base.onnx',
      bin: WMRL_BIN,
      trainArgs: ['--progress-every', '0'],
    };
    const logged: string[] = [];
    const report = await runSpeedup(scene, cfg, paths, (line) => logged.push(line));
    // the training children's progress lines reach the experiment's log under the run's name
    expect(logged).toContain('training real-seed0 (2 iterations)');
    expect(logged.some((l) => /^wmrl-seed0: train 3\/3 \(100%\)/.test(l))).toBe(true);
    expect(report.runs.map((r) => [r.mode, r.iterations])).toEqual([
      ['real', 2],
      ['wmrl', 3],
    ]);
    expect(report.curves.map((c) => c.points.length)).toEqual([3, 4]); // before training, then every iteration
    expect(report.curves[0].points[0]).toMatchObject({ iteration: 0, seconds: 0, physicsSteps: 0 });
    const real = report.runs[0];
    expect(real.speedup_wall).toBe(1); // real reaches its own final success at its own end
    expect(real.final.seen.episodes + real.final.reserved.episodes).toBe(4);
    expect(report.runs[1].physics_steps).toBeLessThan(real.physics_steps);
    const files = writeSpeedupReport(paths.report, report, 'test');
    expect(readFileSync(files.html, 'utf8')).toContain('<svg');
    const before = statSync(join(paths.runs, 'wmrl-seed0', 'metrics.jsonl')).mtimeMs;
    const again = await runSpeedup(scene, cfg, paths);
    expect(statSync(join(paths.runs, 'wmrl-seed0', 'metrics.jsonl')).mtimeMs).toBe(before);
    expect(again.runs.map((r) => r.final.overall.success)).toEqual(report.runs.map((r) => r.final.overall.success));
    await expect(runSpeedup(scene, { ...cfg, evalEpisodes: 3 }, paths)).rejects.toThrow(/another configuration/);
    expect(existsSync(join(paths.runs, 'base-eval.json'))).toBe(true);
  });
});
