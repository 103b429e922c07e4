// What a study reads back from disk: evaluation caches (a key of everything that decides the value and
// the code version that made it, schema-checked on read, written atomically) and the lines of a run's
// metrics.jsonl, where a value written as null or left out stays missing. A cache made by other code is
// stale (made again); a finished run's record made by other code is refused unless the study allows it.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { parseInput, parseInputJsonText, readInputJsonRaw } from '../core/input-file.ts';
import { TRAIN_CLOCK_KEYS, type TrainMetricKey } from '../core/metrics.ts';
import { canonicalJson } from '../core/spec.ts';
import {
  type CodeVersion,
  CodeVersionSchema,
  type CommitOptions,
  codeMismatch,
  codeVersion,
  commitFiles,
  recoverFolder,
  runKeyDiff,
  sameCode,
} from '../store/index.ts';

const FORMAT = 'wmrl-cache/1';
const Envelope = z.looseObject({ format: z.string().optional(), key: z.unknown(), code: z.unknown() });

/** The cache at `path` written with `key` (value and the code version that made it), or null (none,
 *  another key, an older format). A value that fails `schema` is an InputError naming the file and field. */
function readKeyed<S extends z.ZodType>(
  path: string,
  key: unknown,
  schema: S,
): { value: z.output<S>; code: CodeVersion | null } | null {
  recoverFolder(dirname(path));
  if (!existsSync(path)) return null;
  const raw = readInputJsonRaw(path, 'cache');
  const env = Envelope.safeParse(raw);
  if (!env.success || env.data.format !== FORMAT || canonicalJson(env.data.key) !== canonicalJson(key)) return null;
  const file = z.object({
    format: z.literal(FORMAT),
    key: z.unknown(),
    code: CodeVersionSchema.optional(),
    value: schema,
  });
  const got = parseInput(raw, file, path) as { value: z.output<S>; code?: CodeVersion };
  return { value: got.value, code: got.code ?? null };
}

/** The cached value at `path` when the file was written with `key` by this code, or null (none, another
 *  key or other code: stale, made again). A value that fails `schema` is an InputError naming the file
 *  and the field. */
export function readCache<S extends z.ZodType>(path: string, key: unknown, schema: S): z.output<S> | null {
  const hit = readKeyed(path, key, schema);
  return hit && sameCode(hit.code, codeVersion()) ? hit.value : null;
}

/** A finished run's record (a cache keyed by what decides the run): its value, or null when there is
 *  none. Written with another key: null, or with `strict` an InputError naming the fields that differ.
 *  Written by other code: kept with `allowCodeChange`, else null, or with `strict` an InputError naming
 *  both code versions (the run is not made again: delete it or allow the change). */
export function readFinished<S extends z.ZodType>(
  path: string,
  key: unknown,
  schema: S,
  strict: boolean,
  allowCodeChange = false,
): z.output<S> | null {
  if (!existsSync(path)) return null;
  const found = readKeyed(path, key, schema);
  if (found && (allowCodeChange || sameCode(found.code, codeVersion()))) return found.value;
  if (!strict) return null;
  if (found)
    throw new InputError(
      codeMismatch(
        `${path}: the run there`,
        found.code,
        'refused; delete the run to make it again with this code, or pass --allow-code-change to keep it',
      ),
    );
  const env = Envelope.safeParse(readInputJsonRaw(path, 'run record'));
  const fields = env.success && env.data.format === FORMAT ? runKeyDiff(env.data.key, key).map((d) => d.key) : [];
  throw new InputError(
    `${path}: the run there was made with other settings (${fields.join(', ') || 'an older format'}); ` +
      'use another --runs folder, rename the row or delete the run',
  );
}

/** Writes `value` under `key` with this process's code version (temp file + rename: a reader sees the
 *  old file or the new one). */
export function writeCache(path: string, key: unknown, value: unknown, commit?: CommitOptions): void {
  commitFiles([{ path, data: `${JSON.stringify({ format: FORMAT, key, code: codeVersion(), value })}\n` }], commit);
}

/** The cached value, or `make()`'s, written under `key`. */
export async function cached<S extends z.ZodType>(
  path: string,
  key: unknown,
  schema: S,
  make: () => Promise<z.output<S>>,
): Promise<z.output<S>> {
  const hit = readCache(path, key, schema);
  if (hit !== null) return hit;
  const value = await make();
  writeCache(path, key, value);
  return value;
}

/** The keys a metrics line must have (the clock and the step counts); every other is a number or
 *  missing (null or absent). */
const REQUIRED = ['iteration', ...TRAIN_CLOCK_KEYS, 'steps/physics', 'steps/world_model'] as const;
type Required = (typeof REQUIRED)[number];
export type MetricLine = { [K in Required]: number } & { [K in Exclude<TrainMetricKey, Required>]?: number | null };

const LineSchema = z
  .object(Object.fromEntries(REQUIRED.map((k) => [k, z.number()])))
  .catchall(z.number().nullable()) as unknown as z.ZodType<MetricLine>;

/** The lines of a run's metrics.jsonl ([] when there is none); a bad line is an InputError naming the
 *  file, the line and the field. */
export function readMetrics(dir: string): MetricLine[] {
  const path = join(dir, 'metrics.jsonl');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l, i) => parseInput(parseInputJsonText(path, l, 'metrics line'), LineSchema, `${path} line ${i + 1}`));
}

/** A metric of a line, null when missing. */
export const metric = (m: MetricLine, key: TrainMetricKey): number | null => {
  const v = (m as Record<string, number | null | undefined>)[key];
  return typeof v === 'number' ? v : null;
};

/** A metric summed over lines where present; null when no line has it. */
export function sumMetric(lines: readonly MetricLine[], key: TrainMetricKey): number | null {
  const xs = lines.map((m) => metric(m, key)).filter((x) => x !== null);
  return xs.length ? xs.reduce((a, b) => a + b, 0) : null;
}

/** A metric's mean over lines where present; null when no line has it. */
export function meanMetric(lines: readonly MetricLine[], key: TrainMetricKey): number | null {
  const n = lines.filter((m) => metric(m, key) !== null).length;
  const s = sumMetric(lines, key);
  return s === null ? null : s / n;
}
