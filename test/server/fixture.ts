// A run root for server tests: one real rollout folder (expert in physics, states recorded), a training
// run's metrics.jsonl with a torn last line, a secret outside the root and symlinks that lead to it.
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expertPolicy } from '../../src/eval/index.ts';
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
