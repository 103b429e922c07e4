// The engines a worker builds from a job's task description (TrainTask.remote): the tabletop (scene
// and task id; with a world-model snapshot also its world model) and AutoResearch (task id; the
// sandboxed executor of this machine).
import { z } from 'zod';
import { Executor } from '../autoresearch/index.ts';
import { InputError } from '../core/errors.ts';
import { formatZodError } from '../core/spec.ts';
import { parseScene } from '../scene/index.ts';
import { checkCameras, fixedCameras, tabletopSpec } from '../physics/index.ts';
import type { RemoteTask } from '../transport/index.ts';
import { WorldModelEnv, ensembleFromModel, wmModelFromSnapshot } from '../worldmodel/index.ts';
import { researchTrainSetup } from './research.ts';
import { tabletopTrainSetup } from './tabletop.ts';

const RemoteTaskSchema = z.discriminatedUnion('family', [
  z.strictObject({
    family: z.literal('tabletop'),
    task: z.string(),
    scene: z.unknown(),
    modelReward: z.enum(['phi', 'shaped']).optional(),
    /** The policy's cameras where they are not the scene's fixed ones. */
    cameras: z.array(z.string()).max(2).optional(),
  }),
  z.strictObject({ family: z.literal('autoresearch'), task: z.string() }),
]);

/** `executor`: AutoResearch jobs share it (made on the first one). A tabletop task with a world-model
 *  snapshot (OnlineWorldModel.snapshot()) also gets makeModel on that snapshot's weights. */
export function remoteTaskResolver(
  o: { executor?: () => Executor } = {},
): (remote: Record<string, unknown>, worldModel?: unknown) => Promise<RemoteTask> {
  let executor: Executor | undefined;
  return async (remote, worldModel) => {
    const parsed = RemoteTaskSchema.safeParse(remote);
    if (!parsed.success) throw new InputError(formatZodError(parsed.error, 'job task: '));
    const r = parsed.data;
    if (r.family === 'autoresearch') {
      if (worldModel !== undefined) throw new InputError('job task: AutoResearch outcome models do not run on workers');
      executor ??= o.executor?.() ?? new Executor({ concurrency: 1 });
      return researchTrainSetup({ mode: 'real', seed: 0, executor, tasks: [r.task] }).tasks[0];
    }
    const scene = parseScene(r.scene, 'job task scene');
    const cameras = r.cameras ? checkCameras(scene, r.cameras, 'job task cameras') : fixedCameras(scene);
    const setup = await tabletopTrainSetup(scene, [r.task], { mode: 'real', worldModel: '', seed: 0, cameras });
    const task: RemoteTask = setup.tasks[0];
    if (worldModel === undefined) return task;
    const what = 'job world-model snapshot';
    const spec = tabletopSpec(scene, r.task, cameras);
    const dynamics = await ensembleFromModel(wmModelFromSnapshot(worldModel, what), what, scene, spec);
    // as OnlineWorldModel.envFor builds them in the trainer
    const reward = r.modelReward;
    task.makeModel = async (numEnvs) =>
      new WorldModelEnv({ scene, spec, numEnvs, dynamics, ownsDynamics: false, reward });
    task.close = () => dynamics.close();
    return task;
  };
}
