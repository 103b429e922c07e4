import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CorrectionStudySchema,
  correctionTable,
  runCorrectionStudy,
  studyReport,
  WMRL_BIN,
} from '../../src/experiment/index.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-corrections-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const scene = loadSceneFile(DEFAULT_SCENE_PATH);
const task = 'tabletop/pick-place';

const study = (rows: unknown[]) =>
  CorrectionStudySchema.parse({
    tasks: [task],
    seeds: [0, 1],
    iterations: 2,
    finalEpisodes: 4,
    preset: 'smoke',
    rows,
  });
const paths = {
  runs: join(tmp, 'runs'),
  report: join(tmp, 'report'),
  policy: 'models/vla-base.onnx',
  worldModel: 'models/wm-base.onnx',
  bin: WMRL_BIN,
};
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
    timeout: 240_000,
  }, async () => {
    const s = study(rows);
    const report = await runCorrectionStudy(scene, s, paths);
    expect(report.rows.map((r) => [r.name, r.seeds])).toEqual([
      ['mix', [0, 1]],
      ['branch', [0, 1]],
    ]);
    expect(report.rows[1].world_model_steps.mean).toBe(0);
    expect(report.rows[1].versus[0].seeds).toBe(2);
    const policy = join(paths.runs, 'mix-s0', 'policy.onnx');
    const before = statSync(policy).mtimeMs;
    await runCorrectionStudy(scene, s, paths);
    expect(statSync(policy).mtimeMs).toBe(before);
    const changed = study([{ ...rows[0], config: { horizon: 5 } }, rows[1]]);
    await expect(runCorrectionStudy(scene, changed, paths)).rejects.toThrow(
      /row "mix" was trained with other settings/,
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

  it('reports between-seed means, per-seed paired differences and what the corrections did (known toy outcomes)', () => {
    // the runs of the test above, with their outcomes and correction counts replaced by known values
    const outcomes: Record<string, number[]> = {
      'mix-s0': [1, 0, 0, 0],
      'mix-s1': [1, 1, 0, 0],
      'branch-s0': [1, 1, 0, 0],
      'branch-s1': [1, 1, 1, 1],
    };
    for (const [run, o] of Object.entries(outcomes)) {
      const path = join(paths.runs, run, 'final-eval.json');
      const cache = JSON.parse(readFileSync(path, 'utf8'));
      cache.result.outcomes = { [task]: o };
      writeFileSync(path, JSON.stringify(cache));
      const metricsPath = join(paths.runs, run, 'metrics.jsonl');
      const lines = readFileSync(metricsPath, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const mix = run.startsWith('mix');
      lines.forEach((m, i) => {
        // curves: the reference (mix) at 100 and 200 physics steps, 1 and 2 s; branch at 50 and 150, 0.5 and 1 s
        for (const k of Object.keys(m)) if (k.startsWith('time/')) m[k] = 0;
        m['time/physics_s'] = mix ? 1 : 0.5;
        m['steps/physics'] = mix ? 100 * (i + 1) : 50 + 100 * i;
        Object.assign(m, { 'eval/success': (mix ? [0.2, 0.4] : [0.5, 0.6])[i], 'eval/ci_low': 0, 'eval/ci_high': 1 });
        m['groups/wm'] = 2;
        m['groups/debias_changed'] = i; // 1 of 4 groups over the run
        m['denoise/w'] = 1 + i;
      });
      writeFileSync(metricsPath, `${lines.map((m) => JSON.stringify(m)).join('\n')}\n`);
    }
    const base = { outcomes: { [task]: [0, 0, 0, 0] } } as never;
    const r = studyReport(study(rows), paths, base);
    const [mix, branch] = r.rows;
    expect(mix.success.values).toEqual([0.25, 0.5]);
    expect(mix.success.mean).toBeCloseTo(0.375, 12);
    // t interval over 2 seeds: 0.375 ± 12.706 · 0.125 / √2 · √2
    expect(mix.success.high! - mix.success.mean).toBeCloseTo(12.706 * 0.125, 3);
    expect(branch.versus[0].per_seed.values).toEqual([0.25, 0.5]);
    expect(branch.versus[0].pooled.diff).toBeCloseTo(0.375, 12);
    expect(branch.versus[0].pooled.episodes).toBe(8);
    expect(mix.versus).toEqual([]);
    // branch's last point (150 steps, 1 s, 0.6) against mix's curve there: 0.3 at 150 steps, 0.2 at 1 s
    expect(branch.versus[0].at_equal_cost?.physics_steps?.values.map((x: number) => +x.toFixed(12))).toEqual([
      0.3, 0.3,
    ]);
    expect(branch.versus[0].at_equal_cost?.seconds?.values.map((x: number) => +x.toFixed(12))).toEqual([0.4, 0.4]);
    expect(branch.vs_base.mean).toBeCloseTo(0.75, 12);
    expect(mix.corrections.debias_changed.mean).toBeCloseTo(0.25, 12);
    expect(mix.w_curve).toEqual([1, 2]);
    expect(mix.corrections.w_final.mean).toBe(2);
    const table = correctionTable(r);
    expect(table).toContain('| branch | 2 | 75.0 [');
    expect(table).toContain('37.5 [');
    expect(table.split('\n').at(-1)).toMatch(/^\| base \(no training\) \| - \| 0\.0 \|/);
  });
});
