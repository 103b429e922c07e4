import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// What keeps `npm ci` quiet and offline-safe (docs/commands.md#npm-11-warning). npm 11.16+ lists every
// dependency with install scripts that package.json's allowScripts does not name; npm 10 ignores allowScripts
// and skips onnxruntime-node's CUDA download only through the .npmrc key.
const ROOT = resolve(import.meta.dirname, '..');
const read = (file: string) => readFileSync(resolve(ROOT, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  scripts: Record<string, string>;
  allowScripts?: Record<string, boolean>;
};
const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { hasInstallScript?: boolean }> };

/** Names of the locked packages that have install scripts (the key is a node_modules path). */
function withInstallScripts(): string[] {
  const names = Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && entry.hasInstallScript === true)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
  return [...new Set(names)].sort();
}

describe('install configuration', () => {
  it('allowScripts names exactly the locked packages that have install scripts', () => {
    expect(Object.keys(pkg.allowScripts ?? {}).sort()).toEqual(withInstallScripts());
  });

  it("runs esbuild's and msgpackr-extract's install scripts, never onnxruntime-node's", () => {
    expect(pkg.allowScripts).toMatchObject({ esbuild: true, 'msgpackr-extract': true, 'onnxruntime-node': false });
  });

  it('.npmrc skips the CUDA download for npm versions without allowScripts', () => {
    const lines = read('.npmrc')
      .split('\n')
      .filter((l) => l.trim() !== '' && !l.startsWith('#'));
    expect(lines).toEqual(['onnxruntime-node-install=skip']);
  });

  it('the install lifecycle starts no nested npm (under npm 11 each one repeats the .npmrc warning)', () => {
    for (const name of ['preinstall', 'install', 'postinstall', 'prepare']) {
      expect(pkg.scripts[name] ?? '').not.toMatch(/\bnpm\b/);
    }
  });
});
