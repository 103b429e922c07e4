// The corrections study through the study report writer: report.json, table.md (what docs quote) and
// index.html (the table, the denoiser's w over training and the learning curves).
import type { CorrectionReport } from './corrections.ts';
import { chart, esc, markdownTable, markdownTableHtml, NA, page, withCi, writeReport } from './study-report.ts';
import type { Across } from './study-stats.ts';

const pts = (x: number) => (100 * x).toFixed(1);
const share = (a: Across) => (a.mean === null ? NA : `${Math.round(100 * a.mean)}%`);
const round = (a: Across) => (a.mean === null ? NA : Math.round(a.mean));

/** One line per row: seeds, held-out success, vs base, vs the rows it is paired with (mean of per-seed
 *  paired differences, t interval over seeds), physics and world-model steps, clock, and what the
 *  corrections did ("n/a" where no run wrote it; "(n k)" where k of its runs did). */
export function correctionTable(r: CorrectionReport): string {
  const head = [
    'row',
    'seeds',
    'held-out success',
    'vs base',
    'vs other rows (mean of per-seed paired differences)',
    'the same at equal physics steps / training s',
    'physics steps',
    'world-model steps',
    'train s',
    'debias changed',
    '≥3 rewards',
    'w mean / final',
  ];
  const empty = (name: string, seeds: string | number, what: string) => [
    name,
    seeds,
    what,
    ...head.slice(3).map(() => ''),
  ];
  const rows = r.rows.map((row) => {
    if (!row.seeds.length) return empty(row.name, 0, 'not run yet');
    const n = row.seeds.length;
    const c = row.corrections;
    const ref = row.versus.map((v) => `${withCi(v.per_seed, pts)} vs ${v.row}`).join('; ');
    const equal = row.versus
      .flatMap(({ row: other, at_equal_cost: eq }) =>
        eq
          ? [`${[eq.physics_steps, eq.seconds].map((a) => (a ? withCi(a, pts) : 'beyond')).join(' / ')} vs ${other}`]
          : [],
      )
      .join('; ');
    const w = (a: Across) => withCi({ ...a, low: null, high: null }, (x) => x.toFixed(2), n);
    return [
      row.name,
      n,
      withCi(row.success, pts),
      withCi(row.vs_base, pts),
      ref,
      equal,
      round(row.physics_steps),
      round(row.world_model_steps),
      round(row.train_seconds),
      share(c.debias_changed),
      share(c.three_valued),
      `${w(c.w_mean)} / ${w(c.w_final)}`,
    ];
  });
  return markdownTable(head, [...rows, empty('base (no training)', '-', pts(r.base.success))]);
}

const INTRO = (r: CorrectionReport) =>
  `Held-out success in points, between-seed mean with a 95% t interval over seeds; ${r.config.finalEpisodes} ` +
  `held-out episodes per task and run (tasks: ${esc(r.config.tasks.join(', '))}); ${r.config.iterations} ` +
  'iterations per run. "vs other rows": the mean over seeds of each seed\'s paired difference to the other ' +
  'row\'s run of the same seed; "at equal physics steps / training s": each seed\'s last held-out curve point ' +
  'against the other row\'s curve interpolated at the same physics steps / training seconds ("beyond": past ' +
  'its end). "n/a": no run wrote the metric.';

/** Writes report.json, table.md and index.html into `dir` as one commit. */
export function writeCorrectionReport(dir: string, r: CorrectionReport, command: string) {
  const md = correctionTable(r);
  const present = (xs: (number | null)[]) => xs.flatMap((v, i) => (v === null ? [] : [[i + 1, v] as const]));
  const w = chart(
    "the denoiser's w (anchor-group weight), mean over seeds",
    r.rows
      .filter((x) => x.w_curve.some((v) => v !== null && v !== 1))
      .map((x) => ({ name: x.name, points: present(x.w_curve) })),
    { x: 'iteration', y: 'w' },
  );
  const curves = chart(
    'held-out success during training (rows that evaluate), per seed',
    r.rows.flatMap((x) =>
      x.curves.map((c) => ({
        name: `${x.name} s${c.seed}`,
        points: c.points.map((p) => [p.iteration, p.success] as const),
      })),
    ),
    { x: 'iteration', y: 'success' },
  );
  const html = page(
    'What the world model and each correction add',
    INTRO(r),
    command,
    markdownTableHtml(md) + w + curves,
  );
  return writeReport(dir, { json: r, md, html, command });
}
