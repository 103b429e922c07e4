import { describe, expect, it } from 'vitest';
import { createRegistry } from '../../src/cli/envs.ts';
import { checkEnv } from '../../src/env/index.ts';
import { loadSceneFile, DEFAULT_SCENE_PATH } from '../../src/scene/load-file.ts';

// Every env the CLI can build passes the contract; new envs are covered by registering them.
const registry = createRegistry(loadSceneFile(DEFAULT_SCENE_PATH));

describe('registered envs', () => {
  it('include the toys and every tabletop family', () => {
    const ids = registry.list().map((e) => e.id);
    expect(ids).toEqual(expect.arrayContaining(['toy/chain', 'toy/code-lock', 'tabletop/push', 'tabletop/pick-place', 'tabletop/stack', 'tabletop/put-in-bin']));
  });

  it.each(registry.list().map((e) => [e.id]))('%s passes checkEnv', async (id) => {
    const env = await registry.make(id, { numEnvs: 3 });
    try {
      const ran = await checkEnv(env, { steps: 4 });
      expect(ran).toEqual(expect.arrayContaining(['spec', 'shapes', 'seed-determinism', 'mask-reset']));
    } finally {
      env.close();
    }
  });

  it('names the registered ids when asked for an unknown one', async () => {
    await expect(registry.make('tabletop/juggle', { numEnvs: 1 })).rejects.toThrow(/unknown env "tabletop\/juggle"; registered: .*tabletop\/push/);
  });
});
