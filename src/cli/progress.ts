import cliProgress from 'cli-progress';
import { z } from 'zod';
import type { TrainMetrics } from '../core/metrics.ts';
import { onInterrupt } from './interrupt.ts';

export interface ProgressBar {
  /** `n` more done; `extra` is shown after the counts (kept until the next one); `mark` makes a plain
   *  line now (an evaluation, say) when there is no terminal. */
  tick(n?: number, extra?: string, mark?: boolean): void;
  stop(): void;
}

export interface ProgressOptions {
  /** Neither the bar nor plain lines (`--quiet`). */
  quiet?: boolean;
  /** Without a terminal: seconds between plain lines at most (default 10); the first and the last
   *  tick and every marked one always print. */
  progressEvery?: number;
  stream?: NodeJS.WritableStream & { isTTY?: boolean };
}

/** The flags every long command takes (addProgressFlags): ProgressOptions as parsed flags. */
export const ProgressFlags = z.object({
  quiet: z.boolean().optional(),
  progressEvery: z.coerce.number().min(0, 'must be >= 0').optional(),
});

export function addProgressFlags<C extends { option(flags: string, description: string): C }>(cmd: C): C {
  return cmd
    .option('--quiet', 'no progress bar on a terminal, no progress lines in a log')
    .option(
      '--progress-every <s>',
      'without a terminal: seconds between progress lines at most (default 10; 0: every step)',
    );
}

/** Progress on stderr (stdout stays clean for --json): a live bar on a terminal, plain lines in a log
 *  (nohup, a cluster job, CI), nothing with `quiet`. Ctrl-C stops the bar, which shows the cursor
 *  again and turns line wrap back on. */
export function progressBar(label: string, total: number, o: ProgressOptions = {}): ProgressBar {
  const stream = o.stream ?? process.stderr;
  if (o.quiet) return { tick() {}, stop() {} };
  if (!stream.isTTY) return progressLines(label, total, stream, o.progressEvery ?? 10);
  const bar = terminalBar(
    stream,
    `${label} [{bar}] {value}/{total} {percentage}% | eta {eta_formatted} | {extra}`,
    total,
    {
      extra: '',
    },
  );
  return { tick: (n = 1, extra = '') => bar.increment(n, { extra }), stop: bar.stop };
}

/** A cli-progress bar on a terminal, stopped once by stop() or Ctrl-C; later updates are ignored. */
function terminalBar(stream: NodeJS.WritableStream, format: string, total: number, payload: object) {
  const bar = new cliProgress.SingleBar(
    { format, stream, hideCursor: true, clearOnComplete: false },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, payload);
  let active = true;
  const stop = () => {
    if (!active) return;
    active = false;
    unregister();
    bar.stop();
  };
  const unregister = onInterrupt(stop);
  return {
    increment: (n: number, p: object) => {
      if (active) bar.increment(n, p);
    },
    update: (value: number, p: object) => {
      if (active) bar.update(value, p);
    },
    stop,
  };
}

/** h:mm:ss (m:ss under an hour); '?' before there is a rate. */
export function clockText(s: number): string {
  if (!Number.isFinite(s)) return '?';
  const t = Math.round(s);
  const [h, m, sec] = [Math.floor(t / 3600), Math.floor((t % 3600) / 60), t % 60];
  const two = (x: number) => String(x).padStart(2, '0');
  return h ? `${h}:${two(m)}:${two(sec)}` : `${m}:${two(sec)}`;
}

function progressLines(label: string, total: number, stream: NodeJS.WritableStream, everyS: number): ProgressBar {
  const t0 = performance.now();
  let done = 0;
  let first: { done: number; s: number } | null = null;
  let printedAt = Number.NEGATIVE_INFINITY;
  let printed = -1;
  let extra = '';
  const line = (s: number) => {
    // the rate from the first tick on (a resumed run's first tick carries the work done before it)
    const rate = first && s > first.s ? (done - first.done) / (s - first.s) : first?.done === 1 ? 1 / s : Number.NaN;
    const pct = total > 0 ? Math.floor((100 * done) / total) : 100;
    const rest = done >= total ? 0 : rate > 0 ? (total - done) / rate : Number.NaN;
    const rateText = !(rate > 0) ? '?/s' : rate >= 1 ? `${rate.toFixed(2)}/s` : `${(1 / rate).toFixed(1)} s each`;
    stream.write(
      `${label} ${done}/${total} (${pct}%) | ${rateText} | elapsed ${clockText(s)} | left ${clockText(rest)}` +
        `${extra ? ` | ${extra}` : ''}\n`,
    );
    printedAt = s;
    printed = done;
  };
  return {
    tick(n = 1, text = '', mark = false) {
      done += n;
      if (text) extra = text;
      const s = (performance.now() - t0) / 1000;
      first ??= { done, s };
      if (printed < 0 || done >= total || mark || s - printedAt >= everyS) line(s);
    },
    stop() {
      if (printed !== done) line((performance.now() - t0) / 1000);
    },
  };
}

/** A training run's progress text per iteration: the anchors' success smoothed (EMA 0.9) and the last
 *  held-out success with its 95% interval (the one before training until the first during it); `mark`
 *  on iterations that evaluated. */
export function trainProgressText(): (m: Partial<TrainMetrics>) => { text: string; mark: boolean } {
  let smoothed: number | null = null;
  let heldout = '';
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  return (m) => {
    const s = m['success/anchor'];
    if (typeof s === 'number') smoothed = smoothed === null ? s : 0.9 * smoothed + 0.1 * s;
    const e = m['eval/success'];
    const e0 = m['eval_initial/success'];
    if (e !== undefined)
      heldout = `held-out ${pct(e)} [${pct(m['eval/ci_low'] ?? e)}, ${pct(m['eval/ci_high'] ?? e)}] at ${m.iteration}`;
    else if (e0 !== undefined && !heldout)
      heldout = `held-out ${pct(e0)} [${pct(m['eval_initial/ci_low'] ?? e0)}, ${pct(m['eval_initial/ci_high'] ?? e0)}] at 0`;
    const anchor = smoothed === null ? '' : `anchor success ${smoothed.toFixed(2)} (EMA)`;
    return { text: [anchor, heldout].filter(Boolean).join(' | '), mark: e !== undefined };
  };
}

type BudgetTick = (m: Partial<TrainMetrics> & { iteration: number }, elapsedS: number) => void;

/** Progress of training that a wall-clock budget stops (npm start), not an iteration count: iterations
 *  done, iterations per second, elapsed, time left of the budget, then trainProgressText's text. A bar
 *  over the budget on a terminal; plain lines in a log (the first, evaluations, one per interval, the
 *  last). */
export function budgetProgress(budgetS: number, o: ProgressOptions = {}): { tick: BudgetTick; stop(): void } {
  const stream = o.stream ?? process.stderr;
  const text = trainProgressText();
  if (o.quiet) return { tick() {}, stop() {} };
  const fields = (iterations: number, elapsedS: number, extra: string) => ({
    done: `${iterations} iteration${iterations === 1 ? '' : 's'}`,
    rate: `${(iterations / Math.max(elapsedS, 1e-9)).toFixed(2)} it/s`,
    elapsed: clockText(elapsedS),
    left: clockText(Math.max(0, budgetS - elapsedS)),
    extra,
  });
  if (stream.isTTY) {
    const format = 'train [{bar}] {done} | {rate} | elapsed {elapsed} | left {left} | {extra}';
    const bar = terminalBar(stream, format, Math.max(1, budgetS), fields(0, 0, ''));
    return {
      tick: (m, elapsedS) => bar.update(Math.min(elapsedS, budgetS), fields(m.iteration, elapsedS, text(m).text)),
      stop: bar.stop,
    };
  }
  const show = (f: ReturnType<typeof fields>) =>
    `train ${f.done} | ${f.rate} | elapsed ${f.elapsed} | left ${f.left}${f.extra ? ` | ${f.extra}` : ''}\n`;
  const everyS = o.progressEvery ?? 10;
  let last: ReturnType<typeof fields> | null = null;
  let printedAt = Number.NEGATIVE_INFINITY;
  let printed = true;
  return {
    tick(m, elapsedS) {
      const t = text(m);
      const first = last === null;
      last = fields(m.iteration, elapsedS, t.text);
      printed = first || t.mark || elapsedS - printedAt >= everyS;
      if (!printed) return;
      stream.write(show(last));
      printedAt = elapsedS;
    },
    stop() {
      if (last && !printed) stream.write(show(last));
      printed = true;
    },
  };
}
