// Runs the wmrl program in-process and captures what it prints on stdout.
import { vi } from 'vitest';
import { buildProgram } from '../../src/cli/main.ts';

export async function runCli(args: string[]): Promise<string> {
  let out = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    await buildProgram().parseAsync(args, { from: 'user' });
  } finally {
    spy.mockRestore();
    err.mockRestore();
  }
  return out;
}

/** The one JSON object a --json command printed. */
export async function runJson(args: string[]): Promise<Record<string, any>> {
  const out = await runCli(args);
  const lines = out.trim().split('\n');
  if (lines.length !== 1)
    throw new Error(`expected one JSON line on stdout, got ${lines.length}: ${out.slice(0, 200)}`);
  return JSON.parse(lines[0]);
}

const BIN = new URL('../../bin/wmrl.mjs', import.meta.url).pathname;

/** Where a child runs: a folder, or a folder and extra environment variables. */
type Where = string | { cwd: string; env: NodeJS.ProcessEnv };
const childOptions = (w: Where) =>
  typeof w === 'string'
    ? { cwd: w, env: { ...process.env, NO_COLOR: '1' } }
    : { cwd: w.cwd, env: { ...process.env, NO_COLOR: '1', ...w.env } };

/** Runs the real `wmrl` executable in a child process, as a user would; never throws. */
export async function wmrlProcess(
  where: Where,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { execFile } = await import('node:child_process');
  return new Promise((resolve) => {
    execFile('node', [BIN, ...args], childOptions(where), (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** Starts the real `wmrl` executable and returns the child (to signal) and its outcome. */
export async function spawnWmrl(
  where: Where,
  ...args: string[]
): Promise<{
  child: import('node:child_process').ChildProcess;
  done: Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>;
}> {
  const { spawn } = await import('node:child_process');
  const child = spawn('node', [BIN, ...args], childOptions(where));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>(
    (resolve) => {
      child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    },
  );
  return { child, done };
}

/** Polls `ready` every 10 ms (no fixed sleeps) until it holds; fails when `alive` turns false first. */
export async function waitFor(ready: () => boolean, alive: () => boolean, what: string): Promise<void> {
  while (!ready()) {
    if (!alive()) throw new Error(`the process ended before ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Starts `wmrl ...args` in `cwd`, sends SIGINT once `metrics` holds its first line, and returns that
 *  line's step with how the process ended. */
export async function interruptAfterFirstMetrics(
  cwd: string,
  metrics: string,
  ...args: string[]
): Promise<{ seen: number; end: { code: number | null; stdout: string; stderr: string } }> {
  const { readFileSync, existsSync } = await import('node:fs');
  const { child, done } = await spawnWmrl(cwd, ...args);
  let exited = false;
  void done.then(() => (exited = true));
  await waitFor(
    () => existsSync(metrics) && readFileSync(metrics, 'utf8').includes('\n'),
    () => !exited,
    'the first metrics line',
  );
  const seen = JSON.parse(readFileSync(metrics, 'utf8').split('\n')[0]).step as number;
  child.kill('SIGINT');
  return { seen, end: await done };
}
