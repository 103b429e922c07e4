import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  AutoResearchEnv,
  Executor,
  OnlineOutcomeModel,
  TASKS,
  executorSource,
  loadTask,
  modelSource,
} from '../autoresearch/index.ts';
import { EnvRegistry, registerToyEnvs } from '../env/index.ts';
import { createTabletopEnv, fixedCameras, tabletopSpec } from '../physics/index.ts';
import type { Scene } from '../scene/index.ts';
import { openWorldModelEnv } from '../worldmodel/index.ts';

/** The shipped world model; its envs are registered when the file exists. */
export const DEFAULT_WORLD_MODEL = resolve(import.meta.dirname, '../../models/wm-base.onnx');

/** Every env by id, for code that builds envs by name: the toys, one physics env per task family of
 *  the scene, given a world-model file "world-model:<task id>" envs that carry the physics spec, and
 *  every AutoResearch task on the sandboxed executor ("autoresearch/<task>") and on its outcome model
 *  ("world-model:autoresearch/<task>", fitted on the task's reference runs). */
export function createRegistry(scene: Scene, worldModel: string | null = DEFAULT_WORLD_MODEL): EnvRegistry {
  const registry = new EnvRegistry();
  registerToyEnvs(registry);
  for (const task of scene.tasks) {
    registry.register(
      task.id,
      `Rapier tabletop, ${task.family} (${task.objects.length} objects x ${task.targets.length} targets)`,
      ({ numEnvs }) => createTabletopEnv({ scene, taskId: task.id, numEnvs }),
    );
  }
  if (worldModel && existsSync(worldModel)) {
    for (const task of scene.tasks) {
      const spec = tabletopSpec(scene, task.id, fixedCameras(scene));
      registry.register(
        `world-model:${task.id}`,
        `learned ensemble world model of ${task.id} (${worldModel})`,
        ({ numEnvs }) => openWorldModelEnv(worldModel, { scene, spec, numEnvs }),
        task.id,
      );
    }
  }
  let executor: Executor | null = null;
  for (const t of TASKS) {
    const id = `autoresearch/${t.id}`;
    registry.register(
      id,
      `AutoResearch: ${t.title} (${t.metric}), proposals run in the sandbox`,
      async ({ numEnvs }) =>
        new AutoResearchEnv(loadTask(t.id), numEnvs, executorSource((executor ??= new Executor()))),
    );
    registry.register(
      `world-model:${id}`,
      `AutoResearch: ${t.title}, outcomes predicted by the outcome model`,
      async ({ numEnvs }) => {
        const task = loadTask(t.id);
        return new AutoResearchEnv(task, numEnvs, modelSource(new OnlineOutcomeModel([task]).model));
      },
      id,
    );
  }
  return registry;
}
