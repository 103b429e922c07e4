// node bin/run-ts.mjs scripts/make-leaderboards.ts [--out FILE] — runs the reference programs on every
// AutoResearch task with runner seed 0 and writes src/autoresearch/leaderboards.json (one run per
// line). Deterministic: the runner reads no clock for results; only MLP scores could differ in their
// last bits on a CPU whose ORT kernels round differently.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { checkProgram, type Program, type ProgramInput, ProgramSchema } from '../src/autoresearch/dsl.ts';
import { loadTask } from '../src/autoresearch/data-file.ts';
import { runProgram } from '../src/autoresearch/runner.ts';
import { TASKS } from '../src/autoresearch/tasks.ts';

const SEED = 0;
const OUT = resolve(import.meta.dirname, '../src/autoresearch/leaderboards.json');

/** Sensible, varied configurations (a program that does not fit a task's kind is skipped there). */
const REFERENCE_PROGRAMS: readonly ProgramInput[] = [
  { model: 'mlp', scale: 'standard', params: { hidden: 16, layers: 1, epochs: 100, lr: 0.01 } },
  { model: 'mlp', scale: 'standard', params: { hidden: 64, layers: 2, epochs: 100, lr: 0.01 } },
  { model: 'mlp', scale: 'minmax', params: { hidden: 64, layers: 2, epochs: 20, lr: 0.001 } },
  { model: 'mlp', scale: 'standard', impute: 'median', params: { hidden: 16, layers: 2, epochs: 500, lr: 0.001 } },
  { model: 'mlp', scale: 'minmax', encode: 'ordinal', params: { hidden: 64, layers: 1, epochs: 100, lr: 0.1 } },
  { model: 'tree', params: { depth: 2 } },
  { model: 'tree', encode: 'ordinal', params: { depth: 4 } },
  { model: 'tree', params: { depth: 8 } },
  { model: 'tree', impute: 'median', params: { depth: 16 } },
  { model: 'tree', impute: 'drop', features: 'top3', params: { depth: 4 } },
  { model: 'forest', params: { trees: 10, depth: 4 } },
  { model: 'forest', params: { trees: 50, depth: 8 } },
  { model: 'forest', features: 'top6', encode: 'ordinal', params: { trees: 50, depth: 16 } },
  { model: 'knn', scale: 'standard', params: { k: 1 } },
  { model: 'knn', scale: 'standard', params: { k: 5 } },
  { model: 'knn', scale: 'minmax', features: 'numeric', params: { k: 15 } },
  { model: 'knn', params: { k: 5 } },
  { model: 'knn', scale: 'standard', impute: 'drop', params: { k: 50 } },
  { model: 'bayes', features: 'numeric' },
  { model: 'bayes', scale: 'standard' },
  { model: 'bayes', features: 'top3' },
  { model: 'logistic', scale: 'standard', params: { epochs: 100, lr: 0.01 } },
  { model: 'logistic', scale: 'minmax', params: { epochs: 500, lr: 0.001 } },
  { model: 'logistic', scale: 'standard', features: 'top3', params: { epochs: 20, lr: 0.1 } },
  { model: 'linear' },
  { model: 'linear', scale: 'standard', features: 'top3' },
  { model: 'linear', features: 'numeric', impute: 'median' },
  { model: 'linear', impute: 'drop', encode: 'ordinal' },
  { model: 'linear', scale: 'minmax', features: 'top6' },
];

interface Run {
  program: Program;
  validation: number;
  test: number;
}

async function boardOf(id: string): Promise<Run[]> {
  const task = loadTask(id);
  const runs: Run[] = [];
  for (const input of REFERENCE_PROGRAMS) {
    const program = ProgramSchema.parse(input);
    if (checkProgram(program, task)) continue;
    const r = await runProgram(task, program, SEED);
    runs.push({ program, validation: r.validation, test: r.test });
    process.stderr.write(
      `${id} ${program.model} val ${r.validation.toFixed(4)} test ${r.test.toFixed(4)} ${Math.round(r.trainMs)} ms\n`,
    );
  }
  return runs;
}

/** Stable text: one reference run per line. */
function format(boards: Record<string, { metric: string; higherIsBetter: boolean; runs: Run[] }>): string {
  const tasks = Object.entries(boards).map(([id, b]) => {
    const runs = b.runs.map((r) => `        ${JSON.stringify(r)}`).join(',\n');
    return (
      `    ${JSON.stringify(id)}: {\n` +
      `      "metric": ${JSON.stringify(b.metric)},\n` +
      `      "higherIsBetter": ${b.higherIsBetter},\n` +
      `      "runs": [\n${runs}\n      ]\n    }`
    );
  });
  return `{\n  "version": 1,\n  "seed": ${SEED},\n  "tasks": {\n${tasks.join(',\n')}\n  }\n}\n`;
}

async function main(): Promise<void> {
  const i = process.argv.indexOf('--out');
  const out = i > 0 ? resolve(process.argv[i + 1]) : OUT;
  const boards: Parameters<typeof format>[0] = {};
  for (const t of TASKS)
    boards[t.id] = { metric: t.metric, higherIsBetter: t.higherIsBetter, runs: await boardOf(t.id) };
  writeFileSync(out, format(boards));
  process.stderr.write(`wrote ${out}\n`);
}

await main();
