// `wmrl version`: the code version runs, stamps and caches record (source hash, commit, clean tree), so a
// figure in the docs can name the code it was made by.
import type { Command } from 'commander';
import { z } from 'zod';
import { codeVersion, formatCodeVersion } from '../../store/index.ts';
import { parseOptions, printJson } from '../options.ts';

export function registerVersion(program: Command): void {
  program
    .command('version')
    .description(
      'the code version runs and caches record: sha256 of src/**/*.ts and package-lock.json, git commit, clean tree',
    )
    .option('--json', 'print one JSON object on stdout ({ source, commit, clean })')
    .action((raw) => {
      const opts = parseOptions(z.object({ json: z.boolean().optional() }), raw);
      if (opts.json) return printJson(codeVersion());
      process.stdout.write(`${formatCodeVersion(codeVersion())}\nsource ${codeVersion().source}\n`);
    });
}
