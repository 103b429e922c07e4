import { EnvRegistry, registerToyEnvs } from '../env/index.ts';
import { createTabletopEnv } from '../physics/index.ts';
import type { Scene } from '../scene/index.ts';

/** Every env the CLI can build: the toys plus one physics env per task family of the scene. */
export function createRegistry(scene: Scene): EnvRegistry {
  const registry = new EnvRegistry();
  registerToyEnvs(registry);
  for (const task of scene.tasks) {
    registry.register(task.id, `Rapier tabletop, ${task.family} (${task.objects.length} objects x ${task.targets.length} targets)`, ({ numEnvs }) =>
      createTabletopEnv({ scene, taskId: task.id, numEnvs }));
  }
  return registry;
}
