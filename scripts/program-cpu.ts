// node bin/run-ts.mjs scripts/program-cpu.ts [CAP_S=40] — CPU seconds (user + system, the child's whole
// process as `prlimit --cpu` counts it) of the heaviest programs of each family on every shipped
// AutoResearch task, run as the sandbox runs them (the bundled run-child.ts, onnxruntime-web), one JSON
// line each. Sizes the executor's default CPU-time limit (30 s, src/autoresearch/executor.ts).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ProgramInput, TASKS } from '../src/autoresearch/index.ts';
import { bundleScript } from '../src/autoresearch/sandbox-build.ts';

const cap = Number(process.argv[2] ?? 40);
/** The heaviest settings of each family short of the DSL's absurd values (trees 5000, hidden 4096,
 *  epochs 100000), which the limits exist to stop. */
const PROGRAMS: ProgramInput[] = [
  { model: 'mlp', scale: 'standard', params: { hidden: 256, layers: 3, epochs: 500 } },
  { model: 'forest', params: { trees: 200, depth: 16 } },
  { model: 'tree', params: { depth: 16 } },
  { model: 'knn', scale: 'standard', params: { k: 50 } },
  { model: 'logistic', scale: 'standard', params: { epochs: 500 } },
  { model: 'bayes' },
  { model: 'linear' },
];
const bundle = await bundleScript(join(import.meta.dirname, '../src/autoresearch/run-child.ts'));
const dir = mkdtempSync(join(tmpdir(), 'wmrl-program-cpu-'));
try {
  for (const task of TASKS)
    for (const program of PROGRAMS) {
      if (task.kind === 'regression' && (program.model === 'bayes' || program.model === 'logistic')) continue;
      if (task.kind === 'classification' && program.model === 'linear') continue;
      const input = join(dir, 'input.json');
      writeFileSync(input, JSON.stringify({ task: task.id, program: { budget: 'large', ...program }, seed: 0 }));
      const node = [process.execPath, '--disable-wasm-trap-handler', bundle, input];
      const run = spawnSync('/usr/bin/time', ['-f', 'CPU %U %S', 'prlimit', `--cpu=${cap}`, '--', ...node], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const out = run.stderr;
      const ok = /"validation"/.test(run.stdout);
      const m = /CPU ([\d.]+) ([\d.]+)/.exec(out);
      const cpuS = m ? Number(m[1]) + Number(m[2]) : null;
      console.log(JSON.stringify({ task: task.id, model: program.model, cpuS, ok }));
    }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
