// npm run bench:bc-data [-- --episodes 12 --steps 200 --size keypoints16 --keep DIR] — one JSON object per
// line: peak RSS while training `steps` BC steps on the rows of 1x and of 4x the demonstrations (four
// collects of `episodes` per task; 1x is the first), each in a child process of its own, side by side in
// one run: through the rows on disk (`pretrain`, shards read in batches) and, for contrast, through the
// in-memory dataset pretrain used before (every row a copy of its frame). Then the 4x/1x ratio per path.
// RSS is sampled at every step (process.memoryUsage.rss); the process peak (getrusage) also counts the
// re-simulation before the steps.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { demosToDataset, pretrain, readDemoFolder } from '../src/demos/index.ts';
import { Graph } from '../src/nn/ir.ts';
import { ParamStore } from '../src/nn/params.ts';
import { fixedCameras, tabletopSpec } from '../src/physics/index.ts';
import { BcTrainer } from '../src/policy/bc.ts';
import { PRESET_NAMES, type PresetName, PRETRAIN_SIZES, sceneWords } from '../src/policy/presets.ts';
import { vlaConfigFromSpec } from '../src/policy/spec-config.ts';
import { WordTokenizer } from '../src/policy/tokenizer.ts';
import { vlaForwardBuilder } from '../src/policy/vla.ts';
import { loadSceneFile } from '../src/scene/load-file.ts';
import { emit, round } from './timing.ts';

const REPO = resolve(import.meta.dirname, '..');
const { values: args } = parseArgs({
  options: {
    episodes: { type: 'string', default: '12' },
    steps: { type: 'string', default: '200' },
    size: { type: 'string', default: 'keypoints16' },
    keep: { type: 'string' },
    child: { type: 'string' },
    data: { type: 'string' },
    run: { type: 'string' },
  },
});
const steps = Number(args.steps);
const size = args.size as PresetName;
if (!PRESET_NAMES.includes(size) || !(steps > 0) || !(Number(args.episodes) > 0)) {
  console.error('npm run bench:bc-data -- [--episodes E=12] [--steps N=200] [--size keypoints16] [--keep DIR]');
  process.exit(2);
}
const BC = { batch: 64, lr: 0.002, weightDecay: 1e-4, shift: 0, wordDropout: 0.1, seed: 0 };
const mb = (bytes: number) => round(bytes / 2 ** 20, 1);

/** Child: trains on the folders in --data through one path and prints its figures as one JSON line. */
async function child(path: string, data: string[], run: string): Promise<void> {
  let peak = 0;
  const sample = () => {
    peak = Math.max(peak, process.memoryUsage.rss());
  };
  const t0 = performance.now();
  let t1 = t0;
  let rows = 0;
  if (path === 'shards') {
    const r = await pretrain(
      {
        ...BC,
        data,
        out: join(run, 'bc.onnx'),
        runDir: run,
        steps,
        size,
        logEvery: 50,
        threads: 1,
        checkpointEvery: steps,
        maxNonfinite: 20,
        counterfactual: true,
      },
      {
        onStart: () => {
          t1 = performance.now();
          sample();
          return undefined;
        },
        onStep: sample,
      },
    );
    if (r.stopped) throw new Error('bench:bc-data: the run stopped');
    rows = r.summary.samples;
  } else {
    const folders = data.map((d) => readDemoFolder(d));
    const scene = loadSceneFile(folders[0].meta.scene);
    const demos = folders.flatMap((f) => f.demos);
    const words = sceneWords(scene);
    const tokenizer = WordTokenizer.fromCorpus(words.corpus, { maxLength: words.maxLength });
    const spec = tabletopSpec(scene, demos[0].task, fixedCameras(scene));
    const config = vlaConfigFromSpec(spec, tokenizer.config, PRETRAIN_SIZES[size]);
    const ds = await demosToDataset(scene, demos, config, tokenizer, { counterfactual: true });
    rows = ds.size;
    const g = new Graph();
    vlaForwardBuilder(config)(g);
    const trainer = await BcTrainer.create(config, ParamStore.init(g.params, BC.seed), { ...BC, totalSteps: steps });
    t1 = performance.now();
    sample();
    for (let s = 0; s < steps; s++) {
      await trainer.step(ds);
      sample();
    }
    await trainer.close();
  }
  const t2 = performance.now();
  const processPeak = process.resourceUsage().maxRSS * 1024;
  console.log(JSON.stringify({ rows, peak, processPeak, setupS: (t1 - t0) / 1000, trainS: (t2 - t1) / 1000 }));
}

if (args.child) {
  await child(args.child, args.data!.split(','), args.run!);
  process.exit(0);
}

const dir = args.keep ?? mkdtempSync(join(tmpdir(), 'wmrl-bench-bc-data-'));
const E = Number(args.episodes);
const folders = [0, 1, 2, 3].map((k) => join(dir, `demos-${k}`));
const wmrl = (...a: string[]) => execFileSync(process.execPath, [join(REPO, 'bin/wmrl.mjs'), ...a], { stdio: 'pipe' });
const t0 = performance.now();
folders.forEach((out, k) => {
  wmrl('collect', '--task', 'all', '--episodes', String(E), '--offset', String(k * E), '--out', out);
});
emit({ figure: 'collect_s', demos: 4 * 4 * E, s: round((performance.now() - t0) / 1000, 1) });

const du = (d: string): number =>
  readdirSync(d).reduce((s, f) => {
    const p = join(d, f);
    const st = statSync(p);
    return s + (st.isDirectory() ? du(p) : st.size);
  }, 0);
const peaks: Record<string, number[]> = { shards: [], memory: [] };
for (const scale of [1, 4]) {
  for (const path of ['shards', 'memory']) {
    const run = join(dir, `run-${path}-${scale}x`);
    const data = folders.slice(0, scale).join(',');
    const script = [join(REPO, 'bin/run-ts.mjs'), join(REPO, 'bench/bc-data.ts')];
    const out = execFileSync(
      process.execPath,
      [...script, '--child', path, '--data', data, '--run', run, '--steps', String(steps), '--size', size],
      { stdio: ['ignore', 'pipe', 'ignore'], encoding: 'utf8' },
    );
    const r = JSON.parse(out.trim().split('\n').pop()!);
    peaks[path].push(r.peak);
    emit({
      figure: 'bc_train_peak_rss_mb',
      path,
      scale: `${scale}x`,
      demos: 4 * E * scale,
      rows: r.rows,
      steps,
      size,
      mb: mb(r.peak),
      process_peak_mb: mb(r.processPeak),
      ...(path === 'shards' ? { rows_on_disk_mb: mb(du(join(run, 'rows'))) } : {}),
      setup_s: round(r.setupS, 1),
      train_s: round(r.trainS, 1),
    });
  }
}
for (const path of ['shards', 'memory'])
  emit({ figure: 'bc_train_peak_rss_ratio_4x_1x', path, ratio: round(peaks[path][1] / peaks[path][0]) });
if (!args.keep) rmSync(dir, { recursive: true, force: true });
