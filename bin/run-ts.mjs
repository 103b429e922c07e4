#!/usr/bin/env node
// Runs one TypeScript file (benchmarks, scripts) through tsx: node bin/run-ts.mjs FILE [args...]
import { register } from 'tsx/esm/api';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

register();
const [file, ...rest] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bin/run-ts.mjs FILE [args...]');
  process.exit(2);
}
process.argv = [process.argv[0], resolve(file), ...rest];
await import(pathToFileURL(resolve(file)).href);
