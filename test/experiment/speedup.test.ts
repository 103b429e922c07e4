// The speedup experiment (a configuration of the study core): curves from metrics lines, and a real
// experiment of real and wmrl as `wmrl train` children, reused when run again.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SpeedupConfigSchema, WMRL_BIN, curveOf, runSpeedup, writeSpeedupReport } from '../../src/experiment/index.ts';
import { fidelitySummary } from '../../src/experiment/speedup.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-speedup-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const scene = loadSceneFile(DEFAULT_SCENE_PATH);

describe('speedup experiment', () => {
  it('curves put each evaluation at the training clock so far (evaluation off the clock) and its physics steps', () => {
    const line = (iteration: number, extra: Record<string, number | null> = {}) => ({
      iteration,
      'time/physics_s': 1,
      'time/world_model_s': 0.5,
      'time/training_s': 0.25,
      'time/refresh_s': 0.25,
      'time/eval_s': 100,
      'steps/physics': 10 * iteration,
      'steps/world_model': 0,
      ...extra,
    });
    const curve = curveOf([
      line(1, { 'eval/success': null }),
      line(2, { 'eval/success': 0.5, 'eval/ci_low': 0.4, 'eval/ci_high': 0.6 }),
      line(3),
      line(4, { 'eval/success': 0.7, 'eval/ci_low': 0.6, 'eval/ci_high': 0.8 }),
    ]);
    expect(curve).toEqual([
      { iteration: 2, seconds: 4, physicsSteps: 20, success: 0.5, low: 0.4, high: 0.6 },
      { iteration: 4, seconds: 8, physicsSteps: 40, success: 0.7, low: 0.6, high: 0.8 },
    ]);
  });

  it('averages fidelity over the lines that measured it: a null rank correlation is left out, not a 0', () => {
    const line = (iteration: number, rank: number | null) => ({
      iteration,
      'time/physics_s': 1,
      'time/world_model_s': 0,
      'time/training_s': 0,
      'time/refresh_s': 0,
      'steps/physics': iteration,
      'steps/world_model': 0,
      'fidelity/h5/rank_corr': rank,
      'fidelity/h5/gain_rank_corr': rank,
      'fidelity/h5/bias': -0.1,
    });
    const s = fidelitySummary([line(1, 0.8), line(2, null), line(3, 0.6), line(4, null)]);
    expect(s.h5.rank_corr).toBeCloseTo(0.7, 12);
    expect(s.h5.gain_rank_corr).toBeCloseTo(0.7, 12);
    expect(s.h5.bias).toBeCloseTo(-0.1, 12);
    expect(s.h5.measurements).toBe(2);
  });

  it('runs real and wmrl as train children, evaluates them paired against the base, writes the report; a second call reuses every run', {
    timeout: 300_000,
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
    const [real, wmrl] = report.runs;
    // real is the reference: no speedup over itself; wmrl's is read off both runs' own curves
    expect(real.speedup_wall).toBeNull();
    const s = wmrl.speedup_wall!;
    const realPoints = report.curves[0].points.filter((p) => p.iteration > 0);
    // real's fit first reaches its own final value at one of its measured points
    expect(realPoints.some((p) => Math.abs(p.seconds - s.real_at) < 1e-9)).toBe(true);
    expect(s.target).toBeGreaterThanOrEqual(Math.min(...realPoints.map((p) => p.success)));
    expect(s.target).toBeLessThanOrEqual(Math.max(...realPoints.map((p) => p.success)));
    if (s.run_at !== null) expect(s.estimate).toBeCloseTo(s.real_at / s.run_at, 9);
    expect(real.final.seen.episodes + real.final.reserved.episodes).toBe(4);
    expect(wmrl.physics_steps).toBeLessThan(real.physics_steps);
    expect(wmrl.vs_real.episodes).toBe(4);
    const files = writeSpeedupReport(paths.report, report, 'test');
    const html = readFileSync(files.html!, 'utf8');
    expect(html).toContain(`<tr><td>wmrl</td><td>0</td><td>3</td><td>${wmrl.train_seconds.toFixed(0)}</td>`);
    expect(html).toContain(`<td>${wmrl.physics_steps}</td><td>${(100 * wmrl.final.overall.success).toFixed(1)} [`);
    const before = statSync(join(paths.runs, 'wmrl-seed0', 'metrics.jsonl')).mtimeMs;
    const again = await runSpeedup(scene, cfg, paths);
    expect(statSync(join(paths.runs, 'wmrl-seed0', 'metrics.jsonl')).mtimeMs).toBe(before);
    expect(again.runs.map((r) => r.final.overall.success)).toEqual(report.runs.map((r) => r.final.overall.success));
    await expect(runSpeedup(scene, { ...cfg, evalEpisodes: 3 }, paths)).rejects.toThrow(
      /study\.json: the runs there share other settings \(evalEpisodes\)/,
    );
  });
});
