// The sandboxed executor against real hostile child processes (no mocks): every containment test runs a
// well-behaved script in the same Executor afterwards, and checks the child's process group is gone.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import {
  DEFAULT_LIMITS,
  Executor,
  type ExecJob,
  type ExecReport,
  wallBackstopMs,
} from '../../src/autoresearch/executor.ts';
import { bundleScript } from '../../src/autoresearch/sandbox-build.ts';
import {
  childCommand,
  classify,
  cpuSecondsOf,
  heapMbFor,
  probeContainment,
  runChild,
} from '../../src/autoresearch/sandbox-process.ts';

const HOSTILE = resolve(import.meta.dirname, 'hostile');
const REPO = resolve(import.meta.dirname, '../..');
const script = (name: string) => join(HOSTILE, `${name}.mjs`);
const containment = await probeContainment();
const isolated = containment.network === 'isolated';
const capped = containment.memoryCap === 'address-space';

let work: string; // outside every scratch folder: targets of escapes, temporary .ts scripts
let scratchRoot: string;
let ex: Executor;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'wmrl-exec-test-'));
  scratchRoot = join(work, 'scratch');
  ex = new Executor({ concurrency: 2, scratchRoot });
});
const TS_DIR = join(tmpdir(), 'wmrl-exec-test-ts'); // fixed: the bundle's content (its cached file name) stays the same from run to run
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
  rmSync(TS_DIR, { recursive: true, force: true });
});

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs the hostile job, then a good one in the same Executor: the harness must keep working, the
 *  hostile child's process group must be gone and its scratch folder removed. */
async function hostile(job: ExecJob): Promise<ExecReport> {
  const report = await ex.run(job);
  expect(groupAlive(report.pid)).toBe(false);
  const good = await ex.run({ script: script('good'), input: { a: 2, b: 3 } });
  expect(good.outcome).toBe('ok');
  expect(good.result).toMatchObject({ sum: 5 });
  expect(readdirSync(scratchRoot)).toEqual([]);
  return report;
}

describe('Executor: a well-behaved child', () => {
  it('reads its input, writes its scratch folder and returns its last stdout line as the result', async () => {
    const r = await ex.run({ script: script('good'), input: { a: 1, b: 2 } });
    expect(r.outcome).toBe('ok');
    expect(r.exitCode).toBe(0);
    const result = r.result as { sum: number; note: string; cwd: string; scratch: string; envKeys: string[] };
    expect(result.sum).toBe(3);
    expect(result.note).toBe('sum=3');
    expect(result.cwd).toBe(result.scratch);
    expect(result.scratch.startsWith(scratchRoot)).toBe(true);
    // the parent's environment does not leak into the child
    expect(result.envKeys).toEqual(['HOME', 'LANG', 'TMPDIR', 'TZ', 'WMRL_INPUT', 'WMRL_SCRATCH']);
    expect(existsSync(result.scratch)).toBe(false);
    expect(r.network).toBe(containment.network);
    expect(r.limits).toEqual(DEFAULT_LIMITS);
    expect(r.wallMs).toBeGreaterThan(0);
    expect(r.overheadMs).toBeGreaterThanOrEqual(0);
  });

  it('says plainly when the network or the address space is not contained here', async () => {
    const r = await ex.run({ script: script('good'), input: { a: 0, b: 0 } });
    expect(r.network).toBe(containment.network);
    expect(r.memoryCap).toBe(containment.memoryCap);
    expect(r.warnings.some((w) => w.includes('network NOT isolated'))).toBe(!isolated);
    expect(r.warnings.some((w) => w.includes('address space NOT capped'))).toBe(!capped);
  });

  it('runs WebAssembly under the address-space cap (onnxruntime-web trains the MLP family in the sandbox)', async () => {
    const r = await hostile({ script: script('wasm'), input: {} });
    expect(r.outcome).toBe('ok');
    expect(r.result).toEqual({ add: 5, pages: 17 });
  });

  it('lets the child read the readPaths it is given, and nothing else', async () => {
    const dir = join(work, 'readable');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'data.txt'), 'visible');
    const allowed = await ex.run({
      script: script('read-outside'),
      input: { path: join(dir, 'data.txt') },
      readPaths: [dir],
    });
    expect(allowed.outcome).toBe('ok');
    expect(allowed.result).toEqual({ text: 'visible' });
    const refused = await hostile({ script: script('read-outside'), input: { path: join(dir, 'data.txt') } });
    expect(refused.outcome).toBe('denied');
    expect(refused.permission).toBe('FileSystemRead');
    expect(refused.result).toBeUndefined();
  });

  it('compiles a .ts script that imports src (types, zod, import.meta as under tsx) and maps its stack to the .ts file', async () => {
    const dir = TS_DIR;
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'child.ts');
    writeFileSync(
      file,
      [
        "import { readFileSync } from 'node:fs';",
        "import { z } from 'zod';",
        `import { FAMILIES } from ${JSON.stringify(join(REPO, 'src/autoresearch/dsl.ts'))};`,
        'const Input = z.object({ n: z.number() });',
        'const input: z.infer<typeof Input> = Input.parse(JSON.parse(readFileSync(process.env.WMRL_INPUT!, "utf8")));',
        "if (input.n < 0) throw new Error('negative n');",
        'console.log(JSON.stringify({ twice: input.n * 2, families: FAMILIES.length, dirname: import.meta.dirname, url: import.meta.url }));',
      ].join('\n'),
    );
    const ok = await ex.run({ script: file, input: { n: 21 } });
    expect(ok.outcome).toBe('ok');
    expect(ok.result).toEqual({ twice: 42, families: 7, dirname: dir, url: `file://${file}` });
    const bad = await ex.run({ script: file, input: { n: -1 } });
    expect(bad.outcome).toBe('error');
    expect(bad.stderrTail).toContain('negative n');
    expect(bad.stderrTail).toContain(`${file}:6:`);
    const broken = join(dir, 'broken.ts');
    writeFileSync(broken, 'const x: number = ;\n');
    await expect(ex.run({ script: broken, input: {} })).rejects.toThrow(
      /cannot compile .*broken\.ts[\s\S]*broken\.ts:1/,
    );
  });
});

describe('Executor: containment of hostile children', () => {
  it('limits CPU time by default; the wall clock is a backstop 10x as long plus a minute', () => {
    expect(DEFAULT_LIMITS.cpuS).toBe(30);
    expect(DEFAULT_LIMITS.wallMs).toBe(wallBackstopMs(30));
    expect(wallBackstopMs(4)).toBe(100_000);
  });

  it('the wall-clock backstop stops a child that waits without computing (wall, not the timeout of a CPU limit)', async () => {
    const r = await hostile({ script: script('sleep'), input: { ms: 60_000 }, limits: { wallMs: 1000 } });
    expect(r.outcome).toBe('wall');
    expect(r.signal).toBe('SIGKILL');
    expect(r.wallMs).toBeGreaterThanOrEqual(1000);
    if (containment.cpuCap !== 'none') expect(r.cpuAtKillS).toBeLessThan(0.9);
  });

  it.skipIf(containment.cpuCap === 'none')(
    'stops a busy child at its CPU-time limit (timeout), the backstop then sized from it',
    async () => {
      const r = await hostile({ script: script('loop'), input: {}, limits: { cpuS: 1 } });
      expect(r.outcome).toBe('timeout');
      if (containment.cpuCap === 'rlimit') expect(r.signal).toBe('SIGXCPU');
      expect(r.limits.wallMs).toBe(wallBackstopMs(1));
      expect(r.wallMs).toBeLessThan(30_000);
    },
  );

  it.skipIf(cpuSecondsOf(process.pid) === null)(
    'without prlimit, the parent stops a busy child at its CPU-time limit by reading /proc',
    async () => {
      const bare = { ...containment, unshare: null, prlimit: null, cpuCap: 'poll' } as const;
      const cmd = childCommand(bare, {
        bundle: await bundleScript(script('loop')),
        readPaths: [resolve(REPO, 'node_modules')],
        writePaths: [],
        memoryMb: 1536,
      });
      const exit = await runChild(cmd, { cwd: work, env: {}, wallMs: 60_000, outputBytes: 1024, pollCpuS: 1 });
      expect(exit.killedFor).toBe('cpu');
      expect(classify(exit, bare)).toBe('timeout');
      expect(exit.wallMs).toBeLessThan(30_000);
    },
  );

  it('stops a child that grows the JS heap without bound (memory)', async () => {
    const r = await hostile({ script: script('heap'), input: {}, limits: { memoryMb: 1280 } });
    expect(r.outcome).toBe('memory');
  });

  it.skipIf(!capped)(
    'stops a child that grows off-heap Buffers without bound (memory, by the address-space cap)',
    async () => {
      const r = await hostile({ script: script('offheap'), input: {} });
      expect(r.outcome).toBe('memory');
    },
  );

  it('reports a child that throws (error)', async () => {
    const r = await hostile({ script: script('throw'), input: {} });
    expect(r.outcome).toBe('error');
    expect(r.exitCode).toBe(1);
    expect(r.stderrTail).toContain('hostile: thrown on purpose');
    expect(r.result).toBeUndefined();
  });

  it('refuses a write outside the scratch folder (denied; the file never appears)', async () => {
    const target = join(work, 'escaped.txt');
    const r = await hostile({ script: script('write-outside'), input: { path: target } });
    expect(r.outcome).toBe('denied');
    expect(r.errorCode).toBe('ERR_ACCESS_DENIED');
    expect(r.permission).toBe('FileSystemWrite');
    expect(existsSync(target)).toBe(false);
  });

  describe('network', () => {
    let server: Server;
    let port = 0;
    let connections = 0;
    beforeAll(async () => {
      server = createServer((socket) => {
        connections++;
        socket.destroy();
      });
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((done) => server.close(() => done())));

    it.skipIf(!isolated)('gives the child no way to 127.0.0.1 (a local server sees no connection)', async () => {
      const r = await hostile({ script: script('net'), input: { host: '127.0.0.1', port } });
      expect(r.outcome).toBe('denied');
      expect(r.errorCode).toBe('ENETUNREACH');
      expect(r.result).toBeUndefined();
      expect(connections).toBe(0);
    });

    it.skipIf(!isolated)('gives the child no way to an external address', async () => {
      const r = await hostile({ script: script('net'), input: { host: '1.1.1.1', port: 80 } });
      expect(r.outcome).toBe('denied');
      expect(r.errorCode).toBe('ENETUNREACH');
    });
  });

  it('refuses to start a child process (denied)', async () => {
    const r = await hostile({ script: script('spawn'), input: {} });
    expect(r.outcome).toBe('denied');
    expect(r.permission).toBe('ChildProcess');
  });

  it('refuses to start a worker thread (denied)', async () => {
    const r = await hostile({ script: script('worker'), input: {} });
    expect(r.outcome).toBe('denied');
    expect(r.permission).toBe('WorkerThreads');
  });

  it('refuses to load a native addon (denied)', async () => {
    const r = await hostile({ script: script('addon'), input: {} });
    expect(r.outcome).toBe('denied');
    expect(r.errorCode).toBe('ERR_DLOPEN_DISABLED');
  });

  it('kills a child that prints past the output cap (output)', async () => {
    const r = await hostile({ script: script('flood'), input: {}, limits: { outputBytes: 4096 } });
    expect(r.outcome).toBe('output');
    expect(r.signal).toBe('SIGKILL');
    expect(r.result).toBeUndefined();
  });
});

describe('Executor: concurrency', () => {
  type Interval = { start: bigint; end: bigint };
  const interval = (r: ExecReport): Interval => {
    const o = r.result as { start: string; end: string };
    return { start: BigInt(o.start), end: BigInt(o.end) };
  };
  /** The most intervals alive at one instant (an end at the same instant as a start counts as before it). */
  const maxOverlap = (xs: Interval[]): number => {
    const events = xs
      .flatMap((x) => [
        { t: x.start, d: 1 },
        { t: x.end, d: -1 },
      ])
      .sort((a, b) => (a.t === b.t ? a.d - b.d : a.t < b.t ? -1 : 1));
    let alive = 0;
    let most = 0;
    for (const e of events) most = Math.max(most, (alive += e.d));
    return most;
  };

  it('keeps at most `concurrency` children alive and queues the rest', async () => {
    const pool = new Executor({ concurrency: 2, scratchRoot });
    const jobs = Array.from({ length: 4 }, () => pool.run({ script: script('sleep'), input: { ms: 300 } }));
    // slots are taken synchronously inside run()
    expect(pool.running).toBe(2);
    expect(pool.queued).toBe(2);
    const reports = await Promise.all(jobs);
    expect(reports.map((r) => r.outcome)).toEqual(['ok', 'ok', 'ok', 'ok']);
    // each child measured its own interval inside its lifetime, so this cannot exceed the real number alive
    expect(maxOverlap(reports.map(interval))).toBeLessThanOrEqual(2);
    expect(pool.running).toBe(0);
    expect(pool.queued).toBe(0);
    expect(reports.slice(2).every((r) => r.queueMs > 0)).toBe(true);
  });

  it('starts queued jobs first come, first served', async () => {
    const serial = new Executor({ concurrency: 1, scratchRoot });
    const reports = await Promise.all(
      Array.from({ length: 3 }, () => serial.run({ script: script('sleep'), input: { ms: 50 } })),
    );
    const xs = reports.map(interval);
    expect(xs[0].end <= xs[1].start && xs[1].end <= xs[2].start).toBe(true);
  });
});

describe('Executor: bad calls', () => {
  const bad = (job: unknown) => ex.run(job as ExecJob);
  it('rejects a bad job with an InputError naming the field', async () => {
    await expect(bad({ script: 'hostile/good.mjs', input: {} })).rejects.toThrow(
      /\$\.script: must be an absolute path/,
    );
    await expect(bad({ script: join(HOSTILE, 'missing.mjs'), input: {} })).rejects.toThrow(/\$\.script: no such file/);
    await expect(bad({ script: join(HOSTILE, 'good.txt'), input: {} })).rejects.toThrow(/\$\.script: must end in/);
    await expect(bad({ script: script('good') })).rejects.toThrow(/\$\.input/);
    await expect(bad({ script: script('good'), input: { n: 1n } })).rejects.toThrow(
      /\$\.input: must be JSON-serializable/,
    );
    await expect(bad({ script: script('good'), input: {}, limits: { memoryMb: 512 } })).rejects.toThrow(
      /\$\.limits\.memoryMb/,
    );
    await expect(bad({ script: script('good'), input: {}, limits: { wallMs: 1.5 } })).rejects.toThrow(
      /\$\.limits\.wallMs/,
    );
    await expect(bad({ script: script('good'), input: {}, limits: { cpuMs: 5 } })).rejects.toThrow(/cpuMs/);
    await expect(bad({ script: script('good'), input: {}, readPaths: ['/tmp/a,b'] })).rejects.toThrow(
      /\$\.readPaths\[0\]: must not contain ','/,
    );
    await expect(bad({ script: script('good'), input: {}, readPaths: [join(work, 'nope')] })).rejects.toThrow(
      /\$\.readPaths\[0\]: no such file/,
    );
    await expect(bad({ script: script('good'), input: {} })).resolves.toMatchObject({ outcome: 'ok' });
    await expect(bad({ script: 'x' })).rejects.toBeInstanceOf(InputError);
    expect(ex.running).toBe(0);
    expect(ex.queued).toBe(0);
  });

  it('rejects bad options with an InputError naming the field', () => {
    expect(() => new Executor({ concurrency: 0 })).toThrow(/\$\.concurrency/);
    expect(() => new Executor({ scratchRoot: 'rel/dir' })).toThrow(/\$\.scratchRoot: must be an absolute path/);
  });
});

describe('classify', () => {
  const exit = { killedFor: null, exitCode: 1, signal: null, stderrTail: '', fatal: null };
  const here = { network: 'isolated', memoryCap: 'address-space' } as const;
  it('names outcomes from the exit alone, in a fixed order', () => {
    expect(classify({ ...exit, killedFor: 'wall', exitCode: null, signal: 'SIGKILL' }, here)).toBe('wall');
    expect(classify({ ...exit, exitCode: null, signal: 'SIGXCPU' }, here)).toBe('timeout'); // the kernel's CPU limit
    expect(classify({ ...exit, killedFor: 'cpu', exitCode: null, signal: 'SIGKILL' }, here)).toBe('timeout'); // polled
    // with no CPU cap at all, the wall clock is the only time limit
    expect(classify({ ...exit, killedFor: 'wall', signal: 'SIGKILL' }, { ...here, cpuCap: 'none' })).toBe('timeout');
    expect(classify({ ...exit, exitCode: 0 }, here)).toBe('ok');
    expect(classify({ ...exit, exitCode: null, signal: 'SIGKILL' }, here)).toBe('memory'); // not ours: the OOM killer
    expect(classify({ ...exit, exitCode: null, signal: 'SIGSEGV' }, here)).toBe('memory');
    expect(classify({ ...exit, exitCode: null, signal: 'SIGSEGV' }, { ...here, memoryCap: 'heap-only' })).toBe('error');
    expect(
      classify(
        { ...exit, stderrTail: 'FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory' },
        here,
      ),
    ).toBe('memory');
    expect(classify({ ...exit, fatal: { code: 'ENETUNREACH' } }, here)).toBe('denied');
    expect(classify({ ...exit, fatal: { code: 'ENETUNREACH' } }, { ...here, network: 'not-isolated' })).toBe('error');
    expect(classify({ ...exit, stderrTail: "  code: 'ERR_ACCESS_DENIED',\n" }, here)).toBe('denied');
    expect(
      classify({ ...exit, exitCode: 2, stderrTail: 'Error: Access to this API has been restricted\n' }, here),
    ).toBe('denied'); // caught and printed
    expect(classify(exit, here)).toBe('error');
  });
  it('caps the heap below the address space', () => {
    expect(heapMbFor(1536)).toBe(384);
    expect(heapMbFor(1024)).toBe(128);
  });
});
