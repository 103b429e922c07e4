// Reaching Redis: the --redis URL (a unix socket or loopback by default; another machine only with a
// password or TLS), ioredis connections as BullMQ wants them, and the keys wmrl keeps besides BullMQ's.
import { isIP } from 'node:net';
import type { RedisOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { InputError } from '../core/errors.ts';

/** The BullMQ queue every trainer submits to and every worker takes from. */
export const QUEUE = 'wmrl-rollouts';
/** Results and policy versions outlive a crashed trainer by at most this long. */
export const KEY_TTL_S = 24 * 3600;

export const keys = {
  result: (jobId: string) => `wmrl:result:${jobId}`,
  version: (run: string, kind: 'policy' | 'world-model', hash: string) => `wmrl:${kind}:${run}:${hash}`,
};

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || (isIP(h) === 4 && h.startsWith('127.'));
}

/** `unix:///path/redis.sock` (or a bare absolute path), `redis://127.0.0.1:6379`, and for another
 *  machine `redis://:PASSWORD@host:6379` or `rediss://...` (TLS). Names the flag in errors. */
export function redisOptions(url: string, flag = '--redis'): RedisOptions {
  const base: RedisOptions = { maxRetriesPerRequest: null };
  if (url.startsWith('/')) return { ...base, path: url };
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new InputError(
      `${flag}: "${redactUrl(url)}" is not a URL (unix:///path/redis.sock, redis://127.0.0.1:6379, ` +
        'redis://:PASSWORD@host:6379 or rediss://...)',
    );
  }
  if (u.protocol === 'unix:') {
    if (u.host || !u.pathname.startsWith('/'))
      throw new InputError(`${flag}: unix socket URLs need an absolute path (unix:///path/redis.sock)`);
    return {
      ...base,
      path: decodeURIComponent(u.pathname),
      password: u.password ? decodeURIComponent(u.password) : undefined,
    };
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:')
    throw new InputError(`${flag}: protocol ${u.protocol} is not redis:, rediss: or unix:`);
  const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0;
  if (!Number.isInteger(db) || db < 0)
    throw new InputError(`${flag}: database "${u.pathname.slice(1)}" is not a number`);
  if (!isLoopbackHost(u.hostname) && !u.password && u.protocol !== 'rediss:') {
    const withPassword = `redis://:PASSWORD@${u.hostname}:${u.port || 6379}`;
    throw new InputError(
      `${flag}: ${u.hostname} is not this machine; ` +
        `reach another machine's Redis with a password (${withPassword}) or TLS (rediss://)`,
    );
  }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return {
    ...base,
    host,
    port: u.port ? Number(u.port) : 6379,
    db,
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    tls: u.protocol === 'rediss:' ? { servername: isIP(host) ? undefined : host } : undefined,
  };
}

/** The URL with its password replaced by *** (for messages and logs). */
export function redactUrl(url: string): string {
  return url.replace(/^(\w+:\/\/[^:/@]*:)[^/]*@/, '$1***@');
}

/** A connected client; an unreachable server is an InputError naming the URL. */
export async function connectRedis(url: string, flag = '--redis'): Promise<Redis> {
  const client = new Redis({
    ...redisOptions(url, flag),
    lazyConnect: true,
    retryStrategy: (times) => (times > 3 ? null : 200 * times),
  });
  let last: Error | undefined; // the socket's own error says more than the rejected connect
  client.on('error', (e: Error) => {
    last = e;
  });
  try {
    await client.connect();
    await client.ping();
  } catch (e) {
    client.disconnect();
    throw new InputError(`${flag}: cannot reach Redis at ${redactUrl(url)} (${(last ?? (e as Error)).message})`);
  }
  // after the first connection, keep retrying (a restarted server is picked up again)
  client.options.retryStrategy = (times) => Math.min(2000, 100 * times);
  return client;
}
