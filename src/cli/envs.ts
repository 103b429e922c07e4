import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { EnvRegistry, registerToyEnvs } from '../env/index.ts';
import { createTabletopEnv, fixedCameras, tabletopSpec } from '../physics/index.ts';
import type { Scene } from '../scene/index.ts';
import { openWorldModelEnv } from '../worldmodel/index.ts';

/** The shipped world model; its envs are registered when the file exists. */
export const DEFAULT_WORLD_MODEL = resolve(import.meta.dirname, '../../models/wm-base.onnx');

/** Every env the CLI can build: the toys, one physics env per task family of the scene, and, given a
 *  world-model file, "world-model:<task id>" envs that carry the physics spec. */
export function createRegistry(scene: Scene, worldModel: string | null = DEFAULT_WORLD_MODEL): EnvRegistry {
  const registry = new EnvRegistry();
  registerToyEnvs(registry);
  for (const task of scene.tasks) {
    registry.register(task.id, `Rapier tabletop, ${task.family} (${task.objects.length} objects x ${task.targets.length} targets)`, ({ numEnvs }) =>
      createTabletopEnv({ scene, taskId: task.id, numEnvs }));
  }
  if (worldModel && existsSync(worldModel)) {
    for (const task of scene.tasks) {
      const spec = tabletopSpec(scene, task.id, fixedCameras(scene));
      registry.register(`world-model:${task.id}`, `learned ensemble world model of ${task.id} (${worldModel})`, ({ numEnvs }) =>
        openWorldModelEnv(worldModel, { scene, spec, numEnvs }), task.id);
    }
  }
  return registry;
}
