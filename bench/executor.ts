// npm run bench:executor [-- --quick] — one JSON object per line: the per-run overhead of the sandboxed
// executor beyond the work itself. A trivial child (reads its input file, prints a JSON result) runs
// through the Executor and, side by side in alternating batches, directly: `node trivial.mjs`, and the
// .ts versions through tsx (`node bin/run-ts.mjs trivial.ts`, as our scripts run). Then the cost of each
// containment layer alone (permission flags, unshare -n, prlimit --as) and of the executor's whole
// command line on the same script, and the one-off compile of a .ts script. Medians over >= 5 batch
// pairs. Target: <= 100 ms per run beyond the work itself.
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_LIMITS, Executor, type ExecReport } from '../src/autoresearch/executor.ts';
import { bundleScript } from '../src/autoresearch/sandbox-build.ts';
import { childCommand, probeContainment } from '../src/autoresearch/sandbox-process.ts';
import { emit, round, timePair } from './timing.ts';

const quick = process.argv.includes('--quick');
const MIN_MS = quick ? 1500 : 5000;
const TARGET_MS = 100;
const REPO = resolve(import.meta.dirname, '..');
const RUN_TS = join(REPO, 'bin/run-ts.mjs');

// a fixed folder: the bundles' content (and so their cached file names) stays the same from run to run
const dir = join(tmpdir(), 'wmrl-bench-exec');
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
const body = (typed: boolean) =>
  [
    "import { readFileSync } from 'node:fs';",
    `const input${typed ? ': { n: number }' : ''} = ` +
      `JSON.parse(readFileSync(process.env.WMRL_INPUT${typed ? '!' : ''}, 'utf8'));`,
    'console.log(JSON.stringify({ twice: input.n * 2 }));',
    '',
  ].join('\n');
const mjs = join(dir, 'trivial.mjs');
const ts = join(dir, 'trivial.ts');
const tsSrc = join(dir, 'trivial-src.ts');
writeFileSync(mjs, body(false));
writeFileSync(ts, body(true));
// the shape of the real runner: TypeScript importing src (the proposal DSL, which imports zod)
writeFileSync(
  tsSrc,
  `import { FAMILIES } from ${JSON.stringify(join(REPO, 'src/autoresearch/dsl.ts'))};\n` +
    body(true).replace('input.n * 2', 'input.n * 2, families: FAMILIES.length'),
);
const scratch = join(dir, 'scratch');
const inputFile = join(dir, 'input.json');
writeFileSync(inputFile, JSON.stringify({ n: 21 }));
const env = {
  WMRL_INPUT: inputFile,
  WMRL_SCRATCH: dir,
  HOME: dir,
  TMPDIR: dir,
  TZ: 'UTC',
  LANG: 'C',
  PATH: process.env.PATH ?? '',
};

/** Spawns a command, waits for it to close and parses its last stdout line (as the executor does). */
function direct(file: string, args: string[]): () => Promise<void> {
  return () =>
    new Promise((done, fail) => {
      const child = spawn(file, args, { env, cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (b: Buffer) => (out += b));
      child.on('error', fail);
      child.on('close', (code) => {
        if (code !== 0) return fail(new Error(`${file} ${args.join(' ')} exited ${code}`));
        JSON.parse(out.trim().split('\n').pop()!);
        done();
      });
    });
}

const c = await probeContainment();
emit({
  figure: 'machine',
  cpus: cpus().length,
  loadavg_1m: round(loadavg()[0], 2),
  network: c.network,
  memory_cap: c.memoryCap,
  warnings: c.warnings,
  min_ms_per_pair: MIN_MS,
});

const t0 = performance.now();
await bundleScript(ts);
const coldTs = performance.now() - t0;
const t1 = performance.now();
await bundleScript(tsSrc);
const coldSrc = performance.now() - t1;
emit({
  figure: 'compile_once_ms',
  trivial_ts_ms: round(coldTs, 1),
  ts_importing_src_ms: round(coldSrc, 1),
  note:
    'esbuild bundle on the first run of a script in a process ' +
    '(the first includes starting the esbuild service); later runs only stat its inputs',
});

const ex = new Executor({ concurrency: 1, scratchRoot: scratch });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
function viaExecutor(script: string, reports: ExecReport[]): () => Promise<void> {
  return async () => {
    const r = await ex.run({ script, input: { n: 21 } });
    if (r.outcome !== 'ok' || r.result === undefined)
      throw new Error(`executor run of ${script}: ${r.outcome}\n${r.stderrTail}`);
    reports.push(r);
  };
}

const pairs: [string, string, () => Promise<void>, string, string][] = [
  ['mjs', 'node trivial.mjs', direct(process.execPath, [mjs]), mjs, 'plain node, no containment'],
  [
    'ts',
    'node bin/run-ts.mjs trivial.ts',
    direct(process.execPath, [RUN_TS, ts]),
    ts,
    'tsx compiles in the child (cache on); the executor runs a bundle compiled once in the parent',
  ],
  [
    'ts_importing_src',
    'node bin/run-ts.mjs trivial-src.ts',
    direct(process.execPath, [RUN_TS, tsSrc]),
    tsSrc,
    'the shape of the real runner: imports src/autoresearch/dsl.ts (and zod)',
  ],
];
for (const [name, baselineCmd, baseline, script, note] of pairs) {
  const reports: ExecReport[] = [];
  const [execMs, baseMs] = await timePair(viaExecutor(script, reports), baseline, 1, MIN_MS);
  const overhead = execMs - baseMs;
  emit({ figure: `direct_${name}`, ms: round(baseMs, 1), command: baselineCmd });
  emit({
    figure: `executor_${name}`,
    ms: round(execMs, 1),
    child_wall_ms: round(median(reports.map((r) => r.wallMs)), 1),
    executor_own_ms: round(median(reports.map((r) => r.overheadMs)), 1),
    runs: reports.length,
  });
  emit({
    figure: `executor_overhead_${name}`,
    ms: round(overhead, 1),
    target_ms: TARGET_MS,
    within_target: overhead <= TARGET_MS,
    note,
  });
}

// Each containment layer alone on trivial.mjs (spawned directly, without the executor's bookkeeping).
const bundle = await bundleScript(mjs);
const perm = [
  process.execPath,
  '--experimental-permission',
  `--allow-fs-read=${bundle}`,
  `--allow-fs-read=${dir}`,
  `--allow-fs-write=${dir}`,
  '--disable-warning=ExperimentalWarning',
  bundle,
];
const layers: [string, string[]][] = [['permission_model', perm]];
if (c.unshare) layers.push(['unshare_n', [...c.unshare, '--', process.execPath, mjs]]);
if (c.prlimit) layers.push(['prlimit_as', [c.prlimit, `--as=${1536 * 2 ** 20}`, '--', process.execPath, mjs]]);
// the executor's exact command line (all layers, heap cap, source maps, fd-3 preload), without its bookkeeping
const all = childCommand(c, {
  bundle,
  readPaths: [join(REPO, 'node_modules'), dir],
  writePaths: [dir],
  memoryMb: DEFAULT_LIMITS.memoryMb,
});
layers.push(['all_flags', [all.file, ...all.args]]);
const plain = direct(process.execPath, [mjs]);
for (const [name, argv] of layers) {
  const [layerMs, plainMs] = await timePair(direct(argv[0], argv.slice(1)), plain, 1, quick ? 1000 : 3000);
  emit({
    figure: `layer_${name}`,
    ms: round(layerMs - plainMs, 1),
    with_ms: round(layerMs, 1),
    plain_node_ms: round(plainMs, 1),
    note: 'extra ms of this layer alone over plain `node trivial.mjs`',
  });
}
rmSync(dir, { recursive: true, force: true });
