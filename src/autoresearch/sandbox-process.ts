// The child process of the sandboxed executor: which OS tools contain it (probed once), its command line,
// spawning it in its own process group with a CPU-time limit, a wall-clock backstop and an output cap,
// and naming what happened from its exit. Node-only.
import { execFile, spawn } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Below ~768 MiB of address space Node 20 does not start (it reserves ~710 MiB of virtual memory at
 *  boot). The JS heap cap is half of what is left above that: V8's collector needs room off the heap
 *  too, and with two thirds a full heap hit the address-space cap first (SIGSEGV) here. With half, a
 *  growing heap ends in V8's "heap out of memory" fatal error from 1536 MiB up (at 1024 MiB the
 *  allocator's std::bad_alloc comes first; both are outcome 'memory'). */
export const NODE_BOOT_MB = 768;
export function heapMbFor(memoryMb: number): number {
  return Math.max(64, Math.floor((memoryMb - NODE_BOOT_MB) / 2));
}

export interface Containment {
  /** `unshare` and its flags when it works here: `-n` as root, else `-r -n` (a user namespace, where the
   *  kernel allows them); the child gets an empty network namespace (loopback down, no interfaces). */
  unshare: string[] | null;
  /** `prlimit` when it works here: the child's address space is capped. */
  prlimit: string | null;
  network: 'isolated' | 'not-isolated';
  memoryCap: 'address-space' | 'heap-only';
  /** How the CPU-time limit is enforced: the kernel (prlimit --cpu), the parent reading /proc (no
   *  prlimit), or not at all (then the wall-clock backstop is the only limit, and load moves outcomes). */
  cpuCap: 'rlimit' | 'poll' | 'none';
  /** One line per missing protection, for the report and the caller's log. */
  warnings: string[];
}

function which(name: string): string | null {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return null;
}

function works(file: string, args: string[]): Promise<boolean> {
  return new Promise((done) => execFile(file, args, { timeout: 10_000 }, (error) => done(!error)));
}

const UNSHARE_FLAGS = [['-n'], ['-r', '-n']];
let probed: Promise<Containment> | undefined;
/** What this machine can do, probed once per process (three `node -e 0` in parallel, ~0.1 s). */
export function probeContainment(): Promise<Containment> {
  probed ??= (async () => {
    const unshare = which('unshare');
    const prlimit = which('prlimit');
    const probe = [process.execPath, '-e', '0'];
    const [asOk, ...netOks] = await Promise.all([
      prlimit ? works(prlimit, [`--as=${2048 * 2 ** 20}`, '--', ...probe]) : false,
      ...UNSHARE_FLAGS.map((flags) => (unshare ? works(unshare, [...flags, '--', ...probe]) : false)),
    ]);
    const flags = UNSHARE_FLAGS.find((_, i) => netOks[i]);
    const netOk = unshare !== null && flags !== undefined;
    const warnings: string[] = [];
    if (!netOk) {
      const why = unshare
        ? '`unshare -n` and `unshare -r -n` failed (need root or user namespaces)'
        : 'no `unshare` on PATH';
      warnings.push(`executor: network NOT isolated: ${why}; children can open sockets`);
    }
    if (!asOk)
      warnings.push(
        `executor: address space NOT capped: ${prlimit ? '`prlimit --as` failed' : 'no `prlimit` on PATH'}; ` +
          'only the JS heap is capped, off-heap buffers are not',
      );
    const cpuCap = asOk ? 'rlimit' : cpuSecondsOf(process.pid) !== null ? 'poll' : 'none';
    if (cpuCap === 'none')
      warnings.push(
        'executor: CPU time NOT capped (no `prlimit`, no /proc): the wall-clock limit decides timeouts, ' +
          'so load on the machine moves outcomes',
      );
    return {
      unshare: netOk ? [unshare, ...flags] : null,
      prlimit: asOk ? prlimit : null,
      network: netOk ? 'isolated' : 'not-isolated',
      memoryCap: asOk ? 'address-space' : 'heap-only',
      cpuCap,
      warnings,
    };
  })();
  return probed;
}

/** CPU seconds (user + system) process `pid` has used so far, from /proc (null where it cannot be read). */
export function cpuSecondsOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}
/** USER_HZ: 100 on every Linux port Node runs on. */
const CLOCK_TICKS = 100;

/** The child's uncaught error, as the preload module reports it on fd 3 (absent when none escaped). */
export interface FatalRecord {
  name?: string;
  code?: string;
  permission?: string;
  message?: string;
}

/** Runs first in the child (an --import of a data: URL, so it needs no file): reports an uncaught
 *  exception or unhandled rejection as one JSON line on fd 3, then lets Node print and exit as usual. */
const PRELOAD =
  `import { writeSync } from 'node:fs';
process.on('uncaughtExceptionMonitor', (e) => {
  try {
    const o = e !== null && typeof e === 'object' ? e : { message: String(e) };
    const str = (v) => (v === undefined || v === null ? undefined : String(v).slice(0, 500));
    writeSync(3, JSON.stringify({ name: str(o.name), code: str(o.code), ` +
  `permission: str(o.permission), message: str(o.message) }) + '\\n');
  } catch {}
});
`;

export interface ChildCommand {
  file: string;
  args: string[];
}

/** The command line: [prlimit --as] [unshare -n] node, permission model on, reads limited to `readPaths`
 *  (files or folders), writes to `writePaths`; no child processes, workers, addons or WASI. */
export function childCommand(
  c: Containment,
  o: { bundle: string; readPaths: string[]; writePaths: string[]; memoryMb: number; cpuS?: number },
): ChildCommand {
  const node = [
    process.execPath,
    '--experimental-permission',
    ...o.readPaths.map((p) => `--allow-fs-read=${p}`),
    ...o.writePaths.map((p) => `--allow-fs-write=${p}`),
    `--max-old-space-size=${heapMbFor(o.memoryMb)}`,
    // wasm (the MLP's onnxruntime-web) then bounds-checks instead of reserving ~10 GiB of address space
    // per memory, which the address-space cap would refuse
    '--disable-wasm-trap-handler',
    '--disable-warning=ExperimentalWarning',
    '--enable-source-maps',
    // WebAssembly (onnxruntime-web) otherwise reserves a ~10 GiB virtual cage for trap-handler bounds
    // checks, which the address-space cap refuses ("WebAssembly.Memory(): could not allocate memory")
    '--disable-wasm-trap-handler',
    `--import=data:text/javascript,${encodeURIComponent(PRELOAD)}`,
    o.bundle,
  ];
  const wrap: string[] = [];
  // CPU seconds: SIGXCPU at the soft limit, SIGKILL a second later; no core file (dumping one would
  // spend the second)
  if (c.prlimit)
    wrap.push(
      c.prlimit,
      `--as=${o.memoryMb * 2 ** 20}`,
      ...(o.cpuS ? [`--cpu=${o.cpuS}:${o.cpuS + 1}`, '--core=0'] : []),
      '--',
    );
  if (c.unshare) wrap.push(...c.unshare, '--');
  const argv = [...wrap, ...node];
  return { file: argv[0], args: argv.slice(1) };
}

export interface ChildExit {
  /** Why the executor killed the child, if it did: the wall-clock backstop, the output cap, or (where
   *  the kernel does not enforce it) the CPU-time limit. */
  killedFor: 'wall' | 'output' | 'cpu' | null;
  /** CPU seconds the child had used when the wall-clock backstop killed it (where /proc tells). */
  cpuAtKill?: number;
  exitCode: number | null;
  signal: string | null;
  pid: number;
  stdout: string;
  stderrTail: string;
  fatal: FatalRecord | null;
  wallMs: number;
}

const STDERR_TAIL_BYTES = 8192;
const FATAL_BYTES = 16384;

/** Spawns the child detached (its own process group), kills the whole group with SIGKILL when the wall
 *  clock, the output cap (stdout + stderr bytes) or (with `pollCpuS`, where no rlimit does it) the CPU
 *  time runs out, and resolves once every pipe has closed. Rejects only when the child cannot be started. */
export function runChild(
  cmd: ChildCommand,
  o: { cwd: string; env: Record<string, string>; wallMs: number; outputBytes: number; pollCpuS?: number },
): Promise<ChildExit> {
  return new Promise((done, fail) => {
    const t0 = performance.now();
    const child = spawn(cmd.file, cmd.args, {
      cwd: o.cwd,
      env: o.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    let killedFor: ChildExit['killedFor'] = null;
    let exited = false;
    let outBytes = 0;
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = Buffer.alloc(0);
    const fatal: Buffer[] = [];
    let fatalBytes = 0;

    let cpuAtKill: number | undefined;
    const kill = (why: NonNullable<ChildExit['killedFor']>) => {
      if (exited || killedFor) return;
      killedFor = why;
      if (why === 'wall') cpuAtKill = cpuSecondsOf(child.pid!) ?? undefined;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(() => kill('wall'), o.wallMs);
    const poll =
      o.pollCpuS === undefined
        ? undefined
        : setInterval(() => {
            if ((cpuSecondsOf(child.pid!) ?? 0) >= o.pollCpuS!) kill('cpu');
          }, 100);
    const count = (n: number) => {
      outBytes += n;
      if (outBytes > o.outputBytes) kill('output');
    };
    child.stdout!.on('data', (b: Buffer) => {
      const room = o.outputBytes - stdoutBytes;
      if (room > 0) {
        stdout.push(room >= b.length ? b : b.subarray(0, room));
        stdoutBytes += Math.min(room, b.length);
      }
      count(b.length);
    });
    child.stderr!.on('data', (b: Buffer) => {
      stderr = Buffer.concat([stderr, b]);
      if (stderr.length > STDERR_TAIL_BYTES) stderr = stderr.subarray(stderr.length - STDERR_TAIL_BYTES);
      count(b.length);
    });
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (b: Buffer) => {
      if (fatalBytes < FATAL_BYTES) fatal.push(b);
      fatalBytes += b.length;
    });
    child.on('exit', () => {
      exited = true;
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      clearInterval(poll);
      fail(new Error(`executor: cannot start the child (${cmd.file}): ${error.message}`));
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      clearInterval(poll);
      if (child.pid === undefined) return; // 'error' already rejected
      done({
        killedFor,
        ...(cpuAtKill !== undefined && { cpuAtKill }),
        exitCode,
        signal,
        pid: child.pid,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderrTail: stderr.toString('utf8'),
        fatal: parseFatal(Buffer.concat(fatal).toString('utf8')),
        wallMs: performance.now() - t0,
      });
    });
  });
}

function parseFatal(text: string): FatalRecord | null {
  const line = text.split('\n').find((l) => l.trim());
  if (!line) return null;
  try {
    const o = JSON.parse(line) as Record<string, unknown>;
    const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
    return { name: str(o.name), code: str(o.code), permission: str(o.permission), message: str(o.message) };
  } catch {
    return null;
  }
}

/** The messages with which V8, the C++ runtime and Node report running out of memory. */
const MEMORY_PATTERNS = new RegExp(
  [
    'JavaScript heap out of memory',
    'process out of memory',
    'std::bad_alloc',
    'Array buffer allocation failed',
    'Cannot allocate memory',
    'Reached heap limit',
  ].join('|'),
);
/** Error codes of a refused access: the permission model (fs, child_process, worker_threads), disabled
 *  addons, and (inside an empty network namespace) sockets and name lookups. */
const DENIED_CODES = new Set(['ERR_ACCESS_DENIED', 'ERR_DLOPEN_DISABLED']);
const NET_DENIED_CODES = new Set(['ENETUNREACH', 'EAI_AGAIN']);
/** Node's messages for those two codes, for a child that catches the error and prints only its message. */
const DENIED_MESSAGES = /Access to this API has been restricted|loading addons is disabled/;

/** 'timeout': the CPU-time limit (a property of the program, nearly independent of load); 'wall': the
 *  wall-clock backstop, which a busy machine (or a child that waits without computing) reaches. */
export type ExecOutcome = 'ok' | 'error' | 'timeout' | 'wall' | 'memory' | 'output' | 'denied';

/** Names what happened, in this order: killed by us (wall, output; CPU polled: timeout), exit 0 (ok),
 *  the kernel's CPU-time signal (timeout), out of memory
 *  (a V8 / allocator / Node message, SIGKILL we did not send: the kernel's OOM killer, or SIGSEGV/SIGBUS
 *  under the address-space cap: V8 touching memory it failed to map), a refused access (the uncaught
 *  error's code, or Node's message for it in stderr when the child caught it), else error. */
export function classify(
  x: Pick<ChildExit, 'killedFor' | 'exitCode' | 'signal' | 'stderrTail' | 'fatal'>,
  c: Pick<Containment, 'network' | 'memoryCap'> & Partial<Pick<Containment, 'cpuCap'>>,
): ExecOutcome {
  // with no CPU cap at all, the wall clock is the only time limit there is
  if (x.killedFor === 'cpu' || (x.killedFor === 'wall' && c.cpuCap === 'none')) return 'timeout';
  if (x.killedFor) return x.killedFor;
  if (x.exitCode === 0) return 'ok';
  if (x.signal === 'SIGXCPU') return 'timeout'; // its CPU-time limit
  const crashed = x.signal === 'SIGSEGV' || x.signal === 'SIGBUS';
  if (x.signal === 'SIGKILL' || (crashed && c.memoryCap === 'address-space')) return 'memory';
  if (MEMORY_PATTERNS.test(x.fatal?.message ?? '') || MEMORY_PATTERNS.test(x.stderrTail)) return 'memory';
  const code = x.fatal?.code ?? /code: '(ERR_ACCESS_DENIED|ERR_DLOPEN_DISABLED)'/.exec(x.stderrTail)?.[1];
  if (code && (DENIED_CODES.has(code) || (c.network === 'isolated' && NET_DENIED_CODES.has(code)))) return 'denied';
  if (DENIED_MESSAGES.test(x.fatal?.message ?? '') || DENIED_MESSAGES.test(x.stderrTail)) return 'denied';
  return 'error';
}
