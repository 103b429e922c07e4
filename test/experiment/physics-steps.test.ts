// steps/physics against the engine: every control step a training run's Rapier worlds take (anchors,
// the expert's passes that find evolution's starts, real-branch's replays to branch points) is counted.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tabletopTrainSetup } from '../../src/experiment/index.ts';
import { camerasOf, controlStepsTaken } from '../../src/physics/index.ts';
import { loadPolicy } from '../../src/policy/model.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';
import { type Mode, resolveConfig, train } from '../../src/trainer/index.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-physics-steps-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const scene = loadSceneFile(DEFAULT_SCENE_PATH);

const lines = (dir: string) =>
  readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, number>);

describe('steps/physics equals the control steps the run’s Rapier worlds took', () => {
  // one env slot (no idle slot steps unrecorded), no evaluation (it is not training's)
  const small = { iterations: 2, groupsPerIteration: 2, groupSize: 4, samplesPerRollout: 4, batch: 16 };
  const cfg = (mode: Mode, starts = {}) =>
    resolveConfig('default', { ...small, mode, numEnvs: 1, evalEvery: 0 }, starts);
  const evolution = { evolution: { enabled: true }, frontier: { enabled: false }, branchShare: 1 };

  it.each([
    ['real-branch', 'frontier'],
    ['wmrl', 'evolution'],
  ] as const)(
    '%s with %s starts',
    {
      timeout: 240_000,
    },
    async (mode, starts) => {
      const base = await loadPolicy('models/vla-base.onnx');
      const c = cfg(mode, starts === 'evolution' ? evolution : {});
      expect(c[starts].enabled).toBe(true);
      const { tasks, worldModel } = await tabletopTrainSetup(scene, ['tabletop/pick-place'], {
        mode,
        worldModel: 'models/wm-base.onnx',
        seed: c.seed,
        cameras: camerasOf(base.config.cameras),
      });
      const dir = join(tmp, mode);
      const policy = { config: base.config, params: base.params, specHash: base.sidecar.specHash };
      const before = controlStepsTaken();
      try {
        await train({ tasks, worldModel, policy }, c, dir);
      } finally {
        await worldModel?.close();
      }
      const m = lines(dir);
      expect(m[0][`${starts}/level`]).toBeLessThan(1); // groups started on the expert's states
      expect(m.at(-1)!['steps/physics']).toBe(controlStepsTaken() - before);
      if (mode === 'real-branch') expect(m.at(-1)!['groups/branched']).toBeGreaterThan(0); // replays ran
    },
  );

  it('decides nothing: the world-model refresh counts new anchor transitions, not the expert’s passes', {
    timeout: 240_000,
  }, async () => {
    const base = await loadPolicy('models/vla-base.onnx');
    const c = resolveConfig('default', { ...small, mode: 'wmrl', iterations: 3, refreshEvery: 100, refreshSteps: 2 });
    const policy = { config: base.config, params: base.params, specHash: base.sidecar.specHash };
    const run = async (name: string, extra: number) => {
      const o = {
        mode: c.mode,
        worldModel: 'models/wm-base.onnx',
        seed: c.seed,
        cameras: camerasOf(base.config.cameras),
      };
      const { tasks, worldModel } = await tabletopTrainSetup(scene, ['tabletop/pick-place'], o);
      const inner = tasks[0].expertStart!;
      tasks[0].expertStart = async (seed, remaining) => {
        const s = await inner(seed, remaining);
        return { ...s, steps: s.steps + extra };
      };
      try {
        await train({ tasks, worldModel, policy }, c, join(tmp, name));
      } finally {
        await worldModel?.close();
      }
      return lines(join(tmp, name)).map((m) =>
        Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('time/') && k !== 'steps/physics')),
      );
    };
    const counted = await run('counted', 0);
    expect(counted.at(-1)!['refresh/count']).toBeGreaterThan(0);
    expect(await run('inflated', 57)).toEqual(counted);
  });
});
