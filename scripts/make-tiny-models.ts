// npm run models:tiny — writes models/tiny-policy.{onnx,json} and models/tiny-worldmodel.{onnx,json}:
// small, seeded, UNTRAINED networks shaped for the tabletop scene (observation/action names and sizes
// from its env spec, vocabulary from its instruction templates and object/target words). They give
// the viewer, demos and tests real model files; trained models come from the trainer. Deterministic:
// running this again writes byte-identical files.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadSceneFile, DEFAULT_SCENE_PATH } from '../src/scene/load-file.ts';
import type { Scene } from '../src/scene/schema.ts';
import { fixedCameras, tabletopSpec } from '../src/tabletop/spec.ts';
import { Graph } from '../src/nn/ir.ts';
import { ParamStore } from '../src/nn/params.ts';
import { type WorldModelNetConfig, worldModelForwardBuilder } from '../src/nn/nets/worldmodel.ts';
import { saveWorldModel } from '../src/nn/nets/worldmodel-file.ts';
import { WordTokenizer, splitWords } from '../src/policy/tokenizer.ts';
import { VLA_SIZES_TINY, specInterfaceHash, vlaConfigFromSpec } from '../src/policy/spec-config.ts';
import { vlaForwardBuilder } from '../src/policy/vla.ts';
import { savePolicy } from '../src/policy/model.ts';

const SEED = 0;
const PRODUCER = 'scripts/make-tiny-models.ts';

/** Every instruction template and every object/target word list of the scene. */
export function sceneCorpus(scene: Scene): string[] {
  const out: string[] = [];
  const walk = (node: unknown, key: string): void => {
    if (Array.isArray(node)) {
      if ((key === 'words' || key === 'templates') && node.every((x) => typeof x === 'string'))
        out.push(...node.map((t: string) => t.replace(/\{\w+\}/g, ' ')));
      else node.forEach((x) => walk(x, key));
    } else if (node && typeof node === 'object') for (const [k, v] of Object.entries(node)) walk(v, k);
  };
  walk(scene, '');
  return out;
}

/** Tabletop state size for the world model: ee pos (3) + yaw (1) + fingers (2) + per object pos (3),
 *  quaternion (4) and linear velocity (3), as in TabletopState. */
export function tabletopStateDim(scene: Scene): number {
  return 6 + 10 * scene.objects.length;
}

export async function makeTinyModels(
  outDir: string,
  scenePath = DEFAULT_SCENE_PATH,
): Promise<{ policy: string; worldModel: string }> {
  const scene = loadSceneFile(scenePath);
  const spec = tabletopSpec(scene, scene.tasks[0].id, fixedCameras(scene));
  const corpus = sceneCorpus(scene);
  const longest = Math.max(
    ...scene.tasks.flatMap((t) => t.templates.map((x) => splitWords(x.replace(/\{\w+\}/g, 'w w')).length)),
  );
  const tokenizer = WordTokenizer.fromCorpus(corpus, { maxLength: Math.max(8, longest) });
  const specHash = specInterfaceHash(spec);

  const policyConfig = vlaConfigFromSpec(spec, tokenizer.config, VLA_SIZES_TINY);
  const gp = new Graph();
  vlaForwardBuilder(policyConfig)(gp);
  const policy = resolve(outDir, 'tiny-policy.onnx');
  await savePolicy(policy, policyConfig, ParamStore.init(gp.params, SEED), {
    provenance: {
      producer: PRODUCER,
      seed: SEED,
      steps: 0,
      notes:
        `untrained (seeded initialisation) for ${scene.name}; action heads ` +
        `${policyConfig.actions.map((a) => `${a.name}:${a.n}`).join(' ')}`,
    },
    specHash,
  });

  const wmConfig: WorldModelNetConfig = {
    stateDim: tabletopStateDim(scene),
    actionDim: spec.action.length,
    members: 3,
    hidden: [32, 32],
    act: 'silu',
  };
  const gw = new Graph();
  worldModelForwardBuilder(wmConfig)(gw);
  const worldModel = resolve(outDir, 'tiny-worldmodel.onnx');
  await saveWorldModel(worldModel, wmConfig, ParamStore.init(gw.params, SEED), {
    provenance: {
      producer: PRODUCER,
      seed: SEED,
      steps: 0,
      notes:
        `untrained, identity normalisers; state = TabletopState flattened (${scene.objects.length} objects), ` +
        'action = one value per action dimension',
    },
    specHash,
  });
  return { policy, worldModel };
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const out = resolve(process.argv[2] ?? 'models');
  const written = await makeTinyModels(out);
  console.log(JSON.stringify({ wrote: written }));
}
