// Expert-corrected rounds (DAgger, Ross, Gordon and Bagnell 2011). Each round rolls out the current policy
// in physics on fresh train seeds (mixed per step with the expert at a share that decays round by round),
// has the scripted expert label every visited state, adds those rows to the data and trains again; every
// round's policy is scored on the validation split and the best one is kept. A round is committed whole
// (rounds.json); a killed run continues from the last committed round, and its pretraining resumes exactly.
// Node-only.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { hashOf } from '../core/hash.ts';
import { readInputFile, readInputJson } from '../core/input-file.ts';
import { sha256Hex } from '../core/sha256.ts';
import { canonicalJson } from '../core/spec.ts';
import { type EvalReport, policySource, runEval } from '../eval/index.ts';
import { camerasOf, runEpisodes } from '../physics/index.ts';
import { sidecarPath } from '../nn/modelfile.ts';
import { loadPolicy, savePolicy } from '../policy/model.ts';
import type { Scene } from '../scene/index.ts';
import { commitFiles, hasCheckpoint, lockFolder, runKeyDiff } from '../store/index.ts';
import { DEMOS_FORMAT, readDemoFolder, writeDemoFolder } from './folder.ts';
import { type Demo, learnerWithExpert } from './labels.ts';
import { type PretrainHooks, type PretrainOptions, pretrain } from './pretrain.ts';

export const DAGGER_FORMAT = 'wmrl-dagger/1';

export interface DaggerOptions {
  scene: Scene;
  /** The scene file (written into each round's demos.json). */
  scenePath: string;
  tasks: string[];
  /** Expert demonstrations every round trains on (wmrl collect). */
  data: string;
  /** Round 0's policy (the behaviour-cloned base). */
  policy: string;
  /** Rounds folder (rounds.json, round-K/{demos,pretrain,policy.onnx}). */
  dir: string;
  rounds: number;
  /** Learner episodes per task per round. */
  episodes: number;
  /** Round k executes the expert's token with probability expertShare * decay^(k-1). */
  expertShare: number;
  decay: number;
  /** Train-split episode index of round 1's first episode; round k starts `episodes` further on. */
  seedOffset: number;
  /** Seed of the learner's sampling and the mixture draws. */
  seed: number;
  numEnvs: number;
  /** Episodes per task of each validation score. */
  validationEpisodes: number;
  /** 'previous': each round fine-tunes the previous round's policy; 'scratch': trains anew. */
  from: 'previous' | 'scratch';
  /** Pretraining of each round (data, out, runDir, init and resume are set per round). */
  train: Omit<PretrainOptions, 'data' | 'out' | 'runDir' | 'rowsDir' | 'init' | 'resume'>;
}

const ScoreSchema = z.object({
  overall: z.number(),
  tasks: z.record(z.string(), z.number()),
  seen: z.number().nullable(),
  reserved: z.number().nullable(),
});
export type ValidationScore = z.infer<typeof ScoreSchema>;

const RoundSchema = z.object({
  round: z.number().int().min(0),
  /** Round 0: the starting policy's path when the rounds began; later rounds: relative to the rounds folder. */
  policy: z.string(),
  expertShare: z.number().nullable(),
  /** Learner episodes of this round, and the rows the expert labelled on them. */
  episodes: z.number().int().min(0),
  labels: z.number().int().min(0),
  /** Success of the executed (mixed) rollouts, per task. */
  rolloutSuccess: z.record(z.string(), z.number()),
  validation: ScoreSchema,
});
export type DaggerRound = z.infer<typeof RoundSchema>;

const StateSchema = z.object({
  format: z.literal(DAGGER_FORMAT),
  key: z.record(z.string(), z.unknown()),
  rounds: z.array(RoundSchema),
});
type State = z.infer<typeof StateSchema>;

export interface DaggerHooks extends PretrainHooks {
  onRound?(r: DaggerRound): void;
  onEpisode?(): void;
}

/** The demonstration files rows are made from (the counterfactual rows where present). */
const DATA_FILES = ['episodes.bin', 'labels.bin', 'counterfactual.bin'];

const filesHash = (paths: readonly string[], flag: string): string =>
  sha256Hex(paths.map((p) => sha256Hex(readInputFile(p, `${flag} file`))).join(','));

/** What must match for a re-run to continue the same rounds (rounds may grow). The scene, the data and
 *  the starting policy count by content: a moved checkout continues its rounds, a file re-made at the same
 *  path does not. */
export function daggerKey(o: DaggerOptions): Record<string, unknown> {
  const { scene, scenePath: _p, rounds: _r, dir: _d, data, policy, train, ...rest } = o;
  return {
    scene: hashOf(canonicalJson(scene)),
    data: filesHash(
      DATA_FILES.map((f) => join(data, f)).filter((f, k) => k < 2 || existsSync(f)),
      '--data',
    ),
    policy: filesHash([policy, sidecarPath(policy)], '--policy'),
    ...rest,
    train: { ...train },
  };
}

function readState(path: string, key: Record<string, unknown>): State {
  if (!existsSync(path)) return { format: DAGGER_FORMAT, key, rounds: [] };
  const state = readInputJson(path, StateSchema, 'DAgger rounds');
  const diff = runKeyDiff(state.key, key);
  if (diff.length)
    throw new InputError(
      `${path}: made with other settings or files (${diff.map((d) => d.key).join(', ')}; --data and --policy ` +
        'count by content); use another --dir or the same flags and files',
    );
  return state;
}

/** Success on the validation split (episodes 0 .. n-1 per task, temperature 1). */
export async function validationScore(
  o: DaggerOptions,
  policy: string,
  onEpisode?: () => void,
): Promise<ValidationScore> {
  const report: EvalReport = await runEval({
    scene: o.scene,
    tasks: o.tasks,
    policies: [policy],
    split: 'validation',
    episodes: o.validationEpisodes,
    seed: 0,
    temperature: 1,
    numEnvs: o.numEnvs,
    onEpisode,
  });
  const r = report.policies[0];
  return {
    overall: r.results.overall.success_rate,
    tasks: Object.fromEntries(o.tasks.map((t) => [t, r.results[t].success_rate])),
    seen: r.pairs?.seen.success_rate ?? null,
    reserved: r.pairs?.reserved.success_rate ?? null,
  };
}

/** The learner's rollouts of round `k`, labelled by the expert (a demonstration folder's episodes). */
async function labelledRollouts(o: DaggerOptions, k: number, policy: string, share: number, hooks: DaggerHooks) {
  const source = await policySource(policy, { seed: o.seed + k, temperature: 1 });
  const demos: Demo[] = [];
  try {
    for (const taskId of o.tasks) {
      let labeller: ReturnType<typeof learnerWithExpert>['labeller'] | null = null;
      const episodes = await runEpisodes({
        scene: o.scene,
        taskId,
        policyName: `dagger round ${k}: ${policy} with the expert at ${share}`,
        cameras: source.cameras,
        episodes: o.episodes,
        split: 'train',
        seedOffset: o.seedOffset + (k - 1) * o.episodes,
        numEnvs: o.numEnvs,
        recordStates: true,
        makePolicy: (env) => {
          const p = learnerWithExpert(env, source.make(env), share, o.seed + k);
          labeller = p.labeller;
          return p;
        },
        onEpisode: () => hooks.onEpisode?.(),
      });
      demos.push(...labeller!.demos(episodes));
    }
  } finally {
    await source.close();
  }
  return demos;
}

/** Success of the executed (mixed) rollouts, per task. */
function successPerTask(demos: readonly Demo[]): Record<string, number> {
  const tasks = [...new Set(demos.map((d) => d.task))];
  return Object.fromEntries(
    tasks.map((t) => {
      const of = demos.filter((d) => d.task === t);
      return [t, of.filter((d) => d.success).length / of.length];
    }),
  );
}

/** Runs the rounds not yet in `dir`/rounds.json, then copies the round with the best validation success
 *  (the earliest on a tie) to `out`. */
export async function dagger(
  o: DaggerOptions,
  out: string,
  hooks: DaggerHooks = {},
): Promise<{ rounds: DaggerRound[]; best: DaggerRound }> {
  mkdirSync(o.dir, { recursive: true });
  const lock = lockFolder(o.dir, '--dir');
  try {
    const statePath = join(o.dir, 'rounds.json');
    const state = readState(statePath, daggerKey(o));
    const commit = () => commitFiles([{ path: statePath, data: `${JSON.stringify(state, null, 2)}\n` }]);
    if (state.rounds.length === 0) {
      const validation = await validationScore(o, o.policy, hooks.onEpisode);
      const r = {
        round: 0,
        policy: o.policy,
        expertShare: null,
        episodes: 0,
        labels: 0,
        rolloutSuccess: {},
        validation,
      };
      state.rounds.push(r);
      commit();
      hooks.onRound?.(r);
    }
    // every round trains a network reading the starting policy's cameras, through its kind of second-camera
    // encoder (its content keys the rounds)
    const start = (await loadPolicy(o.policy)).config;
    const cameras = camerasOf(start.cameras);
    const secondEncoder = start.secondConv ? ('light' as const) : undefined;
    for (let k = state.rounds.length; k <= o.rounds; k++) {
      const share = o.expertShare * o.decay ** (k - 1);
      const roundDir = join(o.dir, `round-${k}`);
      const demosDir = join(roundDir, 'demos');
      const runDir = join(roundDir, 'pretrain');
      const previous = policyPath(o, state.rounds[k - 1]);
      let demos: Demo[];
      if (existsSync(join(demosDir, 'demos.json'))) demos = readDemoFolder(demosDir, o.scene).demos;
      else {
        demos = await labelledRollouts(o, k, previous, share, hooks);
        const meta = {
          format: DEMOS_FORMAT,
          scene: o.scenePath,
          noise: 0,
          seed: o.seed + k,
          labels: 'expert',
          observations: 're-simulate',
        } as const;
        writeDemoFolder(demosDir, meta, `wmrl dagger round ${k}`, o.scene, demos);
      }
      const policy = join(`round-${k}`, 'policy.onnx');
      const data = [o.data, ...Array.from({ length: k }, (_, j) => join(o.dir, `round-${j + 1}`, 'demos'))];
      const trained = await pretrain(
        {
          ...o.train,
          cameras,
          secondEncoder,
          data,
          out: join(o.dir, policy),
          runDir,
          rowsDir: join(o.dir, 'rows'),
          init: o.from === 'previous' ? previous : undefined,
          resume: hasCheckpoint(runDir),
        },
        hooks,
      );
      if (trained.stopped) throw new Error(`stopped in round ${k} at step ${trained.step}; run again to resume`);
      const validation = await validationScore(o, join(o.dir, policy), hooks.onEpisode);
      const r: DaggerRound = {
        round: k,
        policy,
        expertShare: share,
        episodes: demos.length,
        labels: demos.reduce((s, d) => s + d.length, 0),
        rolloutSuccess: successPerTask(demos),
        validation,
      };
      state.rounds.push(r);
      commit();
      hooks.onRound?.(r);
    }
    const rounds = state.rounds.slice(0, o.rounds + 1);
    const best = rounds.reduce((a, b) => (b.validation.overall > a.validation.overall ? b : a));
    await exportRound(o, best, out);
    return { rounds, best };
  } finally {
    lock.release();
  }
}

/** Round 0's policy is the user's file (its content keys the rounds; its recorded path may be an older
 *  one); later rounds' live in the rounds folder. */
function policyPath(o: DaggerOptions, r: DaggerRound): string {
  return r.round === 0 ? o.policy : join(o.dir, r.policy);
}

/** Saves the chosen round's weights at `out` (the .onnx and sidecar as one commit), its provenance
 *  naming the round and its validation success. */
async function exportRound(o: DaggerOptions, r: DaggerRound, out: string): Promise<void> {
  const p = await loadPolicy(policyPath(o, r));
  const score = `${(100 * r.validation.overall).toFixed(1)}%`;
  const chosen = `wmrl dagger: round ${r.round} of ${o.rounds}, chosen on validation (${score})`;
  const notes = r.round === 0 ? chosen : `${chosen}; ${p.sidecar.provenance.notes ?? ''}`;
  const provenance = { ...p.sidecar.provenance, producer: 'wmrl dagger', notes };
  await savePolicy(out, p.config, p.params, { provenance, specHash: p.sidecar.specHash });
}
