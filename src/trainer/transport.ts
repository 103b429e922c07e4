// Where anchor groups run (design section 12): the trainer hands each iteration's anchor jobs to a
// transport and takes their rollouts back, group by group. In this process by default (one batch per
// task on the trainer's own envs and sampler); src/transport sends them to workers through Redis.
// A job's result depends only on (policy, task, start, rollout keys), so every layout gives the same.
import type { Env } from '../env/types.ts';
import type { ParamStore } from '../nn/params.ts';
import type { PolicySampler } from '../policy/sampler.ts';
import type { VlaConfig } from '../policy/vla.ts';
import type { TrainTask } from './loop.ts';
import { type GroupJob, type Rollout, runGroups } from './rollouts.ts';

export interface AnchorRequest {
  /** The run's identity (job ids of remote transports). */
  run: string;
  tasks: readonly TrainTask[];
  /** Anchor groups; job.task indexes `tasks`. */
  jobs: readonly GroupJob[];
  /** The policy the rollouts act with (the trainer's sampler holds the same parameters). */
  policy: { config: VlaConfig; params: ParamStore };
  seed: number;
  samplesPerRollout: number;
  /** Seconds of policy inference in this process are added here (reported only). */
  clock?: { policy: number };
}

export interface RolloutTransport {
  /** Runs every anchor group (recording states where the task has branching); results in job order. */
  runAnchors(request: AnchorRequest): Promise<Rollout[][]>;
  close(): Promise<void>;
}

/** The default: each task's groups as one batch in its physics env of this process. */
export class InProcessTransport implements RolloutTransport {
  constructor(private readonly envs: readonly (Env | null)[], private readonly sampler: PolicySampler) {}

  async runAnchors(r: AnchorRequest): Promise<Rollout[][]> {
    const out = new Map<GroupJob, Rollout[]>();
    for (const t of r.tasks.keys()) {
      const mine = r.jobs.filter((j) => j.task === t);
      if (!mine.length) continue;
      const env = this.envs[t];
      if (!env) throw new Error(`InProcessTransport: no physics env for task ${r.tasks[t].id}`);
      const { branching } = r.tasks[t];
      const record = branching && ((slot: number) => branching.record(env, slot));
      const groups = await runGroups(env, this.sampler, mine, { seed: r.seed, samplesPerRollout: r.samplesPerRollout, record, clock: r.clock });
      mine.forEach((j, k) => out.set(j, groups[k]));
    }
    return r.jobs.map((j) => out.get(j)!);
  }

  async close(): Promise<void> {}
}
