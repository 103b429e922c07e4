// A resumable run in a folder, shared by BC pretraining, world-model training and the WMRL trainer: the
// checkpoint's two files committed as one unit, the resume check (a checkpoint of another run is refused,
// naming the keys that differ), the metrics file cut back to the checkpoint, when to checkpoint, and the
// stop flag a run polls between steps. Installs no signal handler: Ctrl-C arrives as a shouldStop hook.
// Node-only.
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { InputError } from '../core/errors.ts';
import { canonicalJson, jsonLine } from '../core/spec.ts';
import { type CommitOptions, type PartData, commitFiles, recoverFolder } from './commit.ts';

export const CHECKPOINT_JSON = 'checkpoint.json';
export const CHECKPOINT_BIN = 'checkpoint.bin';

/** True when `dir` holds a checkpoint (an interrupted commit is rolled forward first). */
export function hasCheckpoint(dir: string): boolean {
  recoverFolder(dir);
  return existsSync(join(dir, CHECKPOINT_JSON));
}

/** Writes checkpoint.bin and checkpoint.json (which should name the .bin's sha256) as one commit. */
export function commitCheckpoint(dir: string, bin: PartData, json: unknown, commit?: CommitOptions): void {
  commitFiles(
    [
      { path: join(dir, CHECKPOINT_BIN), data: bin },
      { path: join(dir, CHECKPOINT_JSON), data: `${JSON.stringify(json, null, 2)}\n` },
    ],
    commit,
  );
}

export interface KeyDifference {
  /** Dotted path of the field ("lr", "config.batch"). */
  key: string;
  saved: unknown;
  current: unknown;
}

const isRecord = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** The fields where two run keys differ; nested objects are compared field by field, arrays whole. */
export function runKeyDiff(saved: unknown, current: unknown, path = ''): KeyDifference[] {
  if (isRecord(saved) && isRecord(current)) {
    const keys = [...new Set([...Object.keys(current), ...Object.keys(saved)])];
    return keys.flatMap((k) => runKeyDiff(saved[k], current[k], path ? `${path}.${k}` : k));
  }
  return canonicalJson(saved) === canonicalJson(current) ? [] : [{ key: path || '(the whole key)', saved, current }];
}

function describe(d: KeyDifference): string {
  const show = (v: unknown) => (v === undefined ? 'unset' : canonicalJson(v));
  const [s, c] = [show(d.saved), show(d.current)];
  return s.length + c.length <= 60 ? `${d.key} (${s} in the checkpoint, ${c} now)` : d.key;
}

/** The checkpoint a run continues: null unless `resume`; then the one `load` reads from `runDir`, which
 *  must exist and carry the same run key (else an InputError naming the keys that differ). */
export function resumeCheckpoint<C extends { run: Record<string, unknown> }>(
  runDir: string,
  key: Record<string, unknown>,
  resume: boolean | undefined,
  load: (dir: string) => C,
): C | null {
  if (!resume) return null;
  if (!hasCheckpoint(runDir)) throw new InputError(`--resume: no checkpoint in ${runDir}`);
  const ck = load(runDir);
  const diff = runKeyDiff(ck.run, key);
  if (diff.length)
    throw new InputError(
      `--resume: the checkpoint in ${runDir} belongs to a run with different options or data: ` +
        `${diff.map(describe).join(', ')}`,
    );
  return ck;
}

/** Keeps the JSONL lines whose `step` is at most `step` (a resumed run rewrites the rest); a line that
 *  is not JSON is an InputError naming the file and line. */
export function truncateMetrics(path: string, step: number): void {
  if (!existsSync(path)) return;
  const kept = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line, i) => {
      if (!line.trim()) return false;
      let s: unknown;
      try {
        s = (JSON.parse(line) as { step?: unknown }).step;
      } catch {
        throw new InputError(`${path}: line ${i + 1} is not JSON`);
      }
      return typeof s === 'number' && s <= step;
    });
  commitFiles([{ path, data: kept.map((l) => `${l}\n`).join('') }]);
}

/** Starts a run's JSONL metrics: a resumed run (`resumedAt`: its checkpoint's step) keeps the lines up to
 *  that step; a fresh one starts the file with `header`. */
export function startMetrics(path: string, resumedAt: number | null, header = ''): void {
  mkdirSync(dirname(path), { recursive: true });
  if (resumedAt === null) writeFileSync(path, header);
  else truncateMetrics(path, resumedAt);
}

export function appendMetrics(path: string, row: unknown): void {
  appendFileSync(path, jsonLine(row));
}

/** A run commits its checkpoint every `every` steps, after its last step, and when it stops early. */
export function checkpointDue(step: number, every: number, last: number, stopping = false): boolean {
  return step % every === 0 || step === last || stopping;
}

/** The stop flag a run polls between steps: raised by request() or by the caller's hook (Ctrl-C), and
 *  raised it stays. */
export class StopFlag {
  private raised = false;

  constructor(private readonly hook?: () => boolean) {}

  request(): void {
    this.raised = true;
  }

  get requested(): boolean {
    if (!this.raised && this.hook?.()) this.raised = true;
    return this.raised;
  }
}
