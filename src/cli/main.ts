import { Command, CommanderError } from 'commander';
import { InputError } from '../core/errors.ts';
import { fsReason, isPathError } from '../core/input-file.ts';
import { SceneError } from '../scene/index.ts';
import { INTERRUPT_EXIT_CODE, InterruptedError, installInterruptHandler, resetInterrupt } from './interrupt.ts';
import { registerBrew } from './commands/brew.ts';
import { registerCollect } from './commands/collect.ts';
import { registerDagger } from './commands/dagger.ts';
import { registerDemo } from './commands/demo.ts';
import { registerEval } from './commands/eval.ts';
import { registerPretrain } from './commands/pretrain.ts';
import { registerTrain } from './commands/train.ts';
import { registerRender } from './commands/render.ts';
import { registerRollout } from './commands/rollout.ts';
import { registerTasks } from './commands/tasks.ts';
import { registerTeacher } from './commands/teacher.ts';
import { registerWm } from './commands/wm.ts';
import { registerShadow } from './commands/shadow.ts';
import { registerExperiment } from './commands/experiment.ts';
import { registerStart } from './commands/start.ts';
import { registerServe } from './commands/serve.ts';
import { registerResearch } from './commands/research.ts';
import { registerWorker } from './commands/worker.ts';
import { registerVersion } from './commands/version.ts';

export function buildProgram(): Command {
  const program = new Command('wmrl')
    .description('world-model RL post-training for vision-language-action robot policies')
    .version('0.1.0')
    .showHelpAfterError()
    .exitOverride();
  registerDemo(program);
  registerTasks(program);
  registerRollout(program);
  registerRender(program);
  registerWm(program);
  registerShadow(program);
  registerCollect(program);
  registerPretrain(program);
  registerDagger(program);
  registerTrain(program);
  registerBrew(program);
  registerExperiment(program);
  registerStart(program);
  registerServe(program);
  registerResearch(program);
  registerEval(program);
  registerTeacher(program);
  registerWorker(program);
  registerVersion(program);
  return program;
}

/** The message and exit code of a failed command: 2 for bad input (flags, files, data: InputError,
 *  SceneError, or a path that is missing or of the wrong kind), 1 for internal failures. */
export function failure(err: unknown): { message: string; code: 1 | 2 } {
  if (err instanceof InputError || err instanceof SceneError) return { message: err.message, code: 2 };
  if (isPathError(err)) return { message: `${err.path}: ${fsReason(err)}`, code: 2 };
  return { message: err instanceof Error ? err.message : String(err), code: 1 };
}

/** CLI entry: exit code 0 on success, 2 on bad usage or input files, 130 on Ctrl-C, 1 on other failures. */
export async function main(argv: string[]): Promise<void> {
  installInterruptHandler();
  resetInterrupt(); // each command starts with no Ctrl-C pending (tests run several in one process)
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
    if (err instanceof InterruptedError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(INTERRUPT_EXIT_CODE);
    }
    const { message, code } = failure(err);
    process.stderr.write(`error: ${message}\n`);
    if (code === 1 && process.env.WMRL_DEBUG) process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(code);
  }
}
