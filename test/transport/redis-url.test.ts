import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import { isLoopbackHost, redactUrl, redisOptions } from '../../src/transport/redis.ts';

/** The InputError redisOptions throws for `url` (fails the test when it throws none or another). */
function refusal(url: string, flag?: string): string {
  try {
    redisOptions(url, flag);
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return (e as Error).message;
  }
  throw new Error(`${url} was accepted`);
}

describe('redisOptions', () => {
  it('takes a unix socket URL or a bare absolute path as a socket path', () => {
    const u = redisOptions('unix:///tmp/x.sock');
    expect(u.path).toBe('/tmp/x.sock');
    expect(u.host).toBeUndefined();
    expect(redisOptions('/tmp/x.sock')).toEqual({ maxRetriesPerRequest: null, path: '/tmp/x.sock' });
    expect(redisOptions('unix:///tmp/my%20redis.sock').path).toBe('/tmp/my redis.sock');
    expect(refusal('unix:relative.sock')).toMatch(/^--redis: unix socket URLs need an absolute path/);
    expect(refusal('unix://tmp/x.sock')).toMatch(/absolute path/); // "tmp" would be read as a host and dropped
  });

  it('reads host, port and database of a loopback URL', () => {
    const o = redisOptions('redis://127.0.0.1:6380/2');
    expect(o).toMatchObject({ host: '127.0.0.1', port: 6380, db: 2, maxRetriesPerRequest: null });
    expect(o.password).toBeUndefined();
    expect(o.tls).toBeUndefined();
  });

  it('accepts localhost and [::1] without a password, with the default port and database', () => {
    expect(redisOptions('redis://localhost')).toMatchObject({ host: 'localhost', port: 6379, db: 0 });
    expect(redisOptions('redis://[::1]:6379')).toMatchObject({ host: '::1', port: 6379, db: 0 });
    expect(redisOptions('redis://localhost/').db).toBe(0);
  });

  it('refuses another machine without a password or TLS, naming the flag and the ways out', () => {
    const msg = refusal('redis://10.0.0.5:6379');
    expect(msg).toMatch(/^--redis: 10\.0\.0\.5 is not this machine/);
    expect(msg).toContain('password');
    expect(msg).toContain('rediss://');
    expect(refusal('redis://user@10.0.0.5')).toMatch(/not this machine/); // a user name is not a password
  });

  it('accepts another machine with a password (percent-decoded)', () => {
    expect(redisOptions('redis://:secret@10.0.0.5:6379')).toMatchObject({
      host: '10.0.0.5',
      port: 6379,
      db: 0,
      password: 'secret',
    });
    expect(redisOptions('redis://:secret@10.0.0.5').username).toBeUndefined();
    expect(redisOptions('redis://bob:p%40ss@10.0.0.5/3')).toMatchObject({ username: 'bob', password: 'p@ss', db: 3 });
  });

  it('turns on TLS for rediss://, even without a password', () => {
    const o = redisOptions('rediss://host');
    expect(o).toMatchObject({ host: 'host', port: 6379, tls: { servername: 'host' } });
    expect(redisOptions('redis://localhost').tls).toBeUndefined();
  });

  it('refuses other protocols, non-URLs and a database that is not a number, naming the flag', () => {
    expect(refusal('http://x')).toMatch(/^--redis: protocol http: is not redis:, rediss: or unix:/);
    expect(refusal('not a url')).toMatch(/^--redis: "not a url" is not a URL/);
    expect(refusal('redis://h/abc')).toMatch(/^--redis: database "abc" is not a number/);
    expect(refusal('redis://localhost/-1')).toMatch(/database "-1"/);
    expect(refusal('redis://localhost/1.5')).toMatch(/database "1.5"/);
  });

  it('names a custom flag in its messages', () => {
    expect(refusal('http://x', '--queue')).toMatch(/^--queue: protocol http:/);
    expect(refusal('redis://10.0.0.5', '--queue')).toMatch(/^--queue: /);
    expect(refusal('not a url', '--queue')).not.toContain('--redis');
  });
});

describe('isLoopbackHost', () => {
  it('knows this machine', () => {
    for (const h of ['localhost', '127.0.0.1', '127.4.5.6', '::1', '[::1]']) expect(isLoopbackHost(h), h).toBe(true);
  });

  it('does not take other hosts for this machine', () => {
    for (const h of ['10.0.0.5', '128.0.0.1', '127.example.com', 'localhost.example.com', '::2', '0.0.0.0', 'host']) {
      expect(isLoopbackHost(h), h).toBe(false);
    }
  });
});

describe('redactUrl', () => {
  it('hides the password and keeps the rest', () => {
    const r = redactUrl('redis://:secret@10.0.0.5:6379');
    expect(r).not.toContain('secret');
    expect(r).toBe('redis://:***@10.0.0.5:6379');
    expect(redactUrl('rediss://bob:secret@host:6380/2')).toBe('rediss://bob:***@host:6380/2');
    expect(redactUrl('redis://:p@ss@10.0.0.5')).toBe('redis://:***@10.0.0.5'); // a raw @ in the password
    expect(refusal('redis://:secret@10.0.0.5:notaport')).not.toContain('secret');
  });

  it('leaves a URL without a password as it is', () => {
    for (const u of ['redis://127.0.0.1:6379/1', 'unix:///tmp/x.sock', '/tmp/x.sock', 'rediss://bob@host'])
      expect(redactUrl(u)).toBe(u);
  });
});
