// An AutoResearch episode state as a flat row: what anchors record, branches start from and the
// outcome model's refresh reads.
import { PROGRAM_SLOTS, parseTokens, programText } from './dsl.ts';
import type { ResearchState } from './env.ts';
import { STATUSES, feedbackLine } from './proposal.ts';
import type { TaskData } from './tasks.ts';

/** Row: turn, best ladder value, best position, last status index (-1: none), last position, last
 *  validation score, then the last program's tokens. */
export const ROW_HEAD = 6;
export const ROW_SIZE = ROW_HEAD + PROGRAM_SLOTS;

export function researchRow(s: ResearchState): number[] {
  const last = s.last;
  return [
    s.turn,
    s.best,
    s.bestPosition,
    last ? STATUSES.indexOf(last.status) : -1,
    last?.position ?? 0,
    last?.validation ?? 0,
    ...(s.lastTokens ?? new Int32Array(PROGRAM_SLOTS)),
  ];
}

export function stateFromRow(task: TaskData, seed: number, row: ArrayLike<number>): ResearchState {
  if (row.length !== ROW_SIZE) throw new RangeError(`a research row has ${row.length} values, expected ${ROW_SIZE}`);
  const tokens = Int32Array.from({ length: PROGRAM_SLOTS }, (_, k) => row[ROW_HEAD + k]);
  const status = row[3] >= 0 ? STATUSES[row[3]] : null;
  const last = status && {
    status,
    position: status === 'valid' ? row[4] : undefined,
    validation: status === 'valid' ? row[5] : undefined,
    wallMs: 0,
    feedback: '',
  };
  if (last)
    last.feedback = feedbackLine(
      programText(tokens),
      last,
      task.spec.metric,
      parseTokens(tokens).ok ? '' : 'does not parse',
    );
  return { seed, turn: row[0], best: row[1], bestPosition: row[2], last, lastTokens: status ? tokens : undefined };
}
