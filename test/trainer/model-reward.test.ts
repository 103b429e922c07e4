// modelReward names what the tasks' world-model engines score with; the caller makes those engines, so a
// config that asks for another reward is refused, on the library path as on the CLI's.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import { tabletopTrainSetup } from '../../src/experiment/tabletop.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';
import { checkModelReward, resolveConfig, train } from '../../src/trainer/index.ts';
import { setup } from './code-lock.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-model-reward-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('modelReward', () => {
  it('must match every task with a world model (absent on a task: phi); tasks without one are not asked', () => {
    const { tasks } = setup();
    expect(() => checkModelReward({ modelReward: 'phi' }, tasks)).not.toThrow();
    expect(() => checkModelReward({ modelReward: 'shaped' }, tasks)).toThrow(InputError);
    expect(() => checkModelReward({ modelReward: 'shaped' }, tasks)).toThrow(
      'modelReward: the config says "shaped" but the world model of task toy/code-lock scores "phi"',
    );
    const shaped = tasks.map((t) => ({ ...t, modelReward: 'shaped' as const }));
    expect(() => checkModelReward({ modelReward: 'shaped' }, shaped)).not.toThrow();
    expect(() => checkModelReward({ modelReward: 'phi' }, shaped)).toThrow(/says "phi" but .* scores "shaped"/);
    const physicsOnly = tasks.map(({ makeModel: _m, ...t }) => t);
    expect(() => checkModelReward({ modelReward: 'shaped' }, physicsOnly)).not.toThrow();
  });

  it('train() from code refuses a modelReward its tasks do not score with, before writing anything', async () => {
    const cfg = resolveConfig('smoke', { mode: 'wmrl', iterations: 1, modelReward: 'shaped' });
    const dir = join(tmp, 'shaped');
    const error = await train(setup(), cfg, dir).catch((e: Error) => e);
    expect(error).toBeInstanceOf(InputError);
    expect(String(error)).toMatch(/modelReward: the config says "shaped"/);
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
  });

  it("the tabletop's tasks declare the reward their world model was made with", async () => {
    const scene = loadSceneFile(DEFAULT_SCENE_PATH);
    const made = async (modelReward?: 'phi' | 'shaped') =>
      (
        await tabletopTrainSetup(scene, ['tabletop/push', 'tabletop/stack'], {
          mode: 'wmrl',
          worldModel: 'models/wm-base.onnx',
          seed: 0,
          modelReward,
        })
      ).tasks;
    const shaped = await made('shaped');
    expect(shaped.map((t) => t.modelReward)).toEqual(['shaped', 'shaped']);
    expect(() => checkModelReward({ modelReward: 'shaped' }, shaped)).not.toThrow();
    expect(() => checkModelReward({ modelReward: 'phi' }, shaped)).toThrow(/task tabletop\/push scores "shaped"/);
    const phi = await made();
    expect(phi.map((t) => t.modelReward)).toEqual(['phi', 'phi']);
    expect(() => checkModelReward({ modelReward: 'phi' }, phi)).not.toThrow();
  });
});
