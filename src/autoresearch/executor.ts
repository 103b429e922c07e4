// The sandboxed executor: runs one trusted Node script (the AutoResearch runner) in a child process with
// hard limits and reports what happened. Containment, outermost first: `prlimit --as` caps the address
// space (off-heap buffers included), `unshare -n` gives an empty network namespace, Node's permission
// model (--experimental-permission) allows reads only of node_modules, the compiled script, the run's
// scratch folder and the job's readPaths, writes only of scratch, and no child processes, workers or
// addons; --max-old-space-size caps the JS heap; a CPU-time limit (prlimit --cpu) decides timeouts,
// a much larger wall-clock limit only backs it up (outcome 'wall', never 'timeout'); output is capped.
// Where unshare or prlimit does not work the report says so (network, warnings) instead of failing.
// Node-only.
//
// Child contract: the script reads its input as JSON from the file named by $WMRL_INPUT (in its scratch
// folder $WMRL_SCRATCH, which is also its cwd) and prints its result as one JSON line, the last line on
// stdout. A .ts script is bundled first by esbuild (see sandbox-build.ts); packages resolve from the
// repo's node_modules.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { formatZodError } from '../core/spec.ts';
import { bundleScript, NODE_MODULES, SCRIPT_EXTENSIONS } from './sandbox-build.ts';
import {
  childCommand,
  classify,
  NODE_BOOT_MB,
  probeContainment,
  runChild,
  type Containment,
  type ExecOutcome,
} from './sandbox-process.ts';

export type { ExecOutcome } from './sandbox-process.ts';

/** An absolute path that Node's --allow-fs-* flags take literally (they split on commas and expand '*'). */
const FlagPath = z
  .string()
  .refine((p) => isAbsolute(p), 'must be an absolute path')
  .refine(
    (p) => !/[,*\n]/.test(p),
    "must not contain ',', '*' or a newline (Node's --allow-fs-* flags would split or expand it)",
  );

export const ExecLimitsSchema = z.object({
  cpuS: z
    .number()
    .int()
    .min(1)
    .max(3600)
    .describe(
      'CPU-time limit of the child, s (prlimit --cpu; outcome timeout): load on the machine hardly moves ' +
        'where a busy child hits it',
    ),
  wallMs: z
    .number()
    .int()
    .min(100)
    .max(36_000_000)
    .describe(
      'wall-clock backstop, ms (default wallBackstopMs(cpuS)); the process group is SIGKILLed when it runs out ' +
        "(outcome wall: the machine was too busy, or the child waited without computing; not the program's timeout)",
    ),
  memoryMb: z
    .number()
    .int()
    .min(1024)
    .max(1 << 20)
    .describe(
      `address-space cap of the child, MiB (prlimit --as; Node needs ~${NODE_BOOT_MB} to boot); ` +
        'the JS heap cap is heapMbFor(memoryMb)',
    ),
  outputBytes: z
    .number()
    .int()
    .min(1024)
    .max(1 << 30)
    .describe('bytes the child may write to stdout and stderr together; past it the child is killed'),
});
export type ExecLimits = z.infer<typeof ExecLimitsSchema>;

/** The wall-clock backstop of a CPU-time limit: 10x it plus a minute, so a child that gets a tenth of a
 *  core (a busy 2-core machine running other children beside it) still reaches its CPU limit first. */
export const wallBackstopMs = (cpuS: number): number => 10_000 * cpuS + 60_000;

/** 30 CPU s: the heaviest programs of the shipped AutoResearch tasks that are not absurd by design take
 *  up to ~17 s (MLP 256x3, 500 epochs; forest 200 trees of depth 16; scripts/program-cpu.ts). */
const DEFAULT_CPU_S = 30;
export const DEFAULT_LIMITS: ExecLimits = Object.freeze({
  cpuS: DEFAULT_CPU_S,
  wallMs: wallBackstopMs(DEFAULT_CPU_S),
  memoryMb: 1536,
  outputBytes: 64 * 1024,
});

export const ExecJobSchema = z
  .object({
    script: FlagPath.refine(
      (p) => SCRIPT_EXTENSIONS.some((e) => p.endsWith(e)),
      `must end in ${SCRIPT_EXTENSIONS.join(', ')}`,
    ).describe('absolute path of the trusted child script'),
    input: z
      .unknown()
      .refine(
        (v) => v !== undefined && safeJson(v) !== undefined,
        'must be JSON-serializable (not undefined, no BigInt, no cycles)',
      )
      .describe("the child's input, written as JSON to $WMRL_INPUT"),
    limits: ExecLimitsSchema.partial()
      .strict()
      .optional()
      .describe('overrides of DEFAULT_LIMITS (wallMs defaults to the backstop of cpuS)'),
    readPaths: z.array(FlagPath).optional().describe('extra files or folders the child may read (read-only)'),
  })
  .strict();
export type ExecJob = z.input<typeof ExecJobSchema>;

export interface ExecReport {
  outcome: ExecOutcome;
  /** The JSON value of the child's last non-empty stdout line; only when outcome is 'ok' and that line parses. */
  result?: unknown;
  /** The last bytes (<= 8 KiB) of the child's stderr. */
  stderrTail: string;
  /** Spawn to exit of the child process, ms. */
  wallMs: number;
  /** CPU seconds the child had used when the wall-clock backstop killed it (outcome 'wall'; where /proc
   *  tells): far below limits.cpuS means the machine was busy, not the program slow. */
  cpuAtKillS?: number;
  /** Time spent waiting for a free slot (concurrency), ms. */
  queueMs: number;
  /** The executor's own time around the child (compile check, scratch folder, input file, clean-up), ms. */
  overheadMs: number;
  network: 'isolated' | 'not-isolated';
  memoryCap: 'address-space' | 'heap-only';
  exitCode: number | null;
  signal: string | null;
  /** The child's pid (its process group is gone when the report arrives). */
  pid: number;
  /** The uncaught error's code when one escaped (ERR_ACCESS_DENIED, ENETUNREACH, ...). */
  errorCode?: string;
  /** The permission the model refused (FileSystemWrite, ChildProcess, WorkerThreads, ...), when it did. */
  permission?: string;
  /** Missing protections on this machine and clean-up problems: one line each. */
  warnings: string[];
  limits: ExecLimits;
}

const ExecutorOptionsSchema = z
  .object({
    concurrency: z
      .number()
      .int()
      .min(1)
      .max(256)
      .optional()
      .describe('children alive at once (default 2); more jobs wait, first come first served'),
    scratchRoot: FlagPath.optional().describe(
      'folder under which each run gets its own scratch folder (default $TMPDIR/wmrl-exec)',
    ),
  })
  .strict();
export type ExecutorOptions = z.input<typeof ExecutorOptionsSchema>;

function safeJson(v: unknown): string | undefined {
  try {
    return JSON.stringify(v);
  } catch {
    return undefined;
  }
}

function parse<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  const r = schema.safeParse(value);
  if (!r.success) throw new InputError(formatZodError(r.error, `${what} `));
  return r.data;
}

function mustExist(path: string, field: string): void {
  try {
    statSync(path);
  } catch {
    throw new InputError(`executor job $.${field}: no such file or folder: ${path}`);
  }
}

function lastJsonLine(stdout: string): unknown {
  const lines = stdout.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i].trim();
    if (!line) continue;
    try {
      return JSON.parse(line);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Runs jobs in sandboxed child processes, at most `concurrency` at once (FIFO queue). `run` rejects only
 *  for a bad job (InputError naming the field), a script that does not compile, or a child that cannot
 *  be started; whatever the child does ends in a report. */
export class Executor {
  readonly concurrency: number;
  readonly scratchRoot: string;
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(opts: ExecutorOptions = {}) {
    const o = parse(ExecutorOptionsSchema, opts, 'executor options');
    this.concurrency = o.concurrency ?? 2;
    this.scratchRoot = o.scratchRoot ?? join(tmpdir(), 'wmrl-exec');
  }

  /** Children alive now, and jobs waiting for a slot. */
  get running(): number {
    return this.active;
  }
  get queued(): number {
    return this.waiting.length;
  }

  /** What this machine contains (network namespace, address-space cap), probed once per process. */
  containment(): Promise<Containment> {
    return probeContainment();
  }

  /** Validates the job at once (a bad job gives a rejected promise, before anything is queued), then queues it. */
  run(job: ExecJob): Promise<ExecReport> {
    let valid: z.output<typeof ExecJobSchema>;
    try {
      valid = parse(ExecJobSchema, job, 'executor job');
      mustExist(valid.script, 'script');
      valid.readPaths?.forEach((p, i) => mustExist(p, `readPaths[${i}]`));
    } catch (error) {
      return Promise.reject(error);
    }
    const cpuS = valid.limits?.cpuS ?? DEFAULT_LIMITS.cpuS;
    const limits: ExecLimits = { ...DEFAULT_LIMITS, wallMs: wallBackstopMs(cpuS), ...valid.limits };
    const queuedAt = performance.now();
    const slot = this.acquire();
    return slot.then(async () => {
      try {
        return await this.execute(valid, limits, performance.now() - queuedAt);
      } finally {
        this.release();
      }
    });
  }

  /** Takes a slot now if one is free (so `running` and `queued` are exact right after `run` returns). */
  private acquire(): Promise<void> {
    if (this.active < this.concurrency) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next)
      next(); // the slot passes straight to the next job
    else this.active--;
  }

  private async execute(job: z.output<typeof ExecJobSchema>, limits: ExecLimits, queueMs: number): Promise<ExecReport> {
    const t0 = performance.now();
    const [containment, bundle] = await Promise.all([probeContainment(), bundleScript(job.script)]);
    mkdirSync(this.scratchRoot, { recursive: true });
    const scratch = realpathSync(mkdtempSync(join(realpathSync(this.scratchRoot), 'run-')));
    const warnings = [...containment.warnings];
    try {
      const inputFile = join(scratch, 'input.json');
      writeFileSync(inputFile, JSON.stringify(job.input));
      const cmd = childCommand(containment, {
        bundle,
        readPaths: [NODE_MODULES, scratch, ...(job.readPaths ?? [])], // the bundle lies in node_modules/.cache
        writePaths: [scratch],
        memoryMb: limits.memoryMb,
        cpuS: limits.cpuS,
      });
      const env = {
        WMRL_SCRATCH: scratch,
        WMRL_INPUT: inputFile,
        HOME: scratch,
        TMPDIR: scratch,
        TZ: 'UTC',
        LANG: 'C',
      };
      const tSpawn = performance.now();
      const exit = await runChild(cmd, {
        cwd: scratch,
        env,
        wallMs: limits.wallMs,
        outputBytes: limits.outputBytes,
        pollCpuS: containment.cpuCap === 'poll' ? limits.cpuS : undefined,
      });
      const tClose = tSpawn + exit.wallMs;
      const outcome = classify(exit, containment);
      const report: ExecReport = {
        outcome,
        stderrTail: exit.stderrTail,
        wallMs: exit.wallMs,
        ...(exit.cpuAtKill !== undefined && { cpuAtKillS: exit.cpuAtKill }),
        queueMs,
        overheadMs: 0,
        network: containment.network,
        memoryCap: containment.memoryCap,
        exitCode: exit.exitCode,
        signal: exit.signal,
        pid: exit.pid,
        warnings,
        limits,
      };
      if (outcome === 'ok') {
        const result = lastJsonLine(exit.stdout);
        if (result !== undefined) report.result = result;
      }
      if (exit.fatal?.code) report.errorCode = exit.fatal.code;
      if (exit.fatal?.permission) report.permission = exit.fatal.permission;
      cleanUp(scratch, warnings);
      report.overheadMs = tSpawn - t0 + (performance.now() - tClose);
      return report;
    } catch (error) {
      cleanUp(scratch, warnings);
      throw error;
    }
  }
}

function cleanUp(scratch: string, warnings: string[]): void {
  try {
    rmSync(scratch, { recursive: true, force: true });
  } catch (error) {
    warnings.push(`executor: could not remove scratch folder ${scratch}: ${(error as Error).message}`);
  }
}
