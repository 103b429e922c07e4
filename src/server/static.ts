// Static files for the viewer: the built app, the shipped models (in-page mode) and onnxruntime-web's
// wasm. Only files below each mount's folder are served (no "..", no symlink out). Node-only.
import { createReadStream, existsSync, realpathSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, resolve, sep } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.onnx': 'application/octet-stream',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/** URL prefix -> folder, and which extensions it serves (undefined: all known types). */
export interface Mount {
  prefix: string;
  dir: string;
  extensions?: string[];
}

/** The real file for `rel` below `dir`, or null when it is missing or would leave `dir`. */
export function fileInside(dir: string, rel: string): string | null {
  if (!existsSync(dir) || rel.split('/').some((p) => p === '..') || rel.includes('\\') || rel.includes('\0'))
    return null;
  const base = realpathSync(dir);
  const path = resolve(base, `./${rel}`);
  if (!existsSync(path)) return null;
  const real = realpathSync(path);
  if (!real.startsWith(base + sep) || !statSync(real).isFile()) return null;
  return real;
}

export function serveStatic(mounts: readonly Mount[], req: IncomingMessage, res: ServerResponse): void {
  const fail = (code: number, text: string) => {
    res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(text);
  };
  if (req.method !== 'GET' && req.method !== 'HEAD') return void fail(405, 'method not allowed');
  let path: string;
  try {
    path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
  } catch {
    return void fail(400, 'bad path');
  }
  if (path === '/') path = '/index.html';
  const mount = [...mounts].sort((a, b) => b.prefix.length - a.prefix.length).find((m) => path.startsWith(m.prefix));
  const ext = extname(path);
  if (!mount || !(ext in TYPES) || (mount.extensions && !mount.extensions.includes(ext)))
    return void fail(404, 'not found');
  const file = fileInside(mount.dir, path.slice(mount.prefix.length));
  if (!file) return void fail(404, 'not found');
  res.writeHead(200, {
    'content-type': TYPES[ext],
    'content-length': statSync(file).size,
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
  });
  if (req.method === 'HEAD') return void res.end();
  createReadStream(file).pipe(res);
}
