// The demonstration folder: a wmrl-episodes/2 run folder (executed tokens, rewards, states) plus
// labels.bin (Int32 clean expert tokens, laid out like the actions), counterfactual.bin (Int32
// records: episode, step, object, tokens) and demos.json (how it was collected, and its scene).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { checkFolder, readInputJson, readWords } from '../core/input-file.ts';
import { ACTION_NAMES, fixedCameras, tabletopSpec } from '../physics/index.ts';
import { actionBins } from '../core/spec.ts';
import { episodeFolderParts, readEpisodeFolder, type EpisodeContract } from '../rollout/index.ts';
import type { Scene } from '../scene/index.ts';
import { loadSceneFile } from '../scene/load-file.ts';
import { SceneError } from '../scene/load.ts';
import { type CommitOptions, commitFiles } from '../store/index.ts';
import { sampleTask, stateNames, type TaskInstance, usesReservedPair } from '../task/index.ts';
import { counterfactualTask, type Demo } from './labels.ts';

export const DEMOS_FORMAT = 'wmrl-demos/1';

export const DemosMetaSchema = z.object({
  format: z.literal(DEMOS_FORMAT),
  scene: z.string(),
  noise: z.number().min(0).max(1),
  seed: z.number().int(),
  /** 'expert': labels.bin holds the clean expert tokens (DART); the executed ones are in episodes.bin. */
  labels: z.literal('expert'),
  observations: z.literal('re-simulate'),
});
export type DemosMeta = z.infer<typeof DemosMetaSchema>;

/** What a physics episode folder of `scene` must hold: its action bins, state layout, tasks and step limits. */
export function sceneContract(scene: Scene): EpisodeContract & { states: string[] } {
  return {
    actions: actionBins(tabletopSpec(scene, scene.tasks[0].id, fixedCameras(scene))),
    states: stateNames(scene.objects.map((x) => x.name)),
    maxSteps: Object.fromEntries(scene.tasks.map((t) => [t.id, t.maxEpisodeSteps])),
  };
}

/** Writes a demonstration folder (the episode folder, labels, counterfactual records, demos.json) as one
 *  unit: a crash leaves the previous folder or the new one. */
export function writeDemoFolder(
  dir: string,
  meta: DemosMeta,
  command: string,
  scene: Scene,
  demos: Demo[],
  opts: CommitOptions = {},
): void {
  const { parts } = episodeFolderParts(
    dir,
    { command, actionNames: [...ACTION_NAMES], stateNames: stateNames(scene.objects.map((x) => x.name)) },
    demos,
  );
  const total = demos.reduce((s, d) => s + d.labels.length, 0);
  const labels = new Int32Array(total);
  let k = 0;
  for (const d of demos) {
    labels.set(d.labels, k);
    k += d.labels.length;
  }
  const cf = demos.flatMap((d, di) => d.counterfactual.map((x) => [di, x.step, x.object, ...x.tokens]));
  commitFiles(
    [
      ...parts,
      { path: join(dir, 'labels.bin'), data: new Uint8Array(labels.buffer) },
      { path: join(dir, 'counterfactual.bin'), data: new Uint8Array(Int32Array.from(cf.flat()).buffer) },
      { path: join(dir, 'demos.json'), data: `${JSON.stringify(DemosMetaSchema.parse(meta), null, 2)}\n` },
    ],
    opts,
  );
}

/** The scene demos.json names (a scene that cannot be loaded is an error naming demos.json too). */
function demoScene(metaPath: string, meta: DemosMeta): Scene {
  try {
    return loadSceneFile(meta.scene);
  } catch (err) {
    if (err instanceof SceneError)
      throw new InputError(`${metaPath}: $.scene: the scene it names cannot be loaded:\n${err.message}`);
    throw err;
  }
}

/** The task of each episode, re-sampled from its seed; the recorded instruction must match it. */
function episodeTasks(indexPath: string, scene: Scene, demos: readonly Demo[]): TaskInstance[] {
  return demos.map((d, i) => {
    let task: TaskInstance;
    try {
      task = sampleTask(scene, d.task, d.seed);
    } catch (err) {
      throw new InputError(`${indexPath}: $.episodes[${i}].seed: ${(err as Error).message}`);
    }
    if (task.instruction !== d.instruction)
      throw new InputError(
        `${indexPath}: $.episodes[${i}].instruction: "${d.instruction}", ` +
          `but seed ${d.seed} of ${d.task} says "${task.instruction}"`,
      );
    return task;
  });
}

/** A token outside its bins: the message, or null when it is fine. */
function badToken(c: EpisodeContract, j: number, v: number): string | null {
  const { name, n } = c.actions[j];
  return v >= 0 && v < n ? null : `${name} = ${v} is not a bin in [0, ${n})`;
}

function readLabels(path: string, demos: Demo[], c: EpisodeContract): void {
  const view = readWords(path, 'expert labels');
  const A = c.actions.length;
  const need = demos.reduce((s, d) => s + d.actions.length, 0);
  if (view.byteLength / 4 !== need)
    throw new InputError(
      `${path}: ${view.byteLength / 4} labels, ` +
        `but the ${demos.length} episodes of index.json have ${need / A} steps x ${A} actions = ${need}`,
    );
  let k = 0;
  demos.forEach((d, i) => {
    for (let j = 0; j < d.labels.length; j++, k++) {
      const bad = badToken(c, j % A, (d.labels[j] = view.getInt32(4 * k, true)));
      if (bad) throw new InputError(`${path}: record ${i} ($.episodes[${i}]), step ${Math.floor(j / A)}: label ${bad}`);
    }
  });
}

function readCounterfactual(
  path: string,
  demos: Demo[],
  tasks: TaskInstance[],
  scene: Scene,
  c: EpisodeContract,
): void {
  const view = readWords(path, 'counterfactual labels');
  const A = c.actions.length;
  const R = 3 + A;
  const n = view.byteLength / 4;
  if (n % R !== 0)
    throw new InputError(
      `${path}: ${n} values is not a whole number of ${R}-value records (episode, step, object, ${A} tokens)`,
    );
  for (let r = 0; r < n / R; r++) {
    const at = (f: number) => view.getInt32(4 * (r * R + f), true);
    const [ei, step, object] = [at(0), at(1), at(2)];
    const d = demos[ei];
    const where = `${path}: record ${r}`;
    if (!d) throw new InputError(`${where}: episode ${ei} does not exist (the folder has ${demos.length})`);
    if (step < 0 || step >= d.length)
      throw new InputError(`${where}: step ${step} is outside episode ${ei} (${d.length} steps)`);
    if (object < 0 || object >= scene.objects.length)
      throw new InputError(`${where}: object ${object} is not an object of the scene (it has ${scene.objects.length})`);
    if (usesReservedPair(scene, { ...tasks[ei], object }))
      throw new InputError(
        `${where}: object ${object} (${scene.objects[object].name}) with episode ${ei}'s target is a pair ` +
          `reserved for held-out seeds (${tasks[ei].taskId}); an older build wrote such labels: collect the folder again`,
      );
    if (!counterfactualTask(scene, tasks[ei], object))
      throw new InputError(
        `${where}: object ${object} (${scene.objects[object].name}) ` +
          `is what episode ${ei} already manipulates or targets`,
      );
    const tokens = Array.from({ length: A }, (_, j) => at(3 + j));
    tokens.forEach((v, j) => {
      const bad = badToken(c, j, v);
      if (bad) throw new InputError(`${where}: token ${bad}`);
    });
    d.counterfactual.push({ step, object, tokens });
  }
}

/** Reads and checks a folder written by `wmrl collect` against the scene demos.json names (or `scene`):
 *  the episode folder (see readEpisodeFolder), seeds and instructions, labels.bin of the exact length
 *  and within the bins, counterfactual records with a real episode, step, object and tokens. */
export function readDemoFolder(dir: string, scene?: Scene): { meta: DemosMeta; demos: Demo[] } {
  checkFolder(dir, 'a demonstration folder (wmrl collect)');
  const metaPath = join(dir, 'demos.json');
  const meta = readInputJson(
    metaPath,
    DemosMetaSchema,
    'demonstration metadata',
    `is ${dir} a folder written by wmrl collect?`,
  );
  const sc = scene ?? demoScene(metaPath, meta);
  const contract = sceneContract(sc);
  const { episodes } = readEpisodeFolder(dir, contract);
  const demos: Demo[] = episodes.map((e) => ({ ...e, labels: new Int32Array(e.actions.length), counterfactual: [] }));
  const tasks = episodeTasks(join(dir, 'index.json'), sc, demos);
  readLabels(join(dir, 'labels.bin'), demos, contract);
  const cfPath = join(dir, 'counterfactual.bin');
  if (existsSync(cfPath)) readCounterfactual(cfPath, demos, tasks, sc, contract);
  return { meta, demos };
}
