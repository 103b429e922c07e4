import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { resolveConfig, train } from '../../src/trainer/index.ts';
import { type PolicySample, PolicyTrainer } from '../../src/trainer/policy-trainer.ts';
import { metrics, setup } from './code-lock.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-dynamic-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const strip = (rows: Record<string, number>[]) =>
  rows.map((x) => Object.fromEntries(Object.entries(x).filter(([k]) => !k.startsWith('time/'))));
const distort2 = (p: number) => p * p;

/** The rows every PPO step of a run is given. */
function watchSteps(): (readonly PolicySample[])[] {
  const steps: (readonly PolicySample[])[] = [];
  const step = PolicyTrainer.prototype.step;
  vi.spyOn(PolicyTrainer.prototype, 'step').mockImplementation(function (this: PolicyTrainer, rows, ...rest) {
    steps.push(rows);
    return step.call(this, rows, ...rest);
  });
  return steps;
}

describe('dynamic sampling', () => {
  const dynamicSampling = { enabled: true, maxExtraGroups: 3 };

  it('a world model whose rewards are all equal: no group reaches the loss, and the refill stops at its bound', {
    timeout: 60_000,
  }, async () => {
    const flat = () => setup(() => 0.5, 0);
    const cfg = resolveConfig('smoke', { mode: 'wm', iterations: 3, dynamicSampling });
    const steps = watchSteps();
    const on = join(tmp, 'flat-on');
    await train(flat(), cfg, on);
    expect(steps).toEqual([]);
    for (const m of metrics(on)) {
      expect(m['groups/informative']).toBe(0);
      expect(m['groups/refilled']).toBe(3);
      expect(m['groups/zero_variance']).toBe(cfg.groupsPerIteration + 3);
      expect(m['samples/rows']).toBe(0);
    }
    // without dynamic sampling the same groups enter (their rows carry the KL and entropy terms)
    await train(flat(), { ...cfg, dynamicSampling: { ...dynamicSampling, enabled: false } }, join(tmp, 'flat-off'));
    expect(steps.flat().length).toBeGreaterThan(0);
  });

  it('refills equal-reward groups, at most maxExtraGroups, the same on a rerun and with any number of env slots', {
    timeout: 120_000,
  }, async () => {
    const run = async (name: string, numEnvs: number) => {
      const dir = join(tmp, name);
      const cfg = resolveConfig('smoke', {
        mode: 'wmrl',
        iterations: 6,
        groupsPerIteration: 4,
        numEnvs,
        dynamicSampling,
      });
      await train(setup(distort2, 0.2), cfg, dir);
      return { metrics: strip(metrics(dir)), policy: readFileSync(join(dir, 'policy.onnx')) };
    };
    const steps = watchSteps();
    const first = await run('mixed', 8);
    const refilled = first.metrics.map((m) => m['groups/refilled']);
    expect(Math.max(...refilled)).toBeLessThanOrEqual(3);
    expect(refilled.some((n) => n > 0)).toBe(true);
    for (const m of first.metrics) {
      expect(m['groups/informative']).toBe(4 + m['groups/refilled'] - m['groups/zero_variance']);
      // only the informative groups' rows: at most groupSize x samplesPerRollout each (smoke: 4 x 4)
      expect(m['samples/rows']).toBeLessThanOrEqual(m['groups/informative'] * 16);
    }
    const rows = first.metrics.reduce((n, m) => n + m['samples/rows'], 0);
    expect(steps.flat().length).toBe(rows); // one epoch (smoke)
    const [again, fewer] = [await run('mixed-again', 8), await run('mixed-slots', 3)];
    expect(again.metrics).toEqual(first.metrics);
    expect(again.policy.equals(first.policy)).toBe(true);
    expect(fewer.metrics).toEqual(first.metrics);
  });

  it('a bad bound is refused naming the field', () => {
    expect(() => resolveConfig('smoke', { dynamicSampling: { maxExtraGroups: -1 } })).toThrow(
      /dynamicSampling\.maxExtraGroups/,
    );
  });
});
