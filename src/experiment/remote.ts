// The real engines a worker builds from a job's task description (TrainTask.remote): the tabletop
// (scene and task id) and AutoResearch (task id; the sandboxed executor of this machine).
import { z } from 'zod';
import { Executor } from '../autoresearch/index.ts';
import { InputError } from '../core/errors.ts';
import { formatZodError } from '../core/spec.ts';
import { parseScene } from '../scene/index.ts';
import type { TrainTask } from '../trainer/index.ts';
import { researchTrainSetup } from './research.ts';
import { tabletopTrainSetup } from './tabletop.ts';

const RemoteTaskSchema = z.discriminatedUnion('family', [
  z.strictObject({ family: z.literal('tabletop'), task: z.string(), scene: z.unknown() }),
  z.strictObject({ family: z.literal('autoresearch'), task: z.string() }),
]);

/** `executor`: AutoResearch jobs share it (made on the first one). */
export function remoteTaskResolver(o: { executor?: () => Executor } = {}): (remote: Record<string, unknown>) => Promise<TrainTask> {
  let executor: Executor | undefined;
  return async (remote) => {
    const parsed = RemoteTaskSchema.safeParse(remote);
    if (!parsed.success) throw new InputError(formatZodError(parsed.error, 'job task: '));
    const r = parsed.data;
    if (r.family === 'autoresearch') {
      executor ??= o.executor?.() ?? new Executor({ concurrency: 1 });
      return researchTrainSetup({ mode: 'real', seed: 0, executor, tasks: [r.task] }).tasks[0];
    }
    const scene = parseScene(r.scene, 'job task scene');
    return (await tabletopTrainSetup(scene, [r.task], { mode: 'real', worldModel: '', seed: 0 })).tasks[0];
  };
}
