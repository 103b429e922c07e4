import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Enforces the folder boundaries each src/<folder>/index.ts states: which src folders and packages each may import.
const SRC = resolve(import.meta.dirname, '../src');
const ENGINES = ['physics', 'worldmodel', 'autoresearch'];
const FORBIDDEN: Record<string, string[]> = {
  core: [
    'env',
    'scene',
    'task',
    'physics',
    'render',
    'nn',
    'policy',
    'worldmodel',
    'autoresearch',
    'rollout',
    'eval',
    'demos',
    'trainer',
    'experiment',
    'protocol',
    'server',
    'cli',
    'store',
    '@dimforge',
    'three',
    'onnxruntime-node',
  ],
  env: [...ENGINES, 'trainer', 'experiment', 'cli', '@dimforge', 'onnxruntime-node'],
  scene: ['physics', 'render', 'nn', 'experiment', 'cli', '@dimforge', 'three', 'onnxruntime-node'],
  task: [
    'physics',
    'render',
    'nn',
    'policy',
    'worldmodel',
    'trainer',
    'experiment',
    'cli',
    '@dimforge',
    'three',
    'onnxruntime-node',
  ],
  physics: ['nn', 'policy', 'worldmodel', 'trainer', 'autoresearch', 'experiment', 'cli'],
  render: ['physics', 'nn', 'experiment', 'cli', '@dimforge', 'onnxruntime-node'],
  tabletop: [
    ...ENGINES,
    'nn',
    'policy',
    'rollout',
    'trainer',
    'experiment',
    'cli',
    '@dimforge',
    'three',
    'onnxruntime-node',
  ],
  nn: ['env', ...ENGINES, 'rollout', 'trainer', 'experiment', 'cli'],
  policy: [...ENGINES, 'trainer', 'experiment', 'cli'],
  worldmodel: ['physics', 'trainer', 'experiment', 'cli', '@dimforge'],
  autoresearch: ['physics', 'worldmodel', 'trainer', 'experiment', 'cli'],
  rollout: [...ENGINES, 'trainer', 'experiment', 'cli'],
  trainer: [...ENGINES, 'transport', 'experiment', 'cli', 'bullmq', 'ioredis'],
  transport: [...ENGINES, 'experiment', 'eval', 'demos', 'protocol', 'server', 'cli'],
  protocol: ['physics', 'nn', 'trainer', 'experiment', 'server', 'cli', 'onnxruntime-node'],
  server: ['trainer', 'experiment', 'cli'],
  eval: ['trainer', 'autoresearch', 'experiment', 'cli'],
  demos: ['worldmodel', 'trainer', 'autoresearch', 'experiment', 'cli'],
  // speedup.ts runs `wmrl train` as child processes (bin/wmrl.mjs) on purpose: each run isolated and resumable.
  experiment: ['protocol', 'server', 'cli', 'bullmq', 'ioredis'],
  cli: [],
};
/** store (run files on disk) may import only core: every other folder of the table is forbidden. */
FORBIDDEN.store = [...Object.keys(FORBIDDEN).filter((f) => f !== 'core'), '@dimforge', 'three', 'onnxruntime-node'];
/** Folders the browser viewer imports: no Node built-ins (files named *-file.ts or node-*.ts are the Node-only exceptions).
 *  nn is browser-safe too except modelfile.ts; the import-closure test below covers what the viewer really runs. */
const BROWSER_SAFE = [
  'core',
  'scene',
  'task',
  'render',
  'tabletop',
  'protocol',
  'env',
  'physics',
  'policy',
  'rollout',
  'worldmodel',
];
/** Browser code whose whole import closure must stay browser-safe (the in-page runner). */
const BROWSER_ENTRIES = [resolve(import.meta.dirname, '../viewer/src/sim')];
const NODE_ONLY_PACKAGES = ['onnxruntime-node', 'pngjs', 'commander', 'cli-progress', 'socket.io', 'tsx'];

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? tsFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'";]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1] ?? m[2]);
}

/** Imports that exist at run time (type-only imports are erased). */
function runtimeImportsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [
    ...text.matchAll(
      /(?:^|\n)\s*(import|export)(\s+type\b)?[^'";]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g,
    ),
  ]
    .filter((m) => !m[2])
    .map((m) => m[3] ?? m[4]);
}

/** What `entries` reach through relative imports that a browser cannot load: Node built-ins, Node-only
 *  packages, and '#ort' unless package.json maps it to onnxruntime-web for browsers. */
function nodeOnlyReach(entries: string[]): string[] {
  const ortBrowser =
    JSON.parse(readFileSync(resolve(import.meta.dirname, '../package.json'), 'utf8')).imports?.['#ort']?.browser ?? '';
  const stack = entries.flatMap((e) => (statSync(e).isDirectory() ? tsFiles(e) : [e]));
  const seen = new Set<string>();
  const found: string[] = [];
  while (stack.length) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const spec of runtimeImportsOf(file)) {
      if (spec.startsWith('.')) {
        stack.push(resolve(dirname(file), spec));
        continue;
      }
      const bad =
        spec.startsWith('node:') ||
        builtinModules.includes(spec) ||
        NODE_ONLY_PACKAGES.includes(spec.split('/')[0]) ||
        (spec === '#ort' && !ortBrowser.startsWith('onnxruntime-web'));
      if (bad) found.push(`${relative(resolve(SRC, '..'), file)} imports ${spec}`);
    }
  }
  return found;
}

/** The src folder or package an import specifier points at. */
function target(file: string, spec: string): string {
  if (spec.startsWith('.')) {
    const rel = relative(SRC, resolve(dirname(file), spec));
    return rel.startsWith('..') ? rel : rel.split(/[\\/]/)[0];
  }
  return spec.startsWith('@') ? spec.split('/')[0] : spec.split('/')[0];
}

describe('folder boundaries', () => {
  const files = tsFiles(SRC);

  it('every folder has an index.ts that says what it owns', () => {
    for (const folder of Object.keys(FORBIDDEN)) {
      const index = readFileSync(join(SRC, folder, 'index.ts'), 'utf8');
      expect(index.startsWith('//'), `src/${folder}/index.ts must start with a comment`).toBe(true);
    }
  });

  it('no folder imports what the table forbids', () => {
    const violations: string[] = [];
    for (const file of files) {
      const folder = relative(SRC, file).split(/[\\/]/)[0];
      const forbidden = FORBIDDEN[folder];
      if (!forbidden) {
        violations.push(`${relative(SRC, file)}: folder src/${folder} is not in the boundary table`);
        continue;
      }
      for (const spec of importsOf(file)) {
        const t = target(file, spec);
        if (forbidden.includes(t))
          violations.push(`src/${relative(SRC, file)} imports ${spec} (${folder} must not import ${t})`);
        const nodeOnly =
          spec.startsWith('node:') || ['fs', 'path', 'os', 'child_process', 'worker_threads'].includes(spec);
        const exempt = /(-file|^node-[^/]*)\.ts$/.test(file.split(/[\\/]/).pop()!);
        if (nodeOnly && BROWSER_SAFE.includes(folder) && !exempt)
          violations.push(`src/${relative(SRC, file)} imports ${spec} but src/${folder} must stay browser-safe`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('the in-page runner (viewer/src/sim) reaches no Node-only module through its imports', () => {
    expect(nodeOnlyReach(BROWSER_ENTRIES)).toEqual([]);
    expect(nodeOnlyReach([join(SRC, 'policy', 'model.ts')])).toContain('src/nn/modelfile.ts imports node:path'); // found two files away
  });

  it('finds imports of every form it checks', () => {
    expect(target(join(SRC, 'env', 'x.ts'), '../physics/env.ts')).toBe('physics');
    expect(target(join(SRC, 'env', 'x.ts'), '@dimforge/rapier3d-deterministic-compat')).toBe('@dimforge');
    expect(files.length).toBeGreaterThan(10);
  });
});
