// The corrections study (a configuration of the study core): schema, a real study of two rows on two
// seeds (trained, reused, refused when changed), and the report on toy runs written by the test itself.
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CorrectionStudySchema,
  correctionRun,
  correctionTable,
  evalKey,
  inputHashes,
  runCorrectionStudy,
  studyReport,
  WMRL_BIN,
  writeCache,
  writeStamp,
} from '../../src/experiment/index.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-corrections-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const scene = loadSceneFile(DEFAULT_SCENE_PATH);
const task = 'tabletop/pick-place';

const study = (rows: unknown[], o: object = {}) =>
  CorrectionStudySchema.parse({
    tasks: [task],
    seeds: [0, 1],
    iterations: 2,
    finalEpisodes: 4,
    preset: 'smoke',
    rows,
    ...o,
  });
const pathsIn = (dir: string) => ({
  runs: join(dir, 'runs'),
  report: join(dir, 'report'),
  policy: 'models/vla-base.onnx',
  worldModel: 'models/wm-base.onnx',
  bin: WMRL_BIN,
});
const rows = [
  { name: 'mix', mode: 'mix' },
  { name: 'branch', mode: 'real-branch', versus: ['mix'] },
];

describe('the corrections study', () => {
  it('refuses a row named twice or paired against no row, naming the field', () => {
    const bad = (r: unknown[]) =>
      CorrectionStudySchema.safeParse({ rows: r }).error?.issues.map((i) => i.path.join('.'));
    expect(bad([...rows, { name: 'mix', mode: 'wmrl' }])).toEqual(['rows.2.name']);
    expect(bad([{ name: 'a', mode: 'mix', versus: ['b'] }])).toEqual(['rows.0.versus.0']);
    expect(bad([{ name: 'A/b', mode: 'mix' }])?.[0]).toBe('rows.0.name');
  });

  it('trains and evaluates every row on every seed, reuses them when run again, and refuses a changed row', {
    timeout: 300_000,
  }, async () => {
    const paths = pathsIn(join(tmp, 'real'));
    const s = study(rows);
    const report = await runCorrectionStudy(scene, s, paths);
    expect(report.rows.map((r) => [r.name, r.seeds])).toEqual([
      ['mix', [0, 1]],
      ['branch', [0, 1]],
    ]);
    expect(report.rows[1].world_model_steps.mean).toBe(0);
    expect(report.rows[1].versus[0].seeds).toBe(2);
    expect(existsSync(join(paths.runs, 'mix-s0.stamp.json'))).toBe(true);
    const policy = join(paths.runs, 'mix-s0', 'policy.onnx');
    const before = statSync(policy).mtimeMs;
    await runCorrectionStudy(scene, s, paths);
    expect(statSync(policy).mtimeMs).toBe(before);
    const changed = study([{ ...rows[0], config: { horizon: 5 } }, rows[1]]);
    await expect(runCorrectionStudy(scene, changed, paths)).rejects.toThrow(
      /row "mix" was trained with other settings/,
    );
    await expect(runCorrectionStudy(scene, study(rows, { finalEpisodes: 3 }), paths)).rejects.toThrow(
      /share other settings \(finalEpisodes\)/,
    );
    // a new row joins the study: --no-train reports it with no runs
    const more = study([...rows, { name: 'mix-h5', mode: 'mix', config: { horizon: 5 } }]);
    const reported = await runCorrectionStudy(scene, more, paths, { train: false });
    expect(reported.rows.map((r) => r.seeds.length)).toEqual([2, 2, 0]);
    expect(existsSync(join(paths.runs, 'mix-h5-s0'))).toBe(false);
    // then trained on seed 1 only (the report covers the study's seeds)
    const grown = await runCorrectionStudy(scene, more, paths, { only: ['mix-h5'], seeds: [1] });
    expect(grown.rows.map((r) => r.seeds)).toEqual([[0, 1], [0, 1], [1]]);
  });

  it('reports between-seed means, per-seed paired differences and what the corrections did (toy runs)', () => {
    const paths = pathsIn(join(tmp, 'toy'));
    const s = study(rows);
    const h = inputHashes(paths, scene);
    const outcomes: Record<string, number[]> = {
      'mix-s0': [1, 0, 0, 0],
      'mix-s1': [1, 1, 0, 0],
      'branch-s0': [1, 1, 0, 0],
      'branch-s1': [1, 1, 1, 1],
    };
    for (const row of s.rows)
      for (const seed of s.seeds) {
        const run = correctionRun(h, s, row, seed);
        const dir = join(paths.runs, run.name);
        mkdirSync(dir, { recursive: true });
        writeStamp(join(paths.runs, `${run.name}.stamp.json`), run);
        writeFileSync(join(dir, 'policy.onnx'), run.name);
        writeFileSync(join(dir, 'metrics.jsonl'), toyMetrics(row.name === 'mix'));
        const o = outcomes[run.name];
        writeCache(join(dir, 'final-eval.json'), evalKey(h, s.tasks, 4, join(dir, 'policy.onnx')), result(run.name, o));
      }
    const base = result('base', [0, 0, 0, 0]);
    const r = studyReport(s, paths, h, base);
    const [mix, branch] = r.rows;
    expect(mix.success.values).toEqual([0.25, 0.5]);
    expect(mix.success.mean).toBeCloseTo(0.375, 12);
    // t interval over 2 seeds: 0.375 ± 12.706 · 0.125 / √2 · √2
    expect(mix.success.high! - mix.success.mean!).toBeCloseTo(12.706 * 0.125, 3);
    expect(branch.versus[0].per_seed.values).toEqual([0.25, 0.5]);
    expect(branch.versus[0].pooled.diff).toBeCloseTo(0.375, 12);
    expect(branch.versus[0].pooled.episodes).toBe(8);
    expect(mix.versus).toEqual([]);
    // branch's last point (150 steps, 1 s, 0.6) against mix's curve there: 0.3 at 150 steps, 0.2 at 1 s
    const eq = branch.versus[0].at_equal_cost;
    expect(eq?.physics_steps?.values.map((x: number) => +x.toFixed(12))).toEqual([0.3, 0.3]);
    expect(eq?.seconds?.values.map((x: number) => +x.toFixed(12))).toEqual([0.4, 0.4]);
    expect(branch.vs_base.mean).toBeCloseTo(0.75, 12);
    // mix: 1 of 4 world-model groups changed; branch wrote no debias count: missing, not 0
    expect(mix.corrections.debias_changed.mean).toBeCloseTo(0.25, 12);
    expect(branch.corrections.debias_changed).toMatchObject({ mean: null, n: 0 });
    // the bias is null on the last line of mix's runs (no pairs yet): missing; branch's is -0.2
    expect(mix.corrections.bias_before).toMatchObject({ mean: null, n: 0 });
    expect(branch.corrections.bias_before.values).toEqual([-0.2, -0.2]);
    expect(mix.w_curve).toEqual([1, 2]);
    expect(mix.corrections.w_final.mean).toBe(2);
    const table = correctionTable(r);
    expect(table).toContain('| branch | 2 | 75.0 [');
    expect(table).toContain('| 37.5 [');
    expect(table).toMatch(/\| branch \|.*\| n\/a \| 0% \| 1\.50 \/ 2\.00 \|/);
    expect(table.split('\n').at(-1)).toMatch(/^\| base \(no training\) \| - \| 0\.0 \|/);
    // a run stamped with other settings is not the row's
    writeStamp(join(paths.runs, 'mix-s1.stamp.json'), {
      ...correctionRun(h, s, s.rows[0], 1),
      spec: { other: 1 } as never,
    });
    expect(studyReport(s, paths, h, base).rows[0].seeds).toEqual([0]);
  });
});

/** A held-out result with these outcomes. */
function result(policy: string, o: number[]) {
  const outcomes = { [task]: o as (0 | 1)[] };
  const family = { success_rate: 0, ci_low: 0, ci_high: 1, episodes: o.length, mean_progress: 0, mean_length: 1 };
  return { policy, results: { overall: family }, outcomes };
}

/** Two metrics lines. Curves: mix at 100 and 200 physics steps, 1 and 2 s; branch at 50 and 150, 0.5 and
 *  1 s. mix: 2 world-model groups per line, one debias change over the run, its bias still null; branch
 *  leaves the debias count out. */
function toyMetrics(mix: boolean): string {
  const lines = [0, 1].map((i) => ({
    iteration: i + 1,
    'time/physics_s': mix ? 1 : 0.5,
    'time/world_model_s': 0,
    'time/training_s': 0,
    'time/refresh_s': 0,
    'steps/physics': mix ? 100 * (i + 1) : 50 + 100 * i,
    'steps/world_model': 0,
    'eval/success': (mix ? [0.2, 0.4] : [0.5, 0.6])[i],
    'eval/ci_low': 0,
    'eval/ci_high': 1,
    'groups/wm': 2,
    'groups/wm_three_valued': 0,
    ...(mix && { 'groups/debias_changed': i }),
    'denoise/w': 1 + i,
    'debias/bias_before': mix ? null : -0.2,
  }));
  return `${lines.map((m) => JSON.stringify(m)).join('\n')}\n`;
}
