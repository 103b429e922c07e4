// The run shown above and below the 3D view: its header (run:info) and its training curves, with the
// training runs ticked under "Compare curves" overlaid in the Runs tab. Metrics arrive incrementally: each
// run's rows are kept with the cursor where they end, and a request brings only the lines after it.
import {
  type LiveKind,
  MetricsChunkSchema,
  type MetricsCursor,
  type MetricsRow,
  type RunInfo,
  RunInfoSchema,
  type RunSummary,
} from '../../src/protocol/index.ts';
import { type ViewerSocket, request } from './connection.ts';
import { type CurveOptions, drawCurves, type RunRows } from './curves.ts';
import { headerText, renderHeader } from './run-header.ts';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

/** What tests read: the lines drawn, the runs and panels they belong to. */
export interface CurveState {
  curveSeries: number;
  curveRuns: string[];
  curvePanels: string[];
}

export class RunView {
  private readonly seen = new Map<string, { rows: MetricsRow[]; next?: MetricsCursor }>();
  /** One metrics request at a time (the server answers one per client): each call waits for the last. */
  private queue: Promise<unknown> = Promise.resolve();
  private runs: RunSummary[] = [];
  private readonly compared = new Set<string>();
  /** The run the header and curves follow; `live` when it is the Live tab's run. */
  private shown: { run: string | null; live?: LiveKind } = { run: null };
  private info: RunInfo | null = null;
  private drawn: RunRows[] = [];
  /** Bumped by every refresh: an answer that arrives after a newer refresh began is dropped. */
  private generation = 0;

  constructor(
    private readonly socket: ViewerSocket,
    private readonly state: CurveState,
    private readonly onError: (message: string) => void,
  ) {
    const smoothing = $<HTMLInputElement>('smoothing');
    smoothing.oninput = () => {
      $('smoothing-value').textContent = Number(smoothing.value).toFixed(2);
      this.redraw();
    };
    $<HTMLSelectElement>('x-axis').onchange = () => this.redraw();
    let pending = false;
    new ResizeObserver(() => {
      if (pending) return;
      pending = true;
      requestAnimationFrame(() => {
        pending = false;
        this.redraw();
      });
    }).observe($('panels'));
  }

  /** Whether the run shown is being written now (its header and curves are worth polling). */
  get running(): boolean {
    return this.info?.state === 'running';
  }

  /** The training runs that can be compared: one checkbox each. */
  setRuns(runs: RunSummary[]): void {
    this.runs = runs;
    const training = runs.filter((r) => r.metrics);
    for (const id of [...this.compared]) if (!training.some((r) => r.id === id)) this.compared.delete(id);
    $('compare-box').hidden = training.length < 2;
    $('compare').replaceChildren(
      ...training.map((r) => {
        const label = document.createElement('label');
        const box = label.appendChild(document.createElement('input'));
        box.type = 'checkbox';
        box.value = r.id;
        box.onchange = () => {
          if (box.checked) this.compared.add(r.id);
          else this.compared.delete(r.id);
          void this.refresh();
        };
        label.append(r.id);
        return label;
      }),
    );
    this.syncBoxes();
  }

  /** Follows `run` (null: none); `live` says it is the Live tab's run and what writes it. */
  show(run: string | null, live?: LiveKind): Promise<void> {
    this.shown = { run, live };
    this.info = null;
    this.syncBoxes();
    return this.refresh();
  }

  /** The header and the curves again, with the metrics lines written since the last time. */
  async refresh(): Promise<void> {
    const generation = ++this.generation;
    const { run, live } = this.shown;
    const header = $('run-header');
    if (run === null) {
      headerText(header, live ? `${live} live: waiting for its run folder` : 'no run selected');
      return this.draw([]);
    }
    let info: RunInfo | null = null;
    try {
      info = await request(this.socket, 'run:info', RunInfoSchema, { run });
    } catch (err) {
      if (generation !== this.generation) return;
      headerText(header, live ? `${run} · ${live} live: starting (${(err as Error).message})` : (err as Error).message);
    }
    if (generation !== this.generation) return;
    this.info = info;
    if (info) renderHeader(header, info, live && `${live} live`);
    const ids = [
      ...(info?.kind === 'training' ? [run] : []),
      ...(live ? [] : this.runs.filter((r) => this.compared.has(r.id) && r.id !== run).map((r) => r.id)),
    ];
    try {
      const rows: RunRows[] = [];
      for (const id of ids) rows.push({ run: id, rows: await this.metricsOf(id) });
      if (generation !== this.generation) return;
      this.draw(rows, info);
    } catch (err) {
      this.onError((err as Error).message);
    }
  }

  /** The last runs drawn again, under the current smoothing and x axis. */
  redraw(): void {
    this.draw(this.drawn, this.info);
  }

  private options(): CurveOptions {
    return {
      smoothing: Math.min(0.99, Math.max(0, Number($<HTMLInputElement>('smoothing').value) || 0)),
      x: $<HTMLSelectElement>('x-axis').value === 'seconds' ? 'seconds' : 'iteration',
    };
  }

  private draw(runs: RunRows[], info: RunInfo | null = null): void {
    this.drawn = runs;
    const withRows = runs.filter((r) => r.rows.length > 0);
    const { series, panels } = drawCurves($('panels'), withRows, this.options());
    Object.assign(this.state, { curveSeries: series, curveRuns: withRows.map((r) => r.run), curvePanels: panels });
    $('curves-note').textContent =
      info?.kind === 'rollout'
        ? withRows.length
          ? 'the selected run is a rollout folder (no curves of its own): the ticked runs'
          : 'a rollout folder: no training curves'
        : withRows.length === 0
          ? info?.kind === 'training'
            ? 'no iteration written yet'
            : ''
          : withRows.length > 1
            ? `${withRows.length} runs overlaid`
            : '';
  }

  /** The selected run's box is ticked and fixed (its curves always show); the others as the user left them. */
  private syncBoxes(): void {
    for (const box of document.querySelectorAll<HTMLInputElement>('#compare input')) {
      const selected = !this.shown.live && box.value === this.shown.run;
      box.checked = selected || this.compared.has(box.value);
      box.disabled = selected;
    }
  }

  private metricsOf(run: string): Promise<MetricsRow[]> {
    const next = this.queue.then(() => this.fetchMetrics(run));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async fetchMetrics(run: string): Promise<MetricsRow[]> {
    const seen = this.seen.get(run) ?? { rows: [] };
    for (let more = true; more; ) {
      const chunk = await request(this.socket, 'metrics:get', MetricsChunkSchema, { run, after: seen.next });
      if (chunk.restart) seen.rows = [];
      seen.rows.push(...chunk.rows);
      seen.next = chunk.next;
      more = chunk.more;
    }
    this.seen.set(run, seen);
    return seen.rows;
  }
}

/** The run list's label: what the folder is, and which one is being written. */
export function runLabel(r: RunSummary): string {
  return `${r.id}${r.live ? ' (live)' : ''} · ${r.metrics ? 'training' : `${r.episodes} episodes`}`;
}
