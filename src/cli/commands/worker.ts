import type { Command } from 'commander';
import { z } from 'zod';
import { remoteTaskResolver } from '../../experiment/index.ts';
import { redactUrl, startWorker } from '../../transport/index.ts';
import { REDIS_URL_HELP, intFlag, parseOptions } from '../options.ts';

const WorkerOptions = z.object({
  redis: z.string().min(1),
  concurrency: intFlag(1).max(64),
  lockDuration: intFlag(100),
  threads: intFlag(1),
  verbose: z.boolean().optional(),
});

export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description(
      'run rollout jobs of any `wmrl train --redis` run (physics anchors, world-model groups, ' +
        'AutoResearch executions) until Ctrl-C',
    )
    .requiredOption('--redis <url>', REDIS_URL_HELP)
    .option('--concurrency <n>', 'jobs at once in this process (one worker process per core is the usual layout)', '1')
    .option(
      '--lock-duration <ms>',
      'a job whose worker stops renewing its lock this long goes back to the queue',
      '10000',
    )
    .option('--threads <n>', 'ORT threads per policy session', '1')
    .option('--verbose', 'a line per job started and done')
    .addHelpText(
      'after',
      '\nCtrl-C stops at once; jobs it held are taken by another worker after --lock-duration (results are unchanged).',
    )
    .action(async (raw) => {
      const o = parseOptions(WorkerOptions, raw);
      const log = (line: string) => console.error(`wmrl worker: ${line}`);
      await startWorker({
        url: o.redis,
        concurrency: o.concurrency,
        lockDurationMs: o.lockDuration,
        threads: o.threads,
        resolveTask: remoteTaskResolver(),
        log: (line) => {
          if (o.verbose || !/: (started|done)/.test(line)) log(line);
        },
      });
      log(`taking jobs from ${redactUrl(o.redis)} (concurrency ${o.concurrency}; Ctrl-C to stop)`);
      await new Promise<never>(() => {}); // until Ctrl-C ends the process (exit 130, cli/interrupt.ts)
    });
}
