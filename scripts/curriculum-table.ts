// Prints the ablation table of a curriculum study folder (scripts/curriculum-study.sh) as markdown, each
// row also paired with the first; then, per row, what its iterations spent: groups and rollouts run, the
// share of groups whose rewards differ, and the share of the update's groups that do (means over seeds).
// Between them, each row's paired difference to the base per family.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ablationTable, readStudy, versusBaseTable } from '../src/experiment/ablation.ts';

const dir = process.argv[2] ?? 'runs/curriculum';
const rows = (process.env.ROWS ?? 'none evolution relabel-pmi repeat all starts').split(' ');
const seeds = (process.env.SEEDS ?? '1 2 3').split(' ').map(Number);
const study = readStudy(dir, rows, seeds);
console.log(ablationTable(study.rows, study.base, rows[0]));
console.log('\nPaired with the base, points (every episode of every seed against the same episode of the base):\n');
console.log(versusBaseTable(study.rows, study.base));

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const fmt = (x: number, digits = 1) => x.toFixed(digits);
console.log(
  '\n| row | groups per iteration | rollouts per iteration | informative, of groups run | informative, of groups in the update | rollouts per informative group |',
);
console.log('|---|---|---|---|---|---|');
for (const row of rows) {
  const runs = seeds
    .map((seed) => join(dir, `${row}-s${seed}`))
    .filter((run) => existsSync(join(run, 'metrics.jsonl')));
  if (runs.length === 0) continue;
  const perSeed = runs.map((run) => {
    const config = JSON.parse(readFileSync(join(run, 'config.json'), 'utf8'));
    const cfg = config.config ?? config;
    const lines = readFileSync(join(run, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const groups = lines.map((m) => m['groups/anchor'] + m['groups/wm']);
    const informative = lines.map((m) => m['groups/anchor'] + m['groups/wm'] - m['groups/zero_variance']);
    // equal-reward groups enter the update unless dynamic sampling keeps them out
    const inUpdate = cfg.dynamicSampling?.enabled ? informative : groups;
    return [
      mean(groups),
      mean(groups) * cfg.groupSize,
      mean(informative) / mean(groups),
      mean(informative) / mean(inUpdate),
      (mean(groups) * cfg.groupSize) / mean(informative),
    ];
  });
  const col = (k: number) => mean(perSeed.map((s) => s[k]));
  console.log(
    `| ${row} | ${fmt(col(0), 2)} | ${fmt(col(1))} | ${fmt(100 * col(2))}% | ${fmt(100 * col(3))}% | ${fmt(col(4))} |`,
  );
}
