// The study core the four experiment studies are configurations of (speedup, corrections, research
// speedup, research study): rows (a mode and trainer fields) run on seeds, each run stamped with the hash
// of what decides its result, a runner that trains one run (a `wmrl train` child for the tabletop,
// in process for AutoResearch), a pool that stops at the first failure, and the runs folder's stamp.
// Caches: study-cache.ts; statistics: study-stats.ts; the speedup: study-speedup.ts; reports: study-report.ts.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { readInputFile, readInputJson } from '../core/input-file.ts';
import { canonicalJson } from '../core/spec.ts';
import { sidecarPath } from '../nn/modelfile.ts';
import {
  CodeVersionSchema,
  codeMismatch,
  codeVersion,
  commitFiles,
  runKeyDiff,
  sameCode,
  sha256Hex,
} from '../store/index.ts';
import { MODES, type Mode } from '../trainer/index.ts';

export const StudyRowSchema = z
  .object({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9+._-]*$/, 'lower-case letters, digits and + . _ - (it names run folders)')
      .describe('the row, and the prefix of its run folders'),
    mode: z.enum(MODES).describe('trainer mode'),
    config: z
      .record(z.string(), z.unknown())
      .default({})
      .describe('trainer config fields over the preset (horizon, branchShare, modelReward, debias, ...)'),
    versus: z.array(z.string()).default([]).describe('the rows it is paired against, seed by seed'),
  })
  .strict();
export type StudyRow = z.output<typeof StudyRowSchema>;

/** A study's rows: names unique, and every row a row is paired against exists. */
export function checkRows(c: { rows: { name: string; versus: string[] }[] }, ctx: z.RefinementCtx): void {
  const names = c.rows.map((r) => r.name);
  c.rows.forEach((r, k) => {
    if (names.indexOf(r.name) !== k)
      ctx.addIssue({ code: 'custom', path: ['rows', k, 'name'], message: `"${r.name}" twice` });
    r.versus.forEach((v, m) => {
      if (!names.includes(v))
        ctx.addIssue({ code: 'custom', path: ['rows', k, 'versus', m], message: `no row "${v}"` });
    });
  });
}

/** The hash of what decides a result (canonical JSON, so key order does not matter). */
export const stampOf = (what: unknown): string => sha256Hex(canonicalJson(what));

/** The hash of a model file: its .onnx and its sidecar (which holds the hashes of any further parts). */
export function modelHash(path: string, flag: string): string {
  const sidecar = sidecarPath(path);
  const parts = [readInputFile(path, `${flag} model file`)];
  if (existsSync(sidecar)) parts.push(readInputFile(sidecar, `${flag} sidecar`));
  return sha256Hex(parts.map((p) => sha256Hex(p)).join(''));
}

/** One run of a study: its folder name in the runs folder, the row and seed it belongs to, and what
 *  decides its result (`spec`, hashed into its stamp). */
export interface StudyRun<S = Record<string, unknown>> {
  name: string;
  row: string;
  mode: Mode;
  seed: number;
  spec: S;
}

/** Trains one run (fresh, resumed, or nothing when it finished); a failure names the run. */
export interface Runner<S> {
  train(run: StudyRun<S>, log: (line: string) => void, signal?: AbortSignal): Promise<void>;
}

/** "run wmrl-s3 (row wmrl, seed 3, mode wmrl)". */
export const runLabel = (r: Pick<StudyRun, 'name' | 'row' | 'seed' | 'mode'>) =>
  `run ${r.name} (row ${r.row}, seed ${r.seed}, mode ${r.mode})`;

const StampFileSchema = z.object({
  format: z.literal('wmrl-run-stamp/1'),
  stamp: z.string(),
  spec: z.unknown(),
  /** The code version the run was started by (absent: a stamp written before code versions). */
  code: CodeVersionSchema.optional(),
});

/** A run's stamp file against `run.spec` and this code: none, the same, the fields that differ, or (same
 *  settings) the message naming the code that made it. `allowCodeChange`: other code counts as the same. */
export function stampState(
  path: string,
  run: StudyRun<unknown>,
  allowCodeChange = false,
): 'none' | 'same' | { differs: string[] } | { code: string } {
  if (!existsSync(path)) return 'none';
  const saved = readInputJson(path, StampFileSchema, 'run stamp');
  if (saved.stamp !== stampOf(run.spec)) return { differs: runKeyDiff(saved.spec, run.spec).map((d) => d.key) };
  if (allowCodeChange || sameCode(saved.code, codeVersion())) return 'same';
  return {
    code: codeMismatch(
      `${path}: ${runLabel(run)}`,
      saved.code,
      'refused; delete the run to train it again with this code, or pass --allow-code-change to keep it ' +
        '(and resume it) as it is',
    ),
  };
}

/** Before training: true when the run's stamp matches, false when it has none; a stamp of other
 *  settings (or, unless allowed, of other code) is an InputError naming the file and what differs. */
export function checkStamp(path: string, run: StudyRun<unknown>, allowCodeChange = false): boolean {
  const state = stampState(path, run, allowCodeChange);
  if (typeof state === 'string') return state === 'same';
  if ('code' in state) throw new InputError(state.code);
  throw new InputError(
    `${path}: ${runLabel(run)} was made with other settings (${state.differs.join(', ') || 'stamp'}); ` +
      'use another --runs folder, rename the row or delete the run',
  );
}

/** Writes the stamp file of a run (before it starts), with this process's code version. */
export function writeStamp(path: string, run: StudyRun<unknown>): void {
  const data = { format: 'wmrl-run-stamp/1', stamp: stampOf(run.spec), spec: run.spec, code: codeVersion() };
  commitFiles([{ path, data: `${JSON.stringify(data, null, 2)}\n` }]);
}

/** Runs `tasks` with at most `jobs` at once. After the first failure no task starts and the running
 *  ones get an aborted signal (a child run is stopped as by Ctrl-C, resumable); throws that failure. */
export async function pool(jobs: number, tasks: ((signal: AbortSignal) => Promise<void>)[]): Promise<void> {
  const stop = new AbortController();
  let next = 0;
  let failure: { error: unknown } | null = null;
  const worker = async () => {
    while (!failure && next < tasks.length) {
      const task = tasks[next++];
      try {
        await task(stop.signal);
      } catch (error) {
        failure ??= { error };
        stop.abort();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, tasks.length) }, worker));
  if (failure) throw (failure as { error: unknown }).error;
}

const StudyStampSchema = z.looseObject({ shared: z.unknown(), rows: z.array(z.looseObject({ name: z.string() })) });

/** The runs folder's stamp (study.json): the settings every run shares and each row's definition (what
 *  decides its runs; `versus` does not). Rows and seeds may be added later; a row that changed must get
 *  a new name; other shared settings need another runs folder. */
export function stampStudy(runs: string, shared: object, rows: readonly { name: string }[]): void {
  const stamp = join(runs, 'study.json');
  const trained = ({ versus: _, ...r }: { name: string; versus?: unknown }) => canonicalJson(r);
  let kept: { name: string }[] = [];
  if (existsSync(stamp)) {
    const prev = readInputJson(stamp, StudyStampSchema, 'study stamp');
    const diff = runKeyDiff(prev.shared, shared).map((d) => d.key);
    if (diff.length)
      throw new InputError(
        `${stamp}: the runs there share other settings (${diff.join(', ')}); use another --runs folder or delete it`,
      );
    for (const r of rows) {
      const old = prev.rows.find((x) => x.name === r.name);
      if (old && trained(old) !== trained(r))
        throw new InputError(`${stamp}: row "${r.name}" was trained with other settings; rename it`);
    }
    kept = prev.rows.filter((x) => !rows.some((r) => r.name === x.name));
  }
  const data = { format: 'wmrl-study/2', shared, rows: [...kept, ...rows] };
  commitFiles([{ path: stamp, data: `${JSON.stringify(data, null, 2)}\n` }]);
}
