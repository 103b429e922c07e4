// Small, valid episode and demo folders for the shipped scene, made without physics (fast): real
// train seeds and instructions, tokens within the bins, finite states. Tests then break one thing.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadScene } from '../../src/cli/scene.ts';
import { DEMOS_FORMAT, writeDemoFolder, type Demo } from '../../src/demos/index.ts';
import { ACTION_NAMES } from '../../src/physics/index.ts';
import { writeEpisodeFolder, type StoredEpisode } from '../../src/rollout/index.ts';
import type { CommitOptions } from '../../src/store/index.ts';
import { sampleTask, splitSeed, stateNames } from '../../src/task/index.ts';

export const scene = loadScene(undefined);
export const STATE_NAMES = stateNames(scene.objects.map((o) => o.name));
export const A = ACTION_NAMES.length;
export const S = STATE_NAMES.length;

/** `n` episodes of `taskId` on train seeds 0..n-1, `length` steps each. */
export function fakeEpisodes(n: number, length = 4, taskId = 'tabletop/push'): StoredEpisode[] {
  return Array.from({ length: n }, (_, k) => {
    const seed = splitSeed(scene, 'train', k);
    const task = sampleTask(scene, taskId, seed);
    return {
      task: taskId,
      seed,
      split: 'train' as const,
      policy: 'expert',
      instruction: task.instruction,
      length,
      success: false,
      return: 0,
      progress: 0.5,
      actions: Int32Array.from({ length: length * A }, (_, j) => (j % A === A - 1 ? (j + k) % 2 : (j * 7 + k) % 3)),
      rewards: new Float32Array(length),
      states: Float32Array.from({ length: (length + 1) * S }, (_, j) => 0.01 * ((j + k) % 17)),
    };
  });
}

export function writeFakeRun(dir: string, n = 3, o: { states?: boolean; command?: string } = {}): StoredEpisode[] {
  const eps = fakeEpisodes(n);
  const withStates = o.states ?? true;
  writeEpisodeFolder(
    dir,
    {
      command: o.command ?? 'wmrl rollout --fake',
      actionNames: [...ACTION_NAMES],
      stateNames: withStates ? STATE_NAMES : [],
    },
    withStates ? eps : eps.map((e) => ({ ...e, states: undefined })),
  );
  return eps;
}

/** A demo folder with labels = executed tokens and one counterfactual record per episode. */
export function writeFakeDemos(dir: string, n = 2, opts: CommitOptions = {}): Demo[] {
  const demos: Demo[] = fakeEpisodes(n).map((e) => {
    const task = sampleTask(scene, e.task, e.seed);
    const other = scene.objects.findIndex(
      (_, o) => o !== task.object && !(task.target.kind === 'object' && task.target.index === o),
    );
    return {
      ...e,
      labels: Int32Array.from(e.actions),
      counterfactual: [{ step: 1, object: other, tokens: [1, 1, 1, 1, 0] }],
    };
  });
  writeDemoFolder(
    dir,
    {
      format: DEMOS_FORMAT,
      scene: join(import.meta.dirname, '../../scenes/tabletop.json'),
      noise: 0,
      seed: 0,
      labels: 'expert',
      observations: 're-simulate',
    },
    'wmrl collect --fake',
    scene,
    demos,
    opts,
  );
  return demos;
}

/** Rewrites one little-endian 4-byte value of a file. */
export function poke(path: string, word: number, value: number, kind: 'int' | 'float' = 'int'): void {
  const b = readFileSync(path);
  if (kind === 'int') b.writeInt32LE(value, 4 * word);
  else b.writeFloatLE(value, 4 * word);
  writeFileSync(path, b);
}

/** Edits index.json through a function of its parsed JSON. */
export function editJson(path: string, edit: (j: any) => void): void {
  const j = JSON.parse(readFileSync(path, 'utf8'));
  edit(j);
  writeFileSync(path, JSON.stringify(j));
}
