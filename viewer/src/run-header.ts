// The header of the run shown: for a training run its mode, tasks, iteration i/N, the training clock, the
// time left while it runs, its state and the last held-out success with its 95% interval; for a rollout
// folder what made it and its episodes. Each part is a labelled field (data-field) that tests read.
import type { RunInfo } from '../../src/protocol/index.ts';
import { formatSeconds } from './plot.ts';

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const task = (id: string) => id.replace(/^tabletop\//, '');

function field(name: string, label: string, value: string, title?: string): HTMLElement {
  const span = document.createElement('span');
  span.className = 'field';
  if (label) span.appendChild(document.createElement('small')).textContent = `${label} `;
  const b = span.appendChild(document.createElement('b'));
  b.dataset.field = name;
  b.textContent = value;
  if (title) span.title = title;
  return span;
}

function stateChip(info: RunInfo): HTMLElement {
  const chip = field('state', '', info.state, info.note || undefined);
  chip.classList.add('state', `state-${info.state}`);
  return chip;
}

/** Fills `root` with the header of `info`; `live` prefixes what the Live tab shows ("training live"). */
export function renderHeader(root: HTMLElement, info: RunInfo, live?: string): void {
  const parts: HTMLElement[] = [];
  const name = document.createElement('strong');
  name.textContent = info.run;
  name.dataset.field = 'run';
  parts.push(name, field('kind', '', live ?? info.kind));
  if (info.kind === 'training') {
    if (info.mode) parts.push(field('mode', 'mode', info.mode));
    if (info.tasks.length) parts.push(field('tasks', 'tasks', info.tasks.map(task).join(', ')));
    if (info.budgetS !== null)
      parts.push(
        field(
          'iteration',
          'iteration',
          `${info.iteration}`,
          `trains for ${formatSeconds(info.budgetS)}, not to a count`,
        ),
      );
    else parts.push(field('iteration', 'iteration', `${info.iteration}/${info.iterations ?? '?'}`));
    const off = info.offClockS > 0 ? `; +${formatSeconds(info.offClockS)} evaluation, off the clock` : '';
    parts.push(
      field(
        'elapsed',
        'elapsed',
        formatSeconds(info.clockS),
        `training clock: physics, world model, updates and refresh, summed over the iterations${off}`,
      ),
    );
    if (info.leftS !== null)
      parts.push(
        field(
          'left',
          'left ≈',
          formatSeconds(info.leftS),
          info.budgetS !== null ? 'of its time budget' : 'at the mean seconds per iteration so far',
        ),
      );
    parts.push(stateChip(info));
    const h = info.heldOut ?? info.initial;
    parts.push(
      h
        ? field(
            'heldout',
            info.heldOut ? `held-out (it ${h.iteration})` : 'held-out (before training)',
            `${pct(h.success)} [${pct(h.ciLow)}, ${pct(h.ciHigh)}]`,
            `${h.episodes} episodes, Wilson 95% interval`,
          )
        : field('heldout', 'held-out', 'not evaluated yet'),
    );
  } else {
    if (info.tasks.length) parts.push(field('tasks', 'tasks', info.tasks.map(task).join(', ')));
    parts.push(field('episodes', 'episodes', `${info.successes}/${info.episodes} succeeded`));
    parts.push(stateChip(info));
    if (info.command) parts.push(field('command', 'made by', info.command));
  }
  root.replaceChildren(...parts);
}

/** A header with only a line of text (nothing to show yet, or why not). */
export function headerText(root: HTMLElement, text: string): void {
  const span = document.createElement('span');
  span.className = 'field';
  span.textContent = text;
  root.replaceChildren(span);
}
