// A well-behaved child: reads its input, writes and reads back a scratch file, prints one JSON result line.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const input = JSON.parse(readFileSync(process.env.WMRL_INPUT, 'utf8'));
const file = join(process.env.WMRL_SCRATCH, 'note.txt');
writeFileSync(file, `sum=${input.a + input.b}`);
console.log('a log line before the result');
console.log(
  JSON.stringify({
    sum: input.a + input.b,
    note: readFileSync(file, 'utf8'),
    cwd: process.cwd(),
    scratch: process.env.WMRL_SCRATCH,
    envKeys: Object.keys(process.env).sort(),
  }),
);
