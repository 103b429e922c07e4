// The tabletop as the trainer's tasks: physics anchors and evaluation, one refreshable world model behind
// every task's world-model env, branching from real states, train and held-out seeds; held-out evaluation.
import { existsSync } from 'node:fs';
import { InputError } from '../core/errors.ts';
import { type Env, type FrameSink, type FrameSource, tapFrames } from '../env/index.ts';
import { createTabletopEnv, expertStart, fixedCameras, nonDefaultCameras, tabletopSpec } from '../physics/index.ts';
import type { Scene } from '../scene/index.ts';
import { sampleTask, sceneDifficulty, splitSeed, splitSize, stateNames, tabletopInstructions } from '../task/index.ts';
import { type PolicyResult, runEval } from '../eval/index.ts';
import { type Mode, modeFlags, type TrainSetup, type TrainTask } from '../trainer/index.ts';
import { SplitTransport } from '../transport/index.ts';
import { OnlineWorldModel, tabletopBranching } from '../worldmodel/index.ts';

/** `live`: env 0 of every env the trainer makes streams to viewers (results are unchanged). `cameras`: what
 *  every env (physics and world model) renders, the policy's (camerasOf(config.cameras)); default the
 *  scene's fixed cameras. */
export async function tabletopTrainSetup(
  scene: Scene,
  taskIds: readonly string[],
  o: {
    mode: Mode;
    worldModel: string;
    seed: number;
    modelReward?: 'phi' | 'shaped';
    live?: FrameSink;
    cameras?: readonly string[];
  },
): Promise<Pick<TrainSetup, 'tasks' | 'split'> & { worldModel?: OnlineWorldModel }> {
  const cameras = o.cameras ? [...o.cameras] : fixedCameras(scene);
  const specs = taskIds.map((taskId) => tabletopSpec(scene, taskId, cameras));
  // workers and helper threads get the cameras only where they are not the default (same jobs as before)
  const remoteCameras = nonDefaultCameras(scene, cameras);
  const { model } = modeFlags(o.mode);
  const reward = o.modelReward ?? 'phi';
  if (model && !existsSync(o.worldModel))
    throw new InputError(`--world-model: ${o.worldModel} does not exist (--mode ${o.mode} needs a world model)`);
  const worldModel = model ? await OnlineWorldModel.open(o.worldModel, scene, specs[0], { seed: o.seed }) : undefined;
  let made = 0;
  const tap = (env: Env & FrameSource, kind: string): Env =>
    o.live ? tapFrames(env, o.live, `${shortName(env)} ${kind} ${++made}`) : env;
  const tasks = taskIds.map(
    (taskId, k): TrainTask => ({
      id: taskId,
      makeReal: async (numEnvs) => tap(await createTabletopEnv({ scene, taskId, numEnvs, cameras }), 'physics'),
      makeModel:
        worldModel && (async (numEnvs) => tap(worldModel.envFor(scene, specs[k], numEnvs, { reward }), 'world model')),
      modelReward: reward,
      branching: tabletopBranching(scene, taskId),
      recordedStates: stateNames(scene.objects.map((x) => x.name)),
      expertStart: (seed, remaining) => expertStart(scene, taskId, seed, remaining),
      instructions: tabletopInstructions(scene, taskId),
      difficulty: (seed) => sceneDifficulty(scene, sampleTask(scene, taskId, seed)),
      trainSeed: (i) => splitSeed(scene, 'train', i),
      evalSeed: (i) => splitSeed(scene, 'heldout', i),
      trainStarts: splitSize(scene, 'train'),
      remote: {
        family: 'tabletop',
        task: taskId,
        scene,
        ...(reward === 'shaped' && { modelReward: reward }),
        ...(remoteCameras && { cameras: remoteCameras }),
      },
    }),
  );
  return { tasks, worldModel, split: (local, helpers) => SplitTransport.open(local, HELPER_ENTRY, helpers) };
}

/** The entry of a rollout helper thread (TypeScript loaded through tsx). */
const HELPER_ENTRY = new URL('../../bin/rollout-helper.mjs', import.meta.url);

const shortName = (env: Env) => env.spec.id.replace(/^tabletop\//, '');

/** One policy file on `episodes` held-out episodes per task (seeds 0.., temperature 1), by the eval protocol. */
export async function heldoutResult(
  scene: Scene,
  tasks: string[],
  policy: string,
  episodes: number,
): Promise<PolicyResult> {
  const report = await runEval({
    scene,
    tasks,
    policies: [policy],
    split: 'heldout',
    episodes,
    seed: 0,
    temperature: 1,
    numEnvs: 16,
  });
  return report.policies[0];
}
