import { loadSceneFile, DEFAULT_SCENE_PATH } from '../scene/load-file.ts';
import { findTask, taskIds } from '../task/index.ts';
import type { Scene } from '../scene/index.ts';
import { UsageError } from './options.ts';

export { DEFAULT_SCENE_PATH };

export function loadScene(path: string | undefined): Scene {
  return loadSceneFile(path ?? DEFAULT_SCENE_PATH);
}

/** Resolve --task: a full id ("tabletop/push"), a short one ("push", "pick-place"),
 *  a comma-separated list of them, or "all". */
export function resolveTasks(scene: Scene, task: string): string[] {
  if (task === 'all') return taskIds(scene);
  const ids = taskIds(scene);
  const out = task.split(',').map((name) => {
    const match = ids.find((id) => id === name || id.split('/')[1] === name || findTask(scene, id).family === name);
    if (!match)
      throw new UsageError(`--task: unknown task "${name}"; valid: all, ${ids.join(', ')} (or a comma-separated list)`);
    return match;
  });
  return [...new Set(out)];
}
