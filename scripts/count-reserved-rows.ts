// node bin/run-ts.mjs scripts/count-reserved-rows.ts DIR... — counts the counterfactual records of
// demonstration folders (wmrl collect, or a DAgger round's demos) that name a reserved (held-out)
// object-target pair, per task, and prints one JSON line per folder. Reads counterfactual.bin raw, so it
// also counts folders the reader now refuses for exactly that reason. Each record is one training row.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadScene } from '../src/cli/scene.ts';
import { sceneContract } from '../src/demos/folder.ts';
import { readEpisodeFolder } from '../src/rollout/index.ts';
import { sampleTask, usesReservedPair } from '../src/task/index.ts';

const scene = loadScene(undefined);
const contract = sceneContract(scene);
const R = 3 + contract.actions.length; // episode, step, object, tokens

for (const dir of process.argv.slice(2)) {
  const { episodes } = readEpisodeFolder(dir, contract);
  const tasks = episodes.map((e) => sampleTask(scene, e.task, e.seed));
  const path = join(dir, 'counterfactual.bin');
  const words = existsSync(path) ? new Int32Array(new Uint8Array(readFileSync(path)).buffer) : new Int32Array(0);
  const perTask: Record<string, { records: number; reserved: number }> = {};
  let reserved = 0;
  for (let r = 0; r < words.length / R; r++) {
    const task = tasks[words[r * R]];
    const t = (perTask[task.taskId] ??= { records: 0, reserved: 0 });
    t.records++;
    if (usesReservedPair(scene, { ...task, object: words[r * R + 2] })) {
      t.reserved++;
      reserved++;
    }
  }
  const rows = episodes.reduce((s, e) => s + e.length, 0) + words.length / R;
  console.log(JSON.stringify({ dir, episodes: episodes.length, rows, records: words.length / R, reserved, perTask }));
}
