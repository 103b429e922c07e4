import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import {
  Executor,
  ProgramSchema,
  TASKS,
  VOCAB,
  loadTask,
  programTokens,
  runProposal,
  taskSpec,
} from '../../autoresearch/index.ts';
import { InputError } from '../../core/errors.ts';
import { HELDOUT_RESEARCH_TASKS, researchEval } from '../../experiment/index.ts';
import { loadPolicy } from '../../policy/model.ts';
import { intFlag, parseOptions, printJson, requireFile, seedFlag } from '../options.ts';

/** A program file: a JSON Program ({ "model": "forest", "params": { "trees": 50 } }) or DSL words
 *  ("model:forest trees:50 end"). Words outside the vocabulary are an input error naming them; a word
 *  sequence that does not parse is a program like any other (scored "malformed"). */
function readProgram(path: string): Int32Array {
  const text = readFileSync(path, 'utf8').trim();
  if (text.startsWith('{')) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      throw new InputError(`--program: ${path} is not valid JSON (${(e as Error).message})`);
    }
    const p = ProgramSchema.safeParse(json);
    if (!p.success)
      throw new InputError(
        `--program: ${path}: ${p.error.issues.map((i) => `${i.path.join('.') || 'program'}: ${i.message}`).join('; ')}`,
      );
    return programTokens(p.data);
  }
  const words = text.split(/\s+/);
  const unknown = words.filter((w) => !VOCAB.includes(w));
  if (unknown.length)
    throw new InputError(
      `--program: ${path}: not DSL words: ${unknown.join(', ')} (the vocabulary: ${VOCAB.join(' ')})`,
    );
  return Int32Array.from(words, (w) => VOCAB.indexOf(w));
}

const taskFlag = z.enum(TASKS.map((t) => t.id) as [string, ...string[]]);

export function registerResearch(program: Command): void {
  const research = program
    .command('research')
    .description('AutoResearch: ML experiment proposals on real tabular tasks, run in a sandbox');
  research
    .command('tasks')
    .description('the AutoResearch tasks: dataset, kind, metric, rows, held out or not')
    .option('--json', 'print one JSON object on stdout')
    .action((raw) => {
      const rows = TASKS.map((t) => {
        const d = loadTask(t.id);
        return {
          id: t.id,
          title: t.title,
          kind: t.kind,
          metric: t.metric,
          higherIsBetter: t.higherIsBetter,
          rows: d.y.length,
          features: d.features.length,
          heldout: t.heldout,
        };
      });
      if (raw.json) return printJson({ tasks: rows });
      for (const r of rows)
        console.log(
          `${r.id.padEnd(18)} ${r.kind.padEnd(15)} ` +
            `${`${r.metric} (${r.higherIsBetter ? 'higher' : 'lower'} is better)`.padEnd(30)} ` +
            `${String(r.rows).padStart(5)} rows ${String(r.features).padStart(3)} features` +
            `${r.heldout ? '  held out' : ''}`,
        );
    });
  research
    .command('exec')
    .description(
      'run one proposal in the sandbox: status (malformed | invalid | runtime_error | no_result | valid), ' +
        'metric, leaderboard position, feedback',
    )
    .requiredOption('--task <id>', `task id (${TASKS.map((t) => t.id).join(', ')})`)
    .requiredOption('--program <file>', 'a JSON program or DSL words ("model:forest trees:50 end")')
    .option('--seed <n>', 'the run seed (forest and MLP draws)', '0')
    .option('--json', 'print one JSON object on stdout')
    .action(async (raw) => {
      const o = parseOptions(
        z.object({ task: taskFlag, program: z.string(), seed: seedFlag, json: z.boolean().optional() }),
        raw,
      );
      requireFile('--program', o.program, 'program file');
      const tokens = readProgram(o.program);
      const outcome = await runProposal(new Executor({ concurrency: 1 }), loadTask(o.task), tokens, o.seed);
      if (o.json) return printJson({ task: o.task, ...outcome });
      const spec = taskSpec(o.task);
      console.log(outcome.feedback);
      if (outcome.status === 'valid')
        console.log(
          `test ${spec.metric} ${outcome.test!.toFixed(4)} ` +
            `(leaderboard position ${outcome.testPosition!.toFixed(3)}); ${outcome.wallMs.toFixed(0)} ms`,
        );
    });
  research
    .command('eval')
    .description(
      'an agent policy on the held-out tasks in real execution: ' +
        'mean test-score leaderboard position of the submitted run, 95% interval',
    )
    .option('--policy <file>', 'agent policy file', 'models/agent-base.onnx')
    .option('--task <ids>', `tasks, comma-separated (default the held-out ones: ${HELDOUT_RESEARCH_TASKS.join(',')})`)
    .option('--episodes <n>', 'episodes per task (evaluation seeds, disjoint from training)', '8')
    .option('--seed <n>', 'sampling seed', '0')
    .option('--json', 'print one JSON object on stdout')
    .action(async (raw) => {
      const o = parseOptions(
        z.object({
          policy: z.string(),
          task: z.string().optional(),
          episodes: intFlag(1),
          seed: seedFlag,
          json: z.boolean().optional(),
        }),
        raw,
      );
      requireFile('--policy', o.policy, 'policy file');
      const tasks = o.task ? o.task.split(',').map((t) => taskFlag.parse(t)) : HELDOUT_RESEARCH_TASKS;
      const m = await loadPolicy(o.policy);
      const results = await researchEval({
        config: m.config,
        params: m.params,
        tasks,
        episodes: o.episodes,
        executor: new Executor(),
        seed: o.seed,
      });
      if (o.json) return printJson({ policy: o.policy, results });
      for (const r of results)
        console.log(
          `${r.task.padEnd(18)} test position ${r.testPosition.toFixed(3)} ` +
            `[${r.ciLow.toFixed(3)}, ${r.ciHigh.toFixed(3)}], n=${r.episodes}, ` +
            `valid runs in ${(100 * r.validShare).toFixed(0)}% of episodes, ${r.executions} executions`,
        );
    });
}
