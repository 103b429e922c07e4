import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEpisodeIndex } from '../../src/rollout/index.ts';

const BIN = new URL('../../bin/wmrl.mjs', import.meta.url).pathname;
const runs = mkdtempSync(join(tmpdir(), 'wmrl-serve-'));

/** Starts `wmrl serve ...args`; resolves with the printed URL (or the exit when it never prints one). */
function serve(...args: string[]) {
  const child = spawn('node', [BIN, 'serve', '--run', runs, ...args], { env: { ...process.env, NO_COLOR: '1' } });
  let out = '',
    err = '';
  const exit = new Promise<{ code: number | null; out: string; err: string }>((done) =>
    child.on('close', (code) => done({ code, out, err })),
  );
  const url = new Promise<string | null>((done) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /wmrl viewer: (\S+)/.exec(out);
      if (m) done(m[1]);
    });
    child.stderr.on('data', (d) => (err += d));
    void exit.then(() => done(null));
  });
  return { child, url, exit };
}

/** Runs `wmrl ...args` to the end; stdout and stderr as text. */
function finish(...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn('node', [BIN, ...args], { env: { ...process.env, NO_COLOR: '1' } });
  let out = '',
    err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  return new Promise((done) => child.on('close', (code) => done({ code, out, err })));
}

describe('--serve on the commands that run envs', () => {
  it('rollout --serve prints the viewer URL before it rolls out, then finishes as without it', {
    timeout: 120_000,
  }, async () => {
    const r = await finish(
      'rollout',
      '--task',
      'push',
      '--episodes',
      '1',
      '--num-envs',
      '1',
      '--out',
      join(runs, 'rollout'),
      '--serve',
      '--port',
      '0',
      '--json',
    );
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/^wmrl viewer: http:\/\/127\.0\.0\.1:\d+\/$/m);
    expect(JSON.parse(r.out).episodes).toBe(1);
  });

  it('npm start (wmrl start) prints the live viewer URL as its first line; its folder holds recorded episodes', {
    timeout: 240_000,
  }, async () => {
    const config = join(runs, 'evaluate.json');
    writeFileSync(config, JSON.stringify({ evalEvery: 1, evalEpisodes: 2 }));
    const r = await finish(
      'start',
      '--minutes',
      '0.15',
      '--preset',
      'smoke',
      '--config',
      config,
      '--episodes',
      '1',
      '--task',
      'pick-place',
      '--out',
      join(runs, 'start'),
      '--port',
      '0',
    );
    expect(r.code).toBe(0);
    expect(r.err.split('\n')[0]).toMatch(/^wmrl viewer \(live training\): http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(r.out).toContain('improvement:');
    const recorded = readEpisodeIndex(join(runs, 'start')).episodes;
    expect(recorded.filter((e) => e.source === 'world-model').length).toBeGreaterThan(0);
    expect(recorded[0]).toMatchObject({ iteration: 0, policy: 'iteration 0', split: 'heldout' });
  });
});

describe('wmrl serve', () => {
  it('prints a loopback URL, serves the models for the in-page mode, and stops on Ctrl-C (exit 130, as every command)', {
    timeout: 60_000,
  }, async () => {
    const s = serve('--port', '0');
    const url = await s.url;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const res = await fetch(`${url}models/vla-base.json`);
    expect(res.status).toBe(200);
    expect((await res.json()).kind).toBe('vla-policy');
    s.child.kill('SIGINT');
    expect((await s.exit).code).toBe(130);
  });

  it('beyond loopback, the URL carries a token', { timeout: 60_000 }, async () => {
    const s = serve('--port', '0', '--host', '0.0.0.0');
    expect(await s.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+\/\?token=[\w-]{20,}$/);
    s.child.kill('SIGINT');
    await s.exit;
  });

  it('a --run that is not a folder exits 2 naming --run', { timeout: 60_000 }, async () => {
    const child = spawn('node', [BIN, 'serve', '--run', join(runs, 'missing'), '--port', '0']);
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise((done) => child.on('close', done));
    expect(code).toBe(2);
    expect(err).toContain('--run');
  });

  it('a port that is taken exits 2 naming --port', { timeout: 60_000 }, async () => {
    const blocker = createServer();
    await new Promise<void>((ok) => blocker.listen(0, '127.0.0.1', ok));
    const port = (blocker.address() as { port: number }).port;
    try {
      const s = serve('--port', String(port));
      expect(await s.url).toBeNull();
      const end = await s.exit;
      expect(end.code).toBe(2);
      expect(end.err).toContain(`--port: ${port} is in use`);
    } finally {
      blocker.close();
    }
  });
});
