import { statSync } from 'node:fs';
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { SPLITS } from '../task/index.ts';

/** A bad flag or argument: printed as "error: ..." with exit code 2. */
export class UsageError extends InputError {}

/** Validate commander's raw option bag with zod; errors name the flag, e.g. "--episodes: ...". */
export function parseOptions<T extends z.ZodType>(schema: T, raw: Record<string, unknown>): z.infer<T> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const key = String(issue.path[0] ?? '');
    const flag = key ? `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}` : 'options';
    if (key && raw[key] === undefined && issue.code === 'invalid_type') return `${flag}: required`;
    return `${flag}: ${issue.message}${key && raw[key] !== undefined ? ` (got ${JSON.stringify(raw[key])})` : ''}`;
  });
  throw new UsageError(lines.join('\n'));
}

export const intFlag = (min: number) => z.coerce.number().int(`must be an integer`).min(min, `must be >= ${min}`);
export const seedFlag = z.coerce
  .number()
  .int('must be an integer')
  .min(0, 'must be >= 0')
  .max(0x7fffffff, 'must be < 2^31');
export const splitFlag = z.enum(SPLITS);

/** The forms of --redis (wmrl worker, wmrl train; src/transport/redis.ts checks them). */
export const REDIS_URL_HELP =
  'unix:///path/redis.sock, redis://127.0.0.1:6379, or for another machine redis://:PASSWORD@host:6379 / rediss://...';

/** Throws a UsageError naming the flag unless `path` is an existing file (not a folder). */
export function requireFile(flag: string, path: string, what: string): void {
  let isFile = false;
  try {
    isFile = statSync(path).isFile();
  } catch {
    throw new UsageError(`${flag}: ${what} "${path}" does not exist`);
  }
  if (!isFile) throw new UsageError(`${flag}: "${path}" is a folder, not a ${what}`);
}

/** Print exactly one JSON object on stdout (the --json contract). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}
