// AgentBrew offline: a stored batch of raw rollouts (a `wmrl rollout` folder with states) turned into
// behaviour-cloning data for the policy that will be fine-tuned on it. Rejection sampling keeps the
// successes; AgentBrew also keeps every failure whose final state satisfies another instruction of
// its family, relabelled with that instruction (train pairs only), and optionally weights each step by
// its PMI with the instruction (rows drawn in proportion). Observations are re-simulated in physics.
import { InputError } from '../core/errors.ts';
import type { BatchObs } from '../env/types.ts';
import { type BcDataset, BcTrainer } from '../policy/bc.ts';
import { loadPolicy, savePolicy } from '../policy/model.ts';
import { PolicySampler } from '../policy/sampler.ts';
import { WordTokenizer } from '../policy/tokenizer.ts';
import type { VlaConfig } from '../policy/vla.ts';
import { readEpisodeFolder, type StoredEpisode } from '../rollout/index.ts';
import type { Scene } from '../scene/index.ts';
import { splitOf, stateSize, tabletopInstructions } from '../task/index.ts';
import { applyPmi, type Span } from '../trainer/index.ts';
import type { PolicySample } from '../trainer/index.ts';
import { type Demo, demosToDataset, sceneContract } from '../demos/index.ts';

export const BREW_METHODS = ['rejection', 'agentbrew'] as const;
export type BrewMethod = (typeof BREW_METHODS)[number];

/** The episodes a method keeps, as demonstrations labelled with their own executed tokens; `relabelled`
 *  counts the failures kept under another instruction. */
export function brewDemos(
  scene: Scene,
  episodes: readonly StoredEpisode[],
  method: BrewMethod,
): { demos: Demo[]; relabelled: number } {
  const S = stateSize(scene.objects.length);
  const instructions = new Map<string, ReturnType<typeof tabletopInstructions>>();
  const demos: Demo[] = [];
  let relabelled = 0;
  for (const e of episodes) {
    if (splitOf(scene, e.seed) !== 'train')
      throw new InputError(
        `--data: episode ${e.task} seed ${e.seed} is on the ${splitOf(scene, e.seed)} split; ` +
          'brew trains on train-split rollouts only (wmrl rollout --split train)',
      );
    const keep = (instruction: string) =>
      demos.push({ ...e, instruction, labels: Int32Array.from(e.actions), counterfactual: [] });
    if (e.success) {
      keep(e.instruction);
      continue;
    }
    if (method !== 'agentbrew') continue;
    if (!e.states)
      throw new InputError(`episode ${e.task} seed ${e.seed}: no recorded states (relabelling needs them)`);
    if (!instructions.has(e.task)) instructions.set(e.task, tabletopInstructions(scene, e.task));
    const [text] = instructions.get(e.task)!.satisfied(e.seed, e.states.subarray(e.length * S, (e.length + 1) * S));
    if (text === undefined) continue;
    keep(text);
    relabelled++;
  }
  return { demos, relabelled };
}

/** The BC dataset of the kept demonstrations; with `pmi`, row weights from `sampler` (the policy to be
 *  fine-tuned), normalised to mean 1 per episode. */
export async function brewDataset(
  scene: Scene,
  demos: Demo[],
  config: VlaConfig,
  tokenizer: WordTokenizer,
  pmi: PolicySampler | null,
): Promise<BcDataset> {
  const ds = await demosToDataset(scene, demos, config, tokenizer);
  if (pmi) ds.weights = await pmiRowWeights(scene, demos, ds, config, pmi);
  return ds;
}

/** One StepSample per dataset row, episode by episode, and the PMI weights mapped back to the rows. */
async function pmiRowWeights(
  scene: Scene,
  demos: Demo[],
  ds: BcDataset,
  config: VlaConfig,
  sampler: PolicySampler,
): Promise<Float32Array> {
  const [h, w] = config.imageSize;
  const px = h * w * 3;
  const rowsOf = demos.map((): number[] => []);
  ds.episode!.forEach((d, row) => rowsOf[d].push(row));
  const samples: PolicySample[] = [];
  const spans: Span[] = [];
  const tasks = [...new Set(demos.map((d) => d.task))];
  const families = new Map(tasks.map((t) => [t, tabletopInstructions(scene, t)]));
  demos.forEach((d, k) => {
    const from = samples.length;
    for (const row of rowsOf[k]) {
      const obs: BatchObs = { [config.instruction]: [d.instruction] };
      for (const cam of config.cameras) obs[cam] = ds.images[cam].subarray(row * px, (row + 1) * px);
      if (config.proprio) {
        const p = config.proprio.dim;
        obs[config.proprio.name] = ds.proprio!.subarray(row * p, (row + 1) * p);
      }
      const tokens = Object.fromEntries(config.actions.map((a) => [a.name, ds.labels[a.name][row]]));
      samples.push({ obs, tokens, behaviourLogp: 0, refLogp: 0, advantage: 0, weight: 1 });
    }
    spans.push({ task: tasks.indexOf(d.task), seed: d.seed, from, to: samples.length });
  });
  await applyPmi(sampler, samples, spans, (t) => families.get(tasks[t]));
  const weights = new Float32Array(ds.size);
  let at = 0;
  for (const rows of rowsOf) for (const row of rows) weights[row] = samples[at++].weight;
  return weights;
}

export interface BrewOptions {
  scene: Scene;
  /** A `wmrl rollout` folder (states recorded). */
  data: string;
  /** The policy fine-tuned (and, with pmi, the one whose PMI weights the rows). */
  policy: string;
  out: string;
  method: BrewMethod;
  pmi: boolean;
  steps: number;
  batch: number;
  lr: number;
  seed: number;
  threads: number;
}

export interface BrewSummary {
  out: string;
  episodes: number;
  kept: number;
  relabelled: number;
  rows: number;
  loss: number;
}

/** Selects (and relabels) the episodes, re-simulates them, fine-tunes the policy by behaviour cloning
 *  for `steps` steps and writes it to `out`. */
export async function runBrew(
  o: BrewOptions,
  hooks: { log?(line: string): void; onStep?(step: number, loss: number): void } = {},
): Promise<BrewSummary> {
  const { episodes } = readEpisodeFolder(o.data, sceneContract(o.scene));
  const model = await loadPolicy(o.policy);
  const { demos, relabelled } = brewDemos(o.scene, episodes, o.method);
  if (!demos.length) throw new InputError(`--data: ${o.data} has no episode that ${o.method} keeps`);
  hooks.log?.(`${o.method}: ${demos.length} of ${episodes.length} episodes kept (${relabelled} relabelled)`);
  const sampler = o.pmi ? await PolicySampler.create(model.config, model.params, { threads: o.threads }) : null;
  let ds: BcDataset;
  try {
    ds = await brewDataset(o.scene, demos, model.config, new WordTokenizer(model.config.tokenizer), sampler);
  } finally {
    await sampler?.close();
  }
  const trainer = await BcTrainer.create(model.config, model.params, {
    batch: o.batch,
    lr: o.lr,
    totalSteps: o.steps,
    seed: o.seed,
    runtime: { threads: o.threads },
  });
  let loss = 0;
  try {
    for (let k = 0; k < o.steps; k++) {
      const r = await trainer.step(ds);
      loss = r.loss;
      hooks.onStep?.(r.step, r.loss);
    }
    await savePolicy(o.out, model.config, trainer.params(), {
      provenance: {
        producer: 'wmrl brew',
        seed: o.seed,
        steps: o.steps,
        notes:
          `${o.method}${o.pmi ? ' + PMI weights' : ''} on ${demos.length} of ${episodes.length} episodes ` +
          `(${relabelled} relabelled) from ${o.data}, fine-tuning ${o.policy}; batch ${o.batch}, lr ${o.lr}`,
      },
      specHash: model.sidecar.specHash,
    });
  } finally {
    await trainer.close();
  }
  return { out: o.out, episodes: episodes.length, kept: demos.length, relabelled, rows: ds.size, loss };
}
