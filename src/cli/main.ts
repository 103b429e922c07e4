import { Command, CommanderError } from 'commander';
import { InputError } from '../core/errors.ts';
import { SceneError } from '../scene/index.ts';
import { registerCollect } from './commands/collect.ts';
import { registerDemo } from './commands/demo.ts';
import { registerEval } from './commands/eval.ts';
import { registerPretrain } from './commands/pretrain.ts';
import { registerRender } from './commands/render.ts';
import { registerRollout } from './commands/rollout.ts';
import { registerTasks } from './commands/tasks.ts';
import { registerWm } from './commands/wm.ts';
import { registerShadow } from './commands/shadow.ts';

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
  registerEval(program);
  return program;
}

/** CLI entry: exit code 0 on success, 2 on bad usage or input files, 1 on other failures. */
export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
    const usage = err instanceof InputError || err instanceof SceneError;
    process.stderr.write(`error: ${(err as Error).message}\n`);
    if (!usage && process.env.WMRL_DEBUG) process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(usage ? 2 : 1);
  }
}
