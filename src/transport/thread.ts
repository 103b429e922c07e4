// Both cores in one run: every group's rollouts split by key between this process and helper threads
// (worker_threads), each with its own engines and policy sampler, all running at once. A rollout's
// result depends only on (policy, world model, task, start, key), never on the batch it shares, so the
// split decides nothing: any number of helpers gives the same rollouts. The policy version and the
// world-model snapshot travel once per change, by content hash.
import { Worker } from 'node:worker_threads';
import type { Feeds, RemoteGraph, ShardHost } from '../nn/index.ts';
import { type GroupJob, type Rollout, recordsStates } from '../trainer/rollouts.ts';
import type { GroupRequest, RolloutTransport } from '../trainer/types.ts';
import { contentAddressed, encodePolicy } from './codec.ts';
import {
  type GroupsCall,
  type HelperAnswer,
  type HelperCall,
  type Versioned,
  type WireFeeds,
  fromWire,
  toWire,
} from './thread-protocol.ts';

/** Contiguous parts of `keys` for `n` runners (the first part is this process's); some may be empty. */
export function splitKeys(keys: readonly number[], n: number): number[][] {
  return Array.from({ length: n }, (_, i) =>
    keys.slice(Math.round((i * keys.length) / n), Math.round(((i + 1) * keys.length) / n)),
  );
}

/** A helper thread as the trainer sees it: rollouts, and gradient graphs of data-parallel steps. */
class RolloutHelper implements ShardHost {
  private next = 0;
  private readonly waiting = new Map<number, (a: HelperAnswer) => void>();
  /** What the helper holds already (sent once per change). */
  private readonly held = { policy: '', worldModel: '' };
  private failure: Error | null = null;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (a: HelperAnswer) => {
      this.waiting.get(a.id)?.(a);
      this.waiting.delete(a.id);
    });
    worker.on('error', (e) => this.fail(e));
    worker.on('exit', (code) => this.fail(new Error(`rollout helper thread exited (code ${code})`)));
  }

  static open(entry: URL): RolloutHelper {
    return new RolloutHelper(new Worker(entry));
  }

  private fail(e: Error): void {
    this.failure ??= e;
    for (const [id, resolve] of this.waiting) resolve({ id, error: e.message });
    this.waiting.clear();
  }

  private async ask(call: HelperCall): Promise<HelperAnswer> {
    if (this.failure) throw this.failure;
    const answer = new Promise<HelperAnswer>((resolve) => this.waiting.set(call.id, resolve));
    this.worker.postMessage(call);
    const a = await answer;
    if ('error' in a) throw new Error(`rollout helper: ${a.error}`);
    return a;
  }

  async run(call: Omit<GroupsCall, 'op' | 'id' | 'policy' | 'worldModel'>, policy: Versioned, model?: Versioned) {
    const send = (v: Versioned | undefined, kind: 'policy' | 'worldModel'): Versioned | undefined => {
      if (!v) return undefined;
      const fresh = this.held[kind] !== v.hash;
      this.held[kind] = v.hash;
      return fresh ? v : { hash: v.hash };
    };
    const versions = { policy: send(policy, 'policy')!, worldModel: send(model, 'worldModel') };
    try {
      const a = await this.ask({ ...call, ...versions, op: 'groups', id: this.next++ });
      if (!('groups' in a)) throw new Error('rollout helper: answered a rollout call without rollouts');
      return a;
    } catch (e) {
      this.held.policy = this.held.worldModel = ''; // resend both after a failure
      throw e;
    }
  }

  /** A gradient graph on this helper (ShardHost): the model bytes now, feeds on every run. */
  async open(model: Uint8Array): Promise<RemoteGraph> {
    const graph = this.next;
    await this.ask({ op: 'open', id: this.next++, graph, model });
    return {
      run: async (feeds: Feeds) => {
        const a = await this.ask({ op: 'run', id: this.next++, graph, feeds: toWire(feeds) });
        if (!('outputs' in a)) throw new Error('rollout helper: answered a graph run without outputs');
        return fromWire(a.outputs as WireFeeds);
      },
      close: async () => {
        if (!this.failure) await this.ask({ op: 'close', id: this.next++, graph });
      },
    };
  }

  async close(): Promise<void> {
    this.failure ??= new Error('rollout helper: closed');
    await this.worker.terminate();
  }
}

/** Splits every request between `local` (this process) and helper threads. Requests it cannot send (a
 *  task without a remote description, a world model without a snapshot) run wholly in this process. */
export class SplitTransport implements RolloutTransport {
  private constructor(
    private readonly local: RolloutTransport,
    private readonly helpers: readonly RolloutHelper[],
  ) {}

  /** `count` helper threads, each running `entry` (a module that calls serveRolloutHelper). */
  static open(local: RolloutTransport, entry: URL, count: number): SplitTransport {
    return new SplitTransport(
      local,
      Array.from({ length: count }, () => RolloutHelper.open(entry)),
    );
  }

  /** The helpers as hosts of data-parallel gradient graphs (they are idle during updates). */
  get hosts(): readonly ShardHost[] {
    return this.helpers;
  }

  async run(r: GroupRequest): Promise<Rollout[][]> {
    const snapshot = r.engine === 'model' ? r.worldModel?.snapshot : undefined;
    if (r.tasks.some((t) => !t.remote) || (r.engine === 'model' && !snapshot)) return this.local.run(r);
    const parts = r.jobs.map((j) => splitKeys(j.keys, this.helpers.length + 1).map((keys) => ({ ...j, keys })));
    const policy = encodePolicy(r.policy.config, r.policy.params);
    const model = snapshot ? contentAddressed(snapshot.call(r.worldModel)) : undefined;
    const helped = this.helpers.map(async (h, i) => {
      const jobs = parts.map((p) => p[i + 1]);
      const out = new Map<GroupJob, Rollout[]>();
      // one call per task and start kind, as InProcessTransport batches them
      for (const [t, task] of r.tasks.entries())
        for (const branched of [false, true]) {
          const some = jobs.filter((j) => j.task === t && !!j.branch === branched && j.keys.length);
          if (!some.length) continue;
          const call = {
            task: task.remote!,
            engine: r.engine,
            jobs: some,
            seed: r.seed,
            samplesPerRollout: r.samplesPerRollout,
            temperature: r.temperature,
            record: recordsStates(r.engine === 'real', r.recordStates, task),
          };
          const a = await h.run(call, policy, model);
          if (r.clock) r.clock.policy += a.policySeconds;
          some.forEach((j, k) => out.set(j, a.groups[k]));
        }
      return jobs.map((j) => out.get(j) ?? []);
    });
    const mine = parts.map((p) => p[0]).filter((j) => j.keys.length);
    const [local, ...theirs] = await Promise.all([this.local.run({ ...r, jobs: mine }), ...helped]);
    let at = 0;
    return parts.map((p, k) => [...(p[0].keys.length ? local[at++] : []), ...theirs.flatMap((groups) => groups[k])]);
  }

  async close(): Promise<void> {
    await Promise.all(this.helpers.map((h) => h.close()));
  }
}
