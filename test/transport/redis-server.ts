// A real Redis for tests: Debian's redis-server on a unix socket in a temp folder, no persistence.
// Suites that need it are declared with describeWithRedis: skipped, saying why, where it is missing; failed
// under CI (.ci/run installs it).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REDIS, describeWith, missing } from '../helpers/programs.ts';

export const describeWithRedis = describeWith(REDIS);

export interface RedisServer {
  url: string;
  dir: string;
  stop(): Promise<void>;
}

/** A free loopback TCP port (for the password test; the socket is the default). */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

/** `password`: also listens on a loopback port with requirepass; `url` is then redis://:PASSWORD@127.0.0.1:PORT.
 *  `tls`: listens with TLS only, on a certificate for localhost from a private CA (`ca`, the file
 *  for NODE_EXTRA_CA_CERTS; made with openssl); `url` is then rediss://localhost:PORT. */
export async function startRedis(o: { password?: string; tls?: boolean } = {}): Promise<RedisServer & { ca?: string }> {
  const why = missing([REDIS]);
  if (why !== '') throw new Error(`startRedis: ${why}`);
  const dir = mkdtempSync(join(tmpdir(), 'wmrl-redis-'));
  const socket = join(dir, 'redis.sock');
  const port = o.password || o.tls ? await freePort() : 0;
  const args = o.password
    ? ['--port', String(port), '--requirepass', o.password, '--bind', '127.0.0.1']
    : ['--port', '0'];
  let ca: string | undefined;
  if (o.tls) {
    const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
    const made = spawnSync('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost',
    ]);
    if (made.status !== 0) throw new Error(`openssl could not make a test certificate: ${made.stderr}`);
    ca = cert;
    args.splice(
      0,
      args.length,
      '--port',
      '0',
      '--tls-port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--tls-cert-file',
      cert,
      '--tls-key-file',
      key,
      '--tls-ca-cert-file',
      cert,
      '--tls-auth-clients',
      'no',
    );
  }
  const proc: ChildProcess = spawn(
    'redis-server',
    [...args, '--unixsocket', socket, '--unixsocketperm', '700', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  const failed = new Promise<never>((_, reject) => proc.once('error', reject));
  for (let i = 0; i < 200 && !existsSync(socket); i++)
    await Promise.race([new Promise((r) => setTimeout(r, 25)), failed]);
  if (!existsSync(socket)) throw new Error('redis-server did not open its socket in 5 s');
  return {
    url: o.tls
      ? `rediss://localhost:${port}`
      : o.password
        ? `redis://:${encodeURIComponent(o.password)}@127.0.0.1:${port}`
        : `unix://${socket}`,
    ca,
    dir,
    async stop() {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
