// A run root for server tests: one real rollout folder (expert in physics, states recorded), a training
// run's metrics.jsonl with a torn last line, a secret outside the root and symlinks that lead to it; and
// training run folders (config.json, metrics lines with every key the trainer writes) on request.
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { io as connect, type Socket } from 'socket.io-client';
import { type TrainMetrics, TrainMetricsSchema } from '../../src/core/metrics.ts';
import { expertPolicy } from '../../src/eval/index.ts';
import { PROTOCOL_VERSION } from '../../src/protocol/index.ts';
import { ACTION_NAMES, runEpisodes } from '../../src/physics/index.ts';
import { writeEpisodeFolder } from '../../src/rollout/index.ts';
import { loadSceneFile } from '../../src/scene/load-file.ts';
import { stateNames } from '../../src/task/index.ts';

export const SCENE = loadSceneFile('scenes/tabletop.json');

export async function makeRunRoot(): Promise<{ root: string; outside: string }> {
  const base = mkdtempSync(join(tmpdir(), 'wmrl-server-'));
  const root = join(base, 'runs');
  const outside = join(base, 'secret');
  mkdirSync(outside, { recursive: true });
  writeFileSync(join(outside, 'metrics.jsonl'), '{"secret":1}\n');
  writeFileSync(join(outside, 'secret.json'), '{"secret":1}');
  const episodes = await runEpisodes({
    scene: SCENE,
    taskId: 'tabletop/push',
    policyName: 'expert',
    episodes: 2,
    split: 'train',
    seedOffset: 0,
    numEnvs: 2,
    recordStates: true,
    makePolicy: (env) => expertPolicy(env),
  });
  writeEpisodeFolder(
    join(root, 'rollouts/push'),
    { command: 'test', actionNames: [...ACTION_NAMES], stateNames: stateNames(SCENE.objects.map((o) => o.name)) },
    episodes,
  );
  mkdirSync(join(root, 'train-a'), { recursive: true });
  writeFileSync(
    join(root, 'train-a/metrics.jsonl'),
    '{"iteration":1,"success/anchor":0.5,"debias/bias_before":-0.1}\n{"iteration":2,"success/anchor":0.75}\n{"iteration":3,"succ',
  );
  symlinkSync(outside, join(root, 'link-out'));
  mkdirSync(join(base, 'static'), { recursive: true });
  writeFileSync(join(base, 'static/index.html'), '<!doctype html><title>viewer</title>');
  symlinkSync(join(outside, 'secret.json'), join(base, 'static/leak.json'));
  return { root, outside };
}

export interface TrainingRunFixture {
  mode?: string;
  /** config.iterations */
  iterations: number;
  /** metrics lines written (iterations done) */
  rows: number;
  /** a held-out evaluation after every this many iterations (and one before training); 0: none */
  evalEvery?: number;
  /** training-clock seconds of each iteration (split over its parts), and evaluation seconds per evaluation */
  seconds?: number;
  evalSeconds?: number;
  /** anchor success rate of iteration i */
  success?: (i: number) => number;
}

/** One metrics line with every key the trainer writes. */
export function metricsLine(i: number, o: TrainingRunFixture): TrainMetrics {
  const s = o.seconds ?? 2;
  const success = o.success?.(i) ?? Math.min(1, 0.1 * i);
  const evaluated = o.evalEvery ? i % o.evalEvery === 0 : false;
  const held = (prefix: 'eval' | 'eval_initial', p: number) => ({
    [`${prefix}/success`]: p,
    [`${prefix}/ci_low`]: Math.max(0, p - 0.1),
    [`${prefix}/ci_high`]: Math.min(1, p + 0.1),
    [`${prefix}/progress`]: p,
    [`${prefix}/episodes`]: 32,
  });
  return {
    iteration: i,
    ...(i === 1 && o.evalEvery ? held('eval_initial', 0.125) : {}),
    ...(evaluated ? held('eval', Math.min(1, 0.125 + 0.05 * i)) : {}),
    'reward/anchor': success,
    'reward/wm': success / 2,
    'success/anchor': success,
    'success/wm': success / 2,
    'groups/anchor': 1,
    'groups/wm': 7,
    'groups/zero_variance': 0,
    'groups/zero_variance_anchor': 0,
    'groups/zero_variance_wm': 0,
    'groups/wm_three_valued': 3,
    'hybrid/anchor_weight': 1,
    'hybrid/wm_weight': 1,
    'steps/physics': 500 * i,
    'steps/world_model': 1500 * i,
    'debias/pairs': 100 * i,
    'debias/bias_before': -0.1 / i,
    'debias/bias_after': -0.01 / i,
    'denoise/w': 1 - 0.01 * i,
    'denoise/eta2': 0.1,
    'losses/policy': 0,
    'losses/kl': 0.004,
    'losses/entropy': 2,
    'losses/clip_fraction': 0.05,
    'losses/logp_gap': 0,
    'samples/rows': 600,
    'evolution/generation': 0,
    'evolution/level': 1,
    'agentbrew/relabelled': 0,
    'repeat/penalty': 0,
    'groups/branched': 7,
    'branch/pool': 100,
    'refresh/count': 0,
    'refresh/transitions': 0,
    'refresh/val_mse': 0,
    'time/physics_s': s / 2,
    'time/world_model_s': s / 4,
    'time/training_s': s / 4,
    'time/refresh_s': 0,
    'time/eval_s': evaluated ? (o.evalSeconds ?? 10) : 0,
    'time/fidelity_s': 0,
    'time/policy_inference_s': s / 8,
    step: i,
  } as TrainMetrics;
}

/** A training run folder as `wmrl train` leaves it: config.json ({ config, tasks }) and metrics.jsonl. */
export function writeTrainingRun(dir: string, o: TrainingRunFixture): TrainMetrics[] {
  mkdirSync(dir, { recursive: true });
  const config = { mode: o.mode ?? 'wmrl', iterations: o.iterations, seed: 0, evalEvery: o.evalEvery ?? 0 };
  writeFileSync(
    join(dir, 'config.json'),
    `${JSON.stringify({ config, tasks: ['tabletop/push', 'tabletop/stack'] })}\n`,
  );
  const rows = Array.from({ length: o.rows }, (_, k) => TrainMetricsSchema.parse(metricsLine(k + 1, o)));
  writeFileSync(join(dir, 'metrics.jsonl'), rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return rows;
}

/** A socket.io client of the viewer server at `url` (any token query dropped: `auth` carries it). */
export function viewerSocket(url: string, auth: Record<string, unknown> = { protocol: PROTOCOL_VERSION }): Socket {
  return connect(url.replace(/\/\?.*$/, ''), { auth, transports: ['websocket'], reconnection: false, forceNew: true });
}
