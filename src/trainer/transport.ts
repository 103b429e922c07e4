// Where rollout groups run (docs/scale-out.md): the trainer hands each iteration's groups to a
// transport and takes their rollouts back, group by group. In this process by default (one batch per
// task and start kind on the trainer's own envs and sampler); src/transport sends them to workers
// through Redis. A group's result depends only on (policy, world model, task, start, rollout keys), so
// every layout gives the same.
import type { Env } from '../env/types.ts';
import type { PolicySampler } from '../policy/sampler.ts';
import { type GroupJob, type Rollout, recordRow, recordsStates, runGroups } from './rollouts.ts';
import type { GroupRequest, RolloutTransport } from './types.ts';

/** The default: each task's groups (initial-state and branched ones apart) as one batch in its env
 *  of this process. */
export class InProcessTransport implements RolloutTransport {
  constructor(
    private readonly envs: readonly { real: Env | null; model: Env | null }[],
    private readonly sampler: PolicySampler,
  ) {}

  async run(r: GroupRequest): Promise<Rollout[][]> {
    const out = new Map<GroupJob, Rollout[]>();
    for (const t of r.tasks.keys()) {
      for (const branched of [false, true]) {
        const mine = r.jobs.filter((j) => j.task === t && !!j.branch === branched);
        if (!mine.length) continue;
        const env = r.engine === 'real' ? this.envs[t].real : this.envs[t].model;
        if (!env) throw new Error(`InProcessTransport: no ${r.engine} env for task ${r.tasks[t].id}`);
        const record = recordsStates(r.engine === 'real', r.recordStates, r.tasks[t]) ? recordRow(env) : undefined;
        const groups = await runGroups(env, this.sampler, mine, {
          seed: r.seed,
          samplesPerRollout: r.samplesPerRollout,
          temperature: r.temperature,
          record,
          clock: r.clock,
        });
        mine.forEach((j, k) => out.set(j, groups[k]));
      }
    }
    return r.jobs.map((j) => out.get(j)!);
  }
}
