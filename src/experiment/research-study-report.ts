// The AutoResearch study through the study report writer: report.json, table.md (what docs quote) and
// index.html (the table and the anchor-reward curve).
import type { ResearchStudyReport } from './research-study.ts';
import { chart, esc, markdownTable, markdownTableHtml, NA, page, withCi, writeReport } from './study-report.ts';
import type { Across } from './study-stats.ts';

const fixed = (d: number) => (x: number) => x.toFixed(d);
const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(3)}`;
const pooledText = (p: { diff: number; ci_low: number; ci_high: number; episodes: number }) =>
  `${signed(p.diff)} [${signed(p.ci_low)}, ${signed(p.ci_high)}] (${p.episodes})`;
const share = (a: Across) => (a.mean === null ? NA : `${Math.round(100 * a.mean)}%`);

/** One line per row: seeds, held-out test position, vs base, vs the rows it is paired with (mean of
 *  per-seed paired differences, t interval over seeds), executions and seconds, and the corrections. */
export function researchStudyTable(r: ResearchStudyReport): string {
  const head = [
    'row',
    'mode',
    'iterations',
    'seeds',
    'held-out test position',
    'vs base',
    'vs base, episodes pooled',
    'vs other rows (mean of per-seed paired differences)',
    'executions',
    'x fewer executions / x less training time than',
    'train s',
    'debias changed',
    'w mean',
  ];
  const rows = r.rows.map((row) => {
    const start = [row.name, row.mode, row.iterations, row.seeds.length];
    if (!row.seeds.length) return [...start, 'not run yet', ...head.slice(5).map(() => '')];
    const n = row.seeds.length;
    const vs = row.versus.filter((v) => v.seeds > 0);
    const ratios = (v: (typeof vs)[number]) =>
      `${withCi(v.fewer_executions, fixed(1))} / ${withCi(v.faster, fixed(1))}`;
    return [
      ...start,
      withCi(row.position, fixed(3)),
      withCi(row.vs_base, signed),
      pooledText(row.vs_base_pooled),
      vs.map((v) => `${withCi(v.per_seed, signed)} vs ${v.row}`).join('; '),
      row.executions.mean === null ? NA : Math.round(row.executions.mean),
      vs.map((v) => `${ratios(v)} vs ${v.row}`).join('; '),
      row.train_seconds.mean === null ? NA : Math.round(row.train_seconds.mean),
      row.mode === 'real' ? '' : share(row.corrections.debias_changed),
      withCi({ ...row.corrections.w_mean, low: null, high: null }, fixed(2), n),
    ];
  });
  const base = ['base (no training)', '-', 0, r.base.seeds.length, withCi(r.base.position, fixed(3))];
  return markdownTable(head, [...rows, [...base, ...head.slice(5).map(() => '')]]);
}

const INTRO = (r: ResearchStudyReport) =>
  'Held-out test leaderboard position (the share of reference runs the submitted run beats on test), ' +
  `between-seed mean with a 95% t interval over seeds; ${r.config.finalEpisodes} held-out episodes per task ` +
  `(${esc(r.heldout.join(', '))}) and run, the same episodes for every row of a seed and its base ` +
  `(${esc(r.config.base)}). "vs other rows": the mean over seeds of each seed's paired difference; "episodes ` +
  'pooled": one paired difference over every episode of every seed (normal interval over episodes, their count ' +
  'in brackets); "x fewer executions / x less training time": the other row\'s executions (training seconds) ' +
  'over this row\'s, per seed, between-seed mean and interval. "n/a": no run wrote the metric.';

/** Writes report.json, table.md and index.html into `dir` as one commit. */
export function writeResearchStudyReport(dir: string, r: ResearchStudyReport, command: string) {
  const md = researchStudyTable(r);
  const series = r.rows.map((x) => ({
    name: x.name,
    points: x.anchor_reward_curve.flatMap((v, i) => (v === null ? [] : [[i + 1, v] as const])),
  }));
  const curve = chart('reward of the executed (anchor) rollouts during training, mean over seeds', series, {
    x: 'iteration',
    y: 'reward',
  });
  const html = page(
    'AutoResearch: real-execution GRPO, WMRL and the corrections',
    INTRO(r),
    command,
    markdownTableHtml(md) + curve,
  );
  return writeReport(dir, { json: r, md, html, command });
}
