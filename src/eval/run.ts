// The evaluation run: one policy, or two on the same seeds (paired), on every task family; real physics
// only; the validated report. Both policies are loaded before either runs, so a bad second file fails fast.
import { runEpisodes, type TabletopEnv } from '../physics/index.ts';
import type { Policy } from '../rollout/index.ts';
import type { Scene } from '../scene/index.ts';
import { sampleTask, type Split, unseenInstruction, usesReservedPair, type Wording } from '../task/index.ts';
import {
  EVAL_FORMAT,
  type EvalReport,
  type PolicyResult,
  comparePolicies,
  policyResult,
  validateReport,
} from './report.ts';
import { type PolicySource, handoverPolicy, policySource } from './policies.ts';
import { failedStages } from './stages.ts';

export interface EvalOptions {
  scene: Scene;
  /** Task ids, in the order the report lists them. */
  tasks: string[];
  /** One policy, or two compared on the same seeds: each expert, random or a model file. */
  policies: string[];
  split: Split;
  /** Episodes per task; episode k of a task runs on the split's seed of index `seed + k`. */
  episodes: number;
  seed: number;
  temperature: number;
  /** 'unseen': the policy reads every instruction in the project's own unseen wording (default 'scene'). */
  wording?: Wording;
  /** The handover probe: the scripted expert acts for the first `handover` steps of every episode. */
  handover?: number;
  numEnvs: number;
  /** Flag named in errors about a policy (default --policy). */
  flag?: string;
  onEpisode?: () => void;
}

async function evalPolicy(source: PolicySource, opts: EvalOptions): Promise<PolicyResult> {
  const perTask = [];
  for (const taskId of opts.tasks) {
    const episodes = await runEpisodes({
      scene: opts.scene,
      taskId,
      policyName: source.name,
      episodes: opts.episodes,
      split: opts.split,
      seedOffset: opts.seed,
      numEnvs: opts.numEnvs,
      cameras: source.cameras,
      makePolicy: (env) => {
        const policy = opts.wording === 'unseen' ? reworded(source.make(env), env) : source.make(env);
        return opts.handover ? handoverPolicy(env, policy, opts.handover) : policy;
      },
      finalStates: true,
      onEpisode: () => opts.onEpisode?.(),
    });
    perTask.push({ taskId, episodes });
  }
  const failed_stages = Object.fromEntries(
    perTask.map((t) => [t.taskId, failedStages(opts.scene, t.taskId, t.episodes)]),
  );
  // held-out and validation seeds may use the reserved object-target pairs: report them apart
  const reserved =
    opts.split === 'train'
      ? undefined
      : (taskId: string, seed: number) => usesReservedPair(opts.scene, sampleTask(opts.scene, taskId, seed));
  return { ...policyResult(source.name, perTask, reserved), failed_stages };
}

/** The policy reading each episode's instruction in the unseen wording (the env is unchanged). */
function reworded(policy: Policy, env: TabletopEnv): Policy {
  return {
    onReset: policy.onReset?.bind(policy),
    act(obs, ctx) {
      const text = (obs.instruction as string[]).map((t, i) =>
        ctx.keys[i] < 0 ? t : unseenInstruction(env.scene, env.task(i)),
      );
      return policy.act({ ...obs, instruction: text }, ctx);
    },
  };
}

export async function runEval(opts: EvalOptions): Promise<EvalReport> {
  if (opts.policies.length < 1 || opts.policies.length > 2)
    throw new RangeError(`runEval: 1 or 2 policies, got ${opts.policies.length}`);
  const sources: PolicySource[] = [];
  try {
    for (const name of opts.policies)
      sources.push(await policySource(name, { temperature: opts.temperature, flag: opts.flag }));
    const results: PolicyResult[] = [];
    for (const source of sources) results.push(await evalPolicy(source, opts));
    return validateReport({
      format: EVAL_FORMAT,
      split: opts.split,
      episodes_per_task: opts.episodes,
      seed: opts.seed,
      temperature: opts.temperature,
      ...(opts.wording === 'unseen' && { wording: opts.wording }),
      ...(opts.handover && { handover: opts.handover }),
      seeds: { first_index: opts.seed, count: opts.episodes },
      tasks: opts.tasks,
      policies: results,
      paired: results.length === 2 ? comparePolicies(results[0], results[1]) : undefined,
    });
  } finally {
    for (const s of sources) await s.close();
  }
}
