// One proposal from tokens to a scored outcome: parse (malformed), check against the task (invalid),
// run in the sandbox (runtime error | no result | valid), place the validation score on the task's
// leaderboard, and the paper's reward ladder. The runner is fixed and trusted; the agent gives tokens.
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { checkProgram, parseTokens, programText, type Program } from './dsl.ts';
import type { ExecJob, ExecLimits, ExecReport, Executor } from './executor.ts';
import { leaderboardPosition } from './leaderboard.ts';
import type { TaskData } from './tasks.ts';

export const STATUSES = ['malformed', 'invalid', 'runtime_error', 'no_result', 'valid'] as const;
export type Status = (typeof STATUSES)[number];

/** Whether a proposal with this status ran in the sandbox (malformed and invalid ones are parsed and
 *  checked for free). */
export const wasExecuted = (status: string): boolean => status !== 'malformed' && status !== 'invalid';

export interface Outcome {
  status: Status;
  /** Validation and test scores in the task's metric (valid runs only). */
  validation?: number;
  test?: number;
  /** Share of the leaderboard's reference runs the validation score beats, in [0, 1] (valid runs only). */
  position?: number;
  /** Test-score position (valid runs only; reported, never trained on). */
  testPosition?: number;
  /** One line for the agent: the program, what happened and why. */
  feedback: string;
  wallMs: number;
}

/** The paper's ladder: malformed 0 (a program that cannot apply counts as malformed), runtime error
 *  0.1, no result 0.2, valid 0.5 + 0.5 x leaderboard position. */
export function ladder(status: Status, position = 0): number {
  if (status === 'valid') return 0.5 + 0.5 * position;
  return status === 'no_result' ? 0.2 : status === 'runtime_error' ? 0.1 : 0;
}

/** CPU seconds a run may use, by the program's budget. A CPU-time limit (not wall-clock) keeps which
 *  runs finish nearly independent of other load on the machine; the wall-clock limit is a backstop. */
export const BUDGET_CPU_S: Record<Program['budget'], number> = { small: 4, medium: 10, large: 25 };
/** Runs again after the wall-clock backstop stopped one (a busy machine, not the program) before giving up. */
const WALL_RETRIES = 2;

const RUN_CHILD = fileURLToPath(new URL('./run-child.ts', import.meta.url));
const ChildResultSchema = z.object({ validation: z.number(), test: z.number(), trainMs: z.number() });

export function feedbackLine(
  text: string,
  o: Pick<Outcome, 'status' | 'validation' | 'position'>,
  metric: string,
  reason = '',
): string {
  if (o.status === 'valid')
    return (
      `${text} -> valid, validation ${metric} ${o.validation!.toFixed(3)}, beats ` +
      `${Math.round(100 * o.position!)}% of the leaderboard`
    );
  return `${text} -> ${o.status.replace('_', ' ')}${reason ? `: ${reason}` : ''}`;
}

export async function runProposal(
  executor: Executor,
  task: TaskData,
  tokens: ArrayLike<number>,
  seed: number,
  limits: Partial<ExecLimits> = {},
): Promise<Outcome> {
  const text = programText(tokens);
  const done = (status: Status, reason: string, wallMs = 0, extra: Partial<Outcome> = {}): Outcome => ({
    status,
    ...extra,
    feedback: feedbackLine(text, { status, ...extra }, task.spec.metric, reason),
    wallMs,
  });
  const parsed = parseTokens(tokens);
  if (!parsed.ok) return done('malformed', parsed.error);
  const why = checkProgram(parsed.program, { kind: task.kind, trainRows: task.trainRows });
  if (why) return done('invalid', why);
  const report = await execute(executor, {
    script: RUN_CHILD,
    input: { task: task.spec.id, program: parsed.program, seed },
    limits: { cpuS: BUDGET_CPU_S[parsed.program.budget], ...limits },
  });
  if (report.outcome === 'error' || report.outcome === 'denied')
    return done('runtime_error', lastLine(report.stderrTail), report.wallMs);
  const result = ChildResultSchema.safeParse(report.result);
  if (report.outcome !== 'ok' || !result.success || !Number.isFinite(result.data.validation))
    return done(
      'no_result',
      report.outcome === 'ok' ? 'no score reported' : `stopped: ${report.outcome}`,
      report.wallMs,
    );
  const { validation, test } = result.data;
  return done('valid', '', report.wallMs, {
    validation,
    test,
    position: leaderboardPosition(task.spec.id, validation, 'validation'),
    testPosition: leaderboardPosition(task.spec.id, test, 'test'),
  });
}

/** Runs a job; a run the wall-clock backstop stopped says nothing about the program, so it runs again, and
 *  after WALL_RETRIES more such stops this throws (an internal failure) instead of recording an outcome. */
async function execute(executor: Executor, job: ExecJob): Promise<ExecReport> {
  for (let attempt = 0; ; attempt++) {
    const report = await executor.run(job);
    if (report.outcome !== 'wall') return report;
    if (attempt === WALL_RETRIES) {
      const used = report.cpuAtKillS === undefined ? '' : ` after ${report.cpuAtKillS.toFixed(1)} CPU s`;
      throw new Error(
        `executor: the wall-clock backstop (${report.limits.wallMs / 1000} s) stopped ${JSON.stringify(job.input)} ` +
          `${attempt + 1} times${used}, before its CPU-time limit (${report.limits.cpuS} s): the machine is too ` +
          'busy to run it; no outcome was recorded',
      );
    }
  }
}

function lastLine(text: string): string {
  const lines = text
    .trim()
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('    at '));
  return (lines.at(-1) ?? '').slice(0, 160);
}

/** Real execution as the env's outcome source: every proposal runs in the sandbox (the executor's
 *  concurrency bounds how many at once). `onRun` sees each executed outcome (logs, counters). */
export function executorSource(executor: Executor, onRun?: (task: TaskData, tokens: Int32Array, o: Outcome) => void) {
  return {
    source: 'executor' as const,
    outcomes: (task: TaskData, proposals: { tokens: Int32Array; seed: number }[]) =>
      Promise.all(
        proposals.map(async (p) => {
          const outcome = await runProposal(executor, task, p.tokens, p.seed);
          onRun?.(task, p.tokens, outcome);
          return { outcome };
        }),
      ),
  };
}
