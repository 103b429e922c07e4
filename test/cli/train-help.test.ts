import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PRESETS } from '../../src/trainer/index.ts';
import { wmrlProcess } from './helpers.ts';

const ROOT = join(import.meta.dirname, '../..');

/** The JSON block that follows `<!-- default-preset -->` in docs/trainer.md. */
function documentedDefault(): unknown {
  const doc = readFileSync(join(ROOT, 'docs/trainer.md'), 'utf8');
  const block = doc.split('<!-- default-preset -->')[1]?.match(/```json\n([^`]*)```/);
  if (!block) throw new Error('docs/trainer.md: no ```json block after <!-- default-preset -->');
  return JSON.parse(block[1]);
}

describe('wmrl train --help and the docs name one default preset', () => {
  it('the fields docs/trainer.md gives equal the ones --help prints, and the trainer uses', {
    timeout: 60_000,
  }, async () => {
    const r = await wmrlProcess(ROOT, 'train', '--help');
    expect(r.code).toBe(0);
    const line = r.stdout.split('\n').find((l) => l.startsWith('  default: '));
    expect(line, 'a "default:" line under Presets').toBeDefined();
    const printed = JSON.parse(line!.slice('  default: '.length));
    expect(printed).toEqual(documentedDefault());
    expect(printed).toEqual(PRESETS.default);
    expect(r.stdout).toMatch(/--preset <p> +default/);
  });
});
