// npm run bench:soak [-- --iterations N --capacity C --out DIR --seed S] — one JSON object per line:
// a wmrl training run (default preset, all four tasks, 2 cores' worth of this process) long enough for
// the world model's replay to wrap many times, sampled at every checkpoint: process RSS (now and peak),
// the run folder's bytes without metrics.jsonl, and the checkpoint's save time. Defaults: capacity
// 4096 transitions (wraps about every 11 iterations), 150 iterations. The samples go to soak.jsonl in
// the run folder, so a killed soak resumes (the same command) and keeps its history; the figures are
// the samples when the replay first filled and at the end, their growth per 1,000 iterations (least
// squares over the samples since the fill, in this process: a resumed process starts its own RSS) and a
// projection to 10,000 iterations. `--capacity 0` keeps every transition (the unbounded replay, whose
// growth is fitted from iteration 50 on).
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { tabletopTrainSetup } from '../src/experiment/index.ts';
import { loadPolicy } from '../src/policy/model.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../src/scene/load-file.ts';
import { appendMetrics, CHECKPOINT_JSON, truncateMetrics } from '../src/store/index.ts';
import { taskIds } from '../src/task/index.ts';
import { resolveConfig, train } from '../src/trainer/index.ts';
import { readInputJson } from '../src/core/input-file.ts';
import { emit, round } from './timing.ts';

const REPO = resolve(import.meta.dirname, '..');
const { values: args } = parseArgs({
  options: {
    iterations: { type: 'string', default: '150' },
    capacity: { type: 'string', default: '4096' },
    seed: { type: 'string', default: '11' },
    out: { type: 'string' },
    help: { type: 'boolean' },
  },
});
if (args.help) {
  console.log(
    'npm run bench:soak -- [--iterations N=150] [--capacity C=4096 (0: unbounded)] [--seed S=11] [--out DIR]',
  );
  process.exit(0);
}
const Args = z.object({
  iterations: z.coerce.number().int().positive(),
  capacity: z.coerce.number().int().min(0),
  seed: z.coerce.number().int().min(0),
});
const parsed = Args.safeParse(args);
if (!parsed.success) {
  console.error(`bench:soak: ${parsed.error.issues.map((i) => `--${i.path.join('.')}: ${i.message}`).join('; ')}`);
  process.exit(2);
}
const { iterations, capacity, seed } = parsed.data;
const out = args.out ?? join(REPO, 'runs', `soak-c${capacity}-s${seed}`);
const samplesPath = join(out, 'soak.jsonl');

const Sample = z.object({
  iteration: z.number(),
  pid: z.number(),
  rss_mb: z.number(),
  peak_rss_mb: z.number(),
  folder_mb: z.number(),
  save_s: z.number(),
  transitions: z.number(),
  full: z.boolean(),
});
type Sample = z.infer<typeof Sample>;

const scene = loadSceneFile(DEFAULT_SCENE_PATH);
const tasks = taskIds(scene);
const cfg = resolveConfig('default', { replayCapacity: capacity, iterations, seed });
const resume = existsSync(join(out, CHECKPOINT_JSON));
if (resume) {
  const step = readInputJson(join(out, CHECKPOINT_JSON), z.object({ step: z.number() }), 'checkpoint').step;
  truncateMetrics(samplesPath, step); // samples past the checkpoint belong to iterations run again
}
const policy = await loadPolicy(join(REPO, 'models/vla-base.onnx'));
const { tasks: trainTasks, worldModel } = await tabletopTrainSetup(scene, tasks, {
  mode: cfg.mode,
  worldModel: join(REPO, 'models/wm-base.onnx'),
  seed,
});
if (!worldModel) throw new Error('bench:soak: the default mode has a world model');

const mb = (bytes: number) => round(bytes / 2 ** 20, 2);
const folderBytes = () =>
  readdirSync(out)
    .filter((f) => f !== 'metrics.jsonl' && f !== 'soak.jsonl')
    .reduce((n, f) => n + statSync(join(out, f)).size, 0);

emit({ figure: 'setup', iterations, capacity, seed, out, resumed: resume, tasks: tasks.length });
await train(
  {
    tasks: trainTasks,
    worldModel,
    policy: { config: policy.config, params: policy.params, specHash: policy.sidecar.specHash },
  },
  cfg,
  out,
  {
    resume,
    onCheckpoint(iteration, seconds) {
      const transitions = worldModel.transitions;
      appendMetrics(samplesPath, {
        step: iteration, // truncateMetrics keys on it
        iteration,
        pid: process.pid,
        rss_mb: mb(process.memoryUsage.rss()),
        peak_rss_mb: mb(process.resourceUsage().maxRSS * 1024),
        folder_mb: mb(folderBytes()),
        save_s: round(seconds, 4),
        transitions,
        full: transitions >= worldModel.trainCapacity,
      });
    },
  },
);
await worldModel.close();

const samples = readSamples();
const end = samples.at(-1)!;
// the growth window: from the replay's first fill (an unbounded one: from iteration 50, after start-up)
const fill = capacity ? samples.find((s) => s.full) : samples.find((s) => s.iteration >= 50);
if (capacity) emit({ figure: 'fill', ...fill });
emit({ figure: 'end', ...end });
const since = samples.filter((s) => fill && s.pid === end.pid && s.iteration >= fill.iteration);
if (since.length >= 3) {
  const per1000 = (key: 'rss_mb' | 'folder_mb' | 'save_s') => 1000 * slope(since.map((s) => [s.iteration, s[key]]));
  const first = since[0];
  for (const key of ['rss_mb', 'folder_mb', 'save_s'] as const) {
    const g = per1000(key);
    emit({
      figure: `${key.replace(/_.*/, '')}_growth_per_1000_iterations`,
      value: round(g, 4),
      unit: key.endsWith('_s') ? 's' : 'MB',
      percent_of_first: round((100 * g) / first[key], 2),
      samples: since.length,
      from: first.iteration,
      to: end.iteration,
    });
  }
  // growth below zero (garbage-collector noise) projects as none
  const at10k = (key: 'rss_mb' | 'folder_mb') =>
    round(end[key] + ((10_000 - end.iteration) * Math.max(0, per1000(key))) / 1000, 1);
  emit({
    figure: 'projected_at_10000_iterations',
    peak_rss_mb: Math.max(end.peak_rss_mb, at10k('rss_mb')),
    folder_mb: at10k('folder_mb'),
  });
} else emit({ figure: 'growth', error: 'fewer than 3 samples in the growth window: raise --iterations' });

function readSamples(): Sample[] {
  const lines = readFileSync(samplesPath, 'utf8')
    .split('\n')
    .filter((l) => l.trim());
  return lines.map((l) => Sample.parse(JSON.parse(l)));
}

/** Least-squares slope of y over x. */
function slope(points: [number, number][]): number {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const [x, y] of points) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
  }
  return sxx ? sxy / sxx : 0;
}
