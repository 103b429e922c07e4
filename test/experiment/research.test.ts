import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Executor } from '../../src/autoresearch/index.ts';
import { RESEARCH_CONFIG, researchTrainSetup } from '../../src/experiment/index.ts';
import { loadPolicy } from '../../src/policy/model.ts';
import { resolveConfig, train } from '../../src/trainer/index.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-research-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const metrics = (dir: string) =>
  readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => Object.fromEntries(Object.entries(JSON.parse(l)).filter(([k]) => !k.startsWith('time/'))));

describe('the trainer on AutoResearch (no AutoResearch code in src/trainer)', () => {
  it('wmrl trains the base agent with executor anchors and outcome-model groups, refreshes the model on a bounded replay, and resumes exactly', {
    timeout: 300_000,
  }, async () => {
    const base = await loadPolicy('models/agent-base.onnx');
    const executor = new Executor({ concurrency: 2 });
    const cfg = resolveConfig('default', RESEARCH_CONFIG, {
      mode: 'wmrl',
      iterations: 2,
      groupsPerIteration: 2,
      groupSize: 2,
      refreshEvery: 1,
      checkpointEvery: 1,
      replayCapacity: 3, // executed runs kept beyond the reference ones: the oldest drop out
      seed: 3,
    });
    const run = async (dir: string, resume = false, iterations = cfg.iterations) => {
      const { tasks, worldModel } = researchTrainSetup({
        mode: 'wmrl',
        seed: cfg.seed,
        executor,
        tasks: ['iris-species', 'penguins-mass'],
      });
      await train(
        { tasks, worldModel, policy: { config: base.config, params: base.params, specHash: base.sidecar.specHash } },
        { ...cfg, iterations },
        join(tmp, dir),
        { resume },
      );
    };
    await run('first', false, 1);
    cpSync(join(tmp, 'first'), join(tmp, 'resumed'), { recursive: true });
    await run('resumed', true);
    await run('straight');
    const m = metrics(join(tmp, 'straight'));
    expect(m).toHaveLength(2);
    expect(m[1]['refresh/count']).toBeGreaterThan(0);
    expect(m.map((x) => x['refresh/transitions'])).toEqual([3, 3]);
    expect(m[1]['groups/wm']).toBeGreaterThan(0);
    expect(m[1]['steps/physics']).toBeGreaterThan(0);
    expect(metrics(join(tmp, 'resumed'))).toEqual(m);
    expect(
      readFileSync(join(tmp, 'resumed', 'policy.onnx')).equals(readFileSync(join(tmp, 'straight', 'policy.onnx'))),
    ).toBe(true);
  });

  it('refuses a held-out task for training', () => {
    expect(() =>
      researchTrainSetup({ mode: 'real', seed: 0, executor: new Executor(), tasks: ['boston-medv'] }),
    ).toThrow(/held out/);
  });
});
