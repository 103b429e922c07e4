import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'vitest';
import { resolveConfig, train } from '../../src/trainer/index.ts';
import { setup } from './code-lock.ts';
const tmp = mkdtempSync(join(tmpdir(), 'scr-'));
const metrics = (dir: string) => readFileSync(join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, number>);
it('scratch', { timeout: 900_000 }, async () => {
  const noise = Number(process.env.NOISE ?? 0.5);
  const p = Number(process.env.POW ?? 2);
  for (const seed of (process.env.SEEDS ?? '0,1,2').split(',').map(Number)) {
    const row: string[] = [];
    for (const mode of (process.env.MODES ?? 'mix,wmrl').split(',') as ('mix' | 'wmrl')[]) {
      const cfg = resolveConfig('smoke', { seed, mode, iterations: Number(process.env.ITERS ?? 120), groupsPerIteration: 4, groupSize: 8, batch: 64, samplesPerRollout: 6, lr: 1e-2, klCoef: 0, minAnchors: 1, debias: { warmup: 64, refitEvery: 32 } });
      const dir = join(tmp, `${mode}-${seed}`);
      await train(setup((x) => x ** p, noise, process.env.BRANCH !== '0'), cfg, dir);
      const m = metrics(dir);
      const last = m.slice(-20).reduce((s, x) => s + x['reward/anchor'], 0) / 20;
      row.push(`${mode} ${last.toFixed(3)}`);
    }
    console.log(`seed ${seed}: ${row.join('  ')}`);
  }
});
