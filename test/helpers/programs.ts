// Suites that need a program from Debian (.ci/run installs each). Where one is missing the suite is skipped
// with a test titled by what to install and a warning on stderr; under CI (CI=true) it fails instead.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, it } from 'vitest';

export interface Program {
  name: string;
  /** Debian package that provides it. */
  pkg: string;
  present(): boolean;
}

export const underCI = process.env.CI === 'true' || process.env.CI === '1';

function program(name: string, pkg: string, probe: () => boolean): Program {
  let known: boolean | undefined;
  return { name, pkg, present: () => (known ??= probe()) };
}

const runs = (cmd: string, args: string[]) => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;

export const REDIS = program('redis-server', 'redis-server', () => runs('redis-server', ['--version']));
export const OPENSSL = program('openssl', 'openssl', () => runs('openssl', ['version']));
/** Debian's build, at the path playwright-core launches. */
export const CHROMIUM_PATH = '/usr/bin/chromium';
export const CHROMIUM = program('chromium', 'chromium', () => existsSync(CHROMIUM_PATH));

/** Why a suite cannot run here ('' when every program is installed). */
export function missing(programs: Program[]): string {
  const gone = programs.filter((p) => !p.present());
  if (gone.length === 0) return '';
  return `needs ${gone.map((p) => p.name).join(' and ')} (apt-get install ${gone.map((p) => p.pkg).join(' ')})`;
}

const warned = new Set<string>();

/** Says once per file on stderr that suites are skipped, and why. */
export function warnSkipped(why: string): void {
  if (warned.has(why)) return;
  warned.add(why);
  console.warn(`skipping suites in this file: each ${why}`);
}

/** describe() for a suite that needs `programs`: it runs where all are installed; otherwise it is one
 *  failing test under CI and one skipped test elsewhere, both titled by what is missing. */
export function describeWith(...programs: Program[]): (title: string, fn: () => void) => void {
  return (title, fn) => {
    const why = missing(programs);
    if (why === '') {
      describe(title, fn);
    } else if (underCI) {
      describe(title, () => {
        it(why, () => {
          throw new Error(`CI=true and this suite ${why}: .ci/run installs it`);
        });
      });
    } else {
      warnSkipped(why);
      describe(title, () => {
        it.skip(why, () => {});
      });
    }
  };
}
