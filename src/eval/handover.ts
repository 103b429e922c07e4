// The handover sweep: the same evaluation (same seeds, same policies) with the scripted expert acting for
// the first K steps, for each K of a list, and one table of success per family and K. Where two policies
// are compared, the table also has their paired difference at each K.
import type { EvalReport, FamilyResult, PairedDiff } from './report.ts';
import { type EvalOptions, runEval } from './run.ts';

export interface HandoverPoint {
  k: number;
  report: EvalReport;
}

/** One evaluation per K of `ks` (0: no handover); `onPoint` sees each as it lands (to write it). */
export async function runHandoverSweep(
  opts: EvalOptions,
  ks: readonly number[],
  onPoint?: (p: HandoverPoint) => void,
): Promise<HandoverPoint[]> {
  const points: HandoverPoint[] = [];
  for (const k of ks) {
    const point = { k, report: await runEval({ ...opts, handover: k }) };
    onPoint?.(point);
    points.push(point);
  }
  return points;
}

const pct = (x: number) => `${Math.round(100 * x)}%`;
const signed = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`;
const success = (r: FamilyResult | undefined) => (r ? pct(r.success_rate) : '-');
const paired = (d: PairedDiff | undefined) =>
  d ? `${signed(d.diff)} [${signed(d.ci_low)}, ${signed(d.ci_high)}]` : '-';

/** A markdown table: a row per K and policy (and per K, A - B when two were compared), a column per
 *  task family and overall. */
export function handoverTable(points: readonly HandoverPoint[]): string {
  if (points.length === 0) return '';
  const first = points[0].report;
  const columns = [...first.tasks, 'overall'];
  const short = (task: string) => task.slice(task.lastIndexOf('/') + 1);
  const lines = [
    `| K | policy | ${columns.map(short).join(' | ')} |`,
    `|---|---|${columns.map(() => '---|').join('')}`,
  ];
  for (const { k, report } of points) {
    for (const p of report.policies)
      lines.push(`| ${k} | ${p.policy} | ${columns.map((c) => success(p.results[c])).join(' | ')} |`);
    if (report.paired)
      lines.push(`| ${k} | paired A - B, points | ${columns.map((c) => paired(report.paired?.[c])).join(' | ')} |`);
  }
  const n = `${first.episodes_per_task} episodes per family and K`;
  return `${lines.join('\n')}\n\n${first.split} split, ${n}, the same seeds at every K.`;
}
