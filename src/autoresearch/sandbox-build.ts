// Compiles a child script (.ts or .mjs, with its relative imports) into one ES module for the sandboxed
// executor. tsx cannot run inside the sandbox: its loader hooks need a worker thread and its esbuild
// transform a child process, and the permission model refuses both. So the parent (trusted, unsandboxed)
// bundles the script with esbuild, the same compiler tsx uses, and the child runs plain JavaScript.
// Packages stay external: the bundle is written under node_modules/.cache, so the child resolves them
// from the repo's node_modules exactly as tsx would. import.meta.url / dirname / filename are replaced
// per source file, so code that finds files next to itself behaves as under tsx. The one difference on
// purpose: '#ort' becomes onnxruntime-web (wasm), as the sandbox loads no native addon. Node-only.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Loader, type Plugin } from 'esbuild';

/** The repo root (this file is src/autoresearch/sandbox-build.ts). */
export const REPO_ROOT = resolve(import.meta.dirname, '../..');
/** Where packages resolve from, inside the child and for the bundles. */
export const NODE_MODULES = join(REPO_ROOT, 'node_modules');
/** Compiled bundles, named by content hash (written once, by rename, so concurrent builders agree). */
export const BUNDLE_DIR = join(NODE_MODULES, '.cache', 'wmrl-executor');

const LOADERS: Record<string, Loader> = {
  '.ts': 'ts',
  '.mts': 'ts',
  '.cts': 'ts',
  '.tsx': 'tsx',
  '.js': 'js',
  '.mjs': 'js',
  '.cjs': 'js',
  '.jsx': 'jsx',
};
/** Source extensions a job's script may have. */
export const SCRIPT_EXTENSIONS = ['.ts', '.mts', '.mjs', '.js'] as const;

/** Replaces import.meta.url / dirname / filename with the source file's own values (a bundle has one
 *  import.meta for all its modules). The rewrite is textual: the words inside a string literal change too. */
const importMetaPlugin: Plugin = {
  name: 'wmrl-import-meta',
  setup(b) {
    b.onLoad({ filter: /\.[cm]?[jt]sx?$/ }, (args) => {
      const loader = LOADERS[extname(args.path)];
      if (!loader || args.path.includes('/node_modules/')) return undefined;
      const text = readFileSync(args.path, 'utf8');
      const values: Record<string, string> = {
        url: pathToFileURL(args.path).href,
        dirname: dirname(args.path),
        filename: args.path,
      };
      const contents = text.replace(/\bimport\.meta\.(url|dirname|filename)\b/g, (_, key: string) =>
        JSON.stringify(values[key]),
      );
      return { contents, loader, resolveDir: dirname(args.path) };
    });
  },
};

interface Built {
  file: string;
  /** Every source file in the bundle with the mtime and size it had when built. */
  inputs: { path: string; mtimeMs: number; size: number }[];
}
const built = new Map<string, Promise<Built>>();

function fresh(b: Built): boolean {
  if (!existsSync(b.file)) return false;
  try {
    return b.inputs.every((i) => {
      const s = statSync(i.path);
      return s.mtimeMs === i.mtimeMs && s.size === i.size;
    });
  } catch {
    return false;
  }
}

/** The nn runtime's ORT binding ('#ort') becomes onnxruntime-web (wasm), left external: the
 *  sandbox loads no native addon, and the MLP family trains on the same kernels the browser uses. */
const wasmOrtPlugin: Plugin = {
  name: 'wmrl-wasm-ort',
  setup(b) {
    // its Node build (the /wasm export needs a browser)
    b.onResolve({ filter: /^#ort$/ }, () => ({ path: 'onnxruntime-web', external: true }));
  },
};

async function compile(script: string): Promise<Built> {
  const stamps = new Map<string, { mtimeMs: number; size: number }>();
  const result = await build({
    entryPoints: [script],
    absWorkingDir: REPO_ROOT,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'inline',
    sourcesContent: true,
    metafile: true,
    write: false,
    outdir: BUNDLE_DIR, // source-map paths are relative to the bundle's folder
    logLevel: 'silent',
    plugins: [importMetaPlugin, wasmOrtPlugin],
  }).catch((error: unknown) => {
    const messages = (error as { errors?: { text: string; location?: { file: string; line: number } | null }[] })
      .errors;
    const detail = messages
      ?.map((m) => (m.location ? `${m.location.file}:${m.location.line}: ${m.text}` : m.text))
      .join('\n');
    throw new Error(`executor: cannot compile ${script}:\n${detail ?? String(error)}`);
  });
  for (const input of Object.keys(result.metafile.inputs)) {
    const path = resolve(REPO_ROOT, input);
    try {
      const s = statSync(path);
      stamps.set(path, { mtimeMs: s.mtimeMs, size: s.size });
    } catch {
      // a plugin-made input without a file: nothing to watch
    }
  }
  const code = result.outputFiles[0].contents;
  const hash = createHash('sha256').update(code).digest('hex').slice(0, 16);
  const file = join(BUNDLE_DIR, `${basename(script).replace(/\.[^.]+$/, '')}-${hash}.mjs`);
  if (!existsSync(file)) {
    mkdirSync(BUNDLE_DIR, { recursive: true });
    const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    writeFileSync(tmp, code);
    renameSync(tmp, file);
  }
  return { file, inputs: [...stamps].map(([path, s]) => ({ path, ...s })) };
}

/** The bundle of `script` (an absolute path), rebuilt when any of its source files changed since the
 *  last build in this process. Throws (naming the file and line) when the script does not compile. */
export async function bundleScript(script: string): Promise<string> {
  const cached = built.get(script);
  if (cached) {
    const b = await cached.catch(() => undefined);
    if (b && fresh(b)) return b.file;
  }
  const next = compile(script);
  built.set(script, next);
  next.catch(() => built.delete(script));
  return (await next).file;
}
