import { describe, expect, it } from 'vitest';
import {
  ChainEnv,
  CheckEnvError,
  checkEnv,
  CodeLockEnv,
  type BatchAction,
  type Env,
  type StepOptions,
  type StepResult,
} from '../../src/env/index.ts';

/** An env that breaks one rule of the contract, to prove checkEnv notices. */
class Broken extends ChainEnv {
  constructor(private readonly flaw: 'shape' | 'random' | 'range' | 'terms' | 'mask' | 'mask-step' | 'branch') {
    super(3);
  }
  override capture(slot: number) {
    const start = super.capture(slot);
    return this.flaw === 'branch' ? { ...start, row: [start.row[0] + 1, start.row[1]] } : start;
  }
  override async reset(options = {}) {
    const out = await super.reset(this.flaw === 'mask' ? { ...options, mask: undefined } : options);
    return out;
  }
  override async step(action: BatchAction, options: StepOptions = {}): Promise<StepResult> {
    const r = await super.step(action, this.flaw === 'mask-step' ? {} : options);
    if (this.flaw === 'shape') r.obs.position = new Float32Array(2);
    if (this.flaw === 'random') r.reward[0] = Math.random();
    if (this.flaw === 'range') (r.obs.cell as Int32Array)[1] = 99;
    if (this.flaw === 'terms') delete r.info.terms.progress;
    return r;
  }
}

describe('checkEnv', () => {
  it('passes on the toy envs and reports what it checked', async () => {
    for (const env of [new ChainEnv(3), new CodeLockEnv(4)]) {
      const ran = await checkEnv(env);
      expect(ran).toEqual([
        'spec',
        'shapes',
        'ranges',
        'seed-determinism',
        'mask-reset',
        'mask-step',
        'snapshot',
        'branching',
        ...(env instanceof ChainEnv ? ['frame'] : []),
      ]);
    }
  });

  it.each([
    ['shape', /obs\.position has length 2, expected 3/],
    ['random', /same seed and actions gave different results/],
    ['range', /obs\.cell\[1\] = 99 is outside \[0, 11\)/],
    ['terms', /info\.terms has \[success\], spec\.rewardTerms is \[progress,success\]/],
    ['mask', /masked reset changed the seed of env 1/],
    ['mask-step', /masked step changed env 1 \(outside the mask\)/],
    ['branch', /resetFrom\(capture\(\)\): env 0's next step differs/],
  ] as const)('catches a %s flaw', async (flaw, message) => {
    const err = await checkEnv(new Broken(flaw)).catch((e) => e);
    expect(err).toBeInstanceOf(CheckEnvError);
    expect(err.message).toMatch(message);
  });

  it('rejects an invalid spec with the path of the bad field', async () => {
    const env = new ChainEnv(1) as Env;
    Object.defineProperty(env, 'spec', { value: { ...env.spec, maxEpisodeSteps: -1 } });
    await expect(checkEnv(env)).rejects.toThrow(/spec\$\.maxEpisodeSteps/);
  });
});
