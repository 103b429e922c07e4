// The scripted expert as a labeller: at every state an episode visits, whoever acts, it records the clean
// tokens it would choose there, and at approach-phase steps the tokens it would choose had the instruction
// named each other object (counterfactual labels: the same image, another instruction, another action).
// Two policies execute around it: the expert itself with token noise (DART demonstrations), and a learner
// mixed with the expert (DAgger rounds).
import { DRAW, drawRng } from '../core/rng.ts';
import { actionBins } from '../core/spec.ts';
import type { BatchAction, ResetInfo } from '../env/types.ts';
import { ACTION_NAMES, ScriptedExpert, type TabletopEnv } from '../physics/index.ts';
import { noiseTokens, type Policy, type StepContext, type StoredEpisode, takeSlots } from '../rollout/index.ts';
import type { Scene } from '../scene/index.ts';
import { type TaskInstance, usesReservedPair } from '../task/index.ts';

export type Demo = StoredEpisode & { labels: Int32Array; counterfactual: CounterfactualLabel[] };

/** The same episode with another object to manipulate: same layout and target, the instruction with
 *  the object's phrase swapped (null when that object is the target, or when the object and the target
 *  are a pair reserved for held-out seeds: no training row may name one). */
export function counterfactualTask(scene: Scene, task: TaskInstance, object: number): TaskInstance | null {
  if (object === task.object || (task.target.kind === 'object' && task.target.index === object)) return null;
  if (usesReservedPair(scene, { ...task, object })) return null;
  const from = scene.objects[task.object].words;
  const k = from.findIndex((w) => task.instruction.includes(w));
  if (k < 0)
    throw new Error(`instruction "${task.instruction}" does not name object ${scene.objects[task.object].name}`);
  const to = scene.objects[object].words;
  return { ...task, object, instruction: task.instruction.replace(from[k], to[k] ?? to[0]) };
}

/** One counterfactual label: at step `step` of the episode, had the instruction named `object`, the
 *  expert would have chosen `tokens` (recorded only while both experts are still approaching). */
export interface CounterfactualLabel {
  step: number;
  object: number;
  tokens: number[];
}

/** An expert that reads the real state but another object's task (cached per real task, so its phase
 *  memory persists through the episode). */
function counterfactualExpert(env: TabletopEnv, object: number): ScriptedExpert {
  const cache = new Map<TaskInstance, TaskInstance | null>();
  const taskOf = (i: number): TaskInstance | null => {
    const real = env.task(i);
    if (!cache.has(real)) cache.set(real, counterfactualTask(env.scene, real, object));
    return cache.get(real)!;
  };
  return new ScriptedExpert({
    numEnvs: env.numEnvs,
    scene: env.scene,
    state: (i) => env.state(i),
    task: (i) => taskOf(i) ?? env.task(i),
  });
}

/** Per episode seed: the expert's clean tokens at every step, and its counterfactual labels. */
export class ExpertLabeller {
  readonly labels = new Map<number, number[]>();
  readonly counterfactual = new Map<number, CounterfactualLabel[]>();
  private readonly expert: ScriptedExpert;
  private readonly others: { object: number; expert: ScriptedExpert }[];
  private readonly slotSeed: Int32Array;

  constructor(private readonly env: TabletopEnv) {
    this.expert = new ScriptedExpert(env);
    this.others = env.scene.objects.map((_, o) => ({ object: o, expert: counterfactualExpert(env, o) }));
    this.slotSeed = new Int32Array(env.numEnvs).fill(-1);
  }

  onReset(envs: number[], info: ResetInfo): void {
    for (const i of envs) {
      this.slotSeed[i] = info.seeds[i];
      this.labels.set(info.seeds[i], []);
      this.counterfactual.set(info.seeds[i], []);
    }
  }

  /** The expert's clean tokens for every slot at the current states, recorded for the live slots. */
  label(ctx: StepContext): BatchAction {
    const { env, expert } = this;
    const clean = expert.act(ctx.keys);
    const alt = this.others.map((x) => x.expert.act(ctx.keys));
    for (let i = 0; i < env.numEnvs; i++) {
      const rec = this.labels.get(this.slotSeed[i]);
      if (!rec || ctx.keys[i] < 0) continue;
      const task = env.task(i);
      this.others.forEach((x, k) => {
        if (x.object === task.object || counterfactualTask(env.scene, task, x.object) === null) return;
        if (expert.phase(i) !== 'approach' || x.expert.phase(i) !== 'approach') return;
        this.counterfactual
          .get(this.slotSeed[i])!
          .push({ step: ctx.steps[i], object: x.object, tokens: ACTION_NAMES.map((n) => alt[k][n][i]) });
      });
      for (const name of ACTION_NAMES) rec.push(clean[name][i]);
    }
    return clean;
  }

  /** The episodes with their labels, as demonstrations. */
  demos(episodes: readonly StoredEpisode[]): Demo[] {
    return episodes.map((e) => ({
      ...e,
      labels: Int32Array.from(this.labels.get(e.seed)!.slice(0, e.actions.length)),
      counterfactual: this.counterfactual.get(e.seed)!.filter((x) => x.step < e.length),
    }));
  }
}

/** The expert acting with token noise (drawn per episode and step, so the demonstrations do not depend
 *  on --num-envs), labelled with its clean tokens (DART). */
export function noisyExpert(env: TabletopEnv, noise: number, seed: number): Policy & { labeller: ExpertLabeller } {
  const labeller = new ExpertLabeller(env);
  const dims = actionBins(env.spec);
  return {
    labeller,
    onReset: (envs, info) => labeller.onReset(envs, info),
    act(_obs, ctx) {
      const clean = labeller.label(ctx);
      const out: BatchAction = {};
      for (const name of ACTION_NAMES) out[name] = Int32Array.from(clean[name]);
      if (noise > 0)
        for (let i = 0; i < env.numEnvs; i++)
          if (ctx.keys[i] >= 0)
            noiseTokens(dims, out, i, noise, drawRng(seed, ctx.keys[i], ctx.steps[i], DRAW.tokenNoise));
      return { actions: out };
    },
  };
}

/** DAgger's rollout policy: per (episode, step), the expert's clean tokens with probability `expertShare`,
 *  else the learner's; the labeller records the expert's tokens at every visited state either way. */
export function learnerWithExpert(
  env: TabletopEnv,
  learner: Policy,
  expertShare: number,
  seed: number,
): Policy & { labeller: ExpertLabeller } {
  if (!(expertShare >= 0 && expertShare <= 1))
    throw new RangeError(`expert share must be in [0, 1], got ${expertShare}`);
  const labeller = new ExpertLabeller(env);
  return {
    labeller,
    onReset(envs, info) {
      labeller.onReset(envs, info);
      learner.onReset?.(envs, info);
    },
    async act(obs, ctx) {
      const clean = labeller.label(ctx);
      const own = await learner.act(obs, ctx);
      const expertActs = Array.from(
        ctx.keys,
        (key, i) =>
          key >= 0 && expertShare > 0 && drawRng(seed, key, ctx.steps[i], DRAW.expertShare).uniform() < expertShare,
      );
      return { actions: takeSlots(own.actions, clean, expertActs) };
    },
  };
}
