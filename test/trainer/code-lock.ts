// The code lock as a training task for the loop's tests: the true env as physics, and a "world model"
// that is the true env with its progress distorted by a known monotone map plus known noise.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { drawRng } from '../../src/core/rng.ts';
import type {
  BatchAction,
  Branchable,
  Env,
  EpisodeStart,
  ResetOptions,
  StepOptions,
  StepResult,
} from '../../src/env/types.ts';
import { CodeLockEnv } from '../../src/env/toys.ts';
import { Graph } from '../../src/nn/ir.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { vlaConfigFromSpec } from '../../src/policy/spec-config.ts';
import { WordTokenizer } from '../../src/policy/tokenizer.ts';
import { vlaForwardBuilder } from '../../src/policy/vla.ts';
import type { Branching, TrainSetup } from '../../src/trainer/index.ts';

/** A "world model" of the code lock: the true env whose reported progress is distorted by a known
 *  monotone map plus known noise drawn per (key, step). */
export class DistortedEnv implements Env, Branchable {
  readonly spec;
  private readonly keys: number[];
  private readonly steps: number[];
  constructor(
    private readonly inner: CodeLockEnv,
    private readonly distort: (p: number) => number,
    private readonly noise: number | ((p: number, key: number) => number),
  ) {
    this.spec = inner.spec;
    this.keys = new Array(inner.numEnvs).fill(-1);
    this.steps = new Array(inner.numEnvs).fill(0);
  }
  get numEnvs() {
    return this.inner.numEnvs;
  }
  async reset(o: ResetOptions = {}) {
    const out = await this.inner.reset(o);
    for (let i = 0; i < this.numEnvs; i++) {
      if (o.mask && !o.mask[i]) continue;
      this.keys[i] = Number(o.keys?.[i] ?? out.info.seeds[i]);
      this.steps[i] = 0;
    }
    return { ...out, info: { ...out.info, source: 'world-model' as const } };
  }
  async step(action: BatchAction, options: StepOptions = {}): Promise<StepResult> {
    const r = await this.inner.step(action, options);
    const progress = r.info.progress.map((p, i) => {
      if (options.mask && !options.mask[i]) return p;
      const width = typeof this.noise === 'number' ? this.noise : this.noise(p, this.keys[i]);
      const e = width * (drawRng(7, this.keys[i], this.steps[i]++, 1).uniform() - 0.5);
      return Math.min(1, Math.max(0, this.distort(p) + e));
    });
    return { ...r, info: { ...r.info, source: 'world-model', progress } };
  }
  capture(slot: number): EpisodeStart {
    return { ...this.inner.capture(slot), key: this.keys[slot] };
  }
  async resetFrom(slots: readonly number[], starts: readonly EpisodeStart[]) {
    const out = await this.inner.resetFrom(slots, starts);
    slots.forEach((i, j) => {
      this.keys[i] = starts[j].key ?? starts[j].seed;
      this.steps[i] = 0;
    });
    return { ...out, info: { ...out.info, source: 'world-model' as const } };
  }
  close() {
    this.inner.close();
  }
}

/** The code lock's branching: a row is [digits entered, steps taken]. */
const branching: Branching = { progress: (_seed, row) => row[0] / CodeLockEnv.LENGTH };

export function setup(
  distort = (p: number) => p,
  noise: number | ((p: number, key: number) => number) = 0,
  branch = true,
): TrainSetup {
  const probe = new CodeLockEnv(1);
  const tok = WordTokenizer.fromCorpus(['enter 0 1 2 3 4 5'], { maxLength: 6 });
  const config = vlaConfigFromSpec(probe.spec, tok.config, {
    conv: [{ out: 4, k: 3, stride: 2, pad: 1 }],
    imageFeatures: 16,
    embedDim: 8,
    proprioHidden: 4,
    trunk: [32],
  });
  const g = new Graph();
  vlaForwardBuilder(config)(g);
  return {
    tasks: [
      {
        id: 'toy/code-lock',
        makeReal: async (n) => new CodeLockEnv(n),
        makeModel: async (n) => new DistortedEnv(new CodeLockEnv(n), distort, noise),
        branching: branch ? branching : undefined,
        // the "expert" has entered the first digits right: d of LENGTH, d steps taken
        expertStart: async (seed, remaining) => {
          const d = Math.min(CodeLockEnv.LENGTH - 1, Math.round((1 - remaining) * CodeLockEnv.LENGTH));
          return { start: { seed, elapsed: d, row: [d, d] }, steps: CodeLockEnv.LENGTH };
        },
        trainSeed: (k) => k,
        evalSeed: (k) => 2_000_000 + k,
        trainStarts: 1_000_000,
      },
    ],
    policy: { config, params: ParamStore.init(g.params, 1), specHash: 'toy' },
  };
}

/** The metrics lines of a run folder. */
export const metrics = (dir: string) =>
  readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, number>);
