// The trusted child entry the executor runs in its sandbox: reads { task, program, seed } as JSON from
// stdin (or from the file named by the first argument), runs the program and prints ONE JSON line
// { validation, test, trainMs } on stdout. Exit 2: bad input (JSON, fields, unknown task, a program
// that does not fit the task); exit 1: the program failed at run time. The error goes to stderr.
// In the sandbox the nn runtime is onnxruntime-web (sandbox-build.ts maps "#ort"): no native addon loads.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { checkProgram, ProgramSchema } from './dsl.ts';
import { loadTask } from './data-file.ts';
import type { TaskData } from './tasks.ts';
import { runProgram } from './runner.ts';

const ChildInputSchema = z.object({ task: z.string(), program: ProgramSchema, seed: z.number().int().safe() }).strict();

async function readInput(): Promise<string> {
  const file = process.argv[2] ?? process.env.WMRL_INPUT; // the executor names the input file there
  if (file) return readFileSync(file, 'utf8');
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseInput(text: string): z.output<typeof ChildInputSchema> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new InputError(`input is not JSON: ${(e as Error).message}`);
  }
  const r = ChildInputSchema.safeParse(json);
  if (!r.success)
    throw new InputError(
      `bad input: ${r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
    );
  return r.data;
}

async function main(): Promise<void> {
  const input = parseInput(await readInput());
  let task: TaskData;
  try {
    task = loadTask(input.task);
  } catch (e) {
    throw new InputError((e as Error).message);
  }
  const why = checkProgram(input.program, task);
  if (why) throw new InputError(`invalid program for ${input.task}: ${why}`);
  const r = await runProgram(task, input.program, input.seed);
  const line = JSON.stringify({ validation: r.validation, test: r.test, trainMs: r.trainMs });
  process.stdout.write(`${line}\n`, () => process.exit(0));
}

main().catch((e: unknown) => {
  const err = e instanceof Error ? e : new Error(String(e));
  process.stderr.write(`${err.name}: ${err.message}\n`, () => process.exit(err instanceof InputError ? 2 : 1));
});
