import { describe, expect, it } from 'vitest';
import { createRegistry } from '../../src/experiment/registry.ts';
import { checkEnv } from '../../src/env/index.ts';
import { loadSceneFile, DEFAULT_SCENE_PATH } from '../../src/scene/load-file.ts';

// Every env the CLI can build passes the contract; new envs are covered by registering them.
const registry = createRegistry(loadSceneFile(DEFAULT_SCENE_PATH));

describe('registered envs', () => {
  it("a world-model env carries its physics env's spec", async () => {
    const [wm, phys] = await Promise.all([
      registry.make('world-model:tabletop/stack', { numEnvs: 1 }),
      registry.make('tabletop/stack', { numEnvs: 1 }),
    ]);
    expect(wm.spec).toEqual(phys.spec);
    wm.close();
    phys.close();
  });

  it('include the toys and every tabletop family', () => {
    const ids = registry.list().map((e) => e.id);
    const tasks = ['tabletop/push', 'tabletop/pick-place', 'tabletop/stack', 'tabletop/put-in-bin'];
    expect(ids).toEqual(
      expect.arrayContaining(['toy/chain', 'toy/code-lock', ...tasks, ...tasks.map((t) => `world-model:${t}`)]),
    );
  });

  it.each(registry.list().map((e) => [e.id]))('%s passes checkEnv', async (id) => {
    const env = await registry.make(id, { numEnvs: 3 });
    try {
      const ran = await checkEnv(env, { steps: 4 });
      expect(ran).toEqual(expect.arrayContaining(['spec', 'shapes', 'seed-determinism', 'mask-reset', 'mask-step']));
    } finally {
      env.close();
    }
  });

  it('names the registered ids when asked for an unknown one', async () => {
    await expect(registry.make('tabletop/juggle', { numEnvs: 1 })).rejects.toThrow(
      /unknown env "tabletop\/juggle"; registered: .*tabletop\/push/,
    );
  });
});
