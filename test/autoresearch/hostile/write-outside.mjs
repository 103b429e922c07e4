// Writes a file outside its scratch folder, at the path its input names (outcome 'denied'; the file must not appear).
import { readFileSync, writeFileSync } from 'node:fs';
const { path } = JSON.parse(readFileSync(process.env.WMRL_INPUT, 'utf8'));
writeFileSync(path, 'escaped');
console.log(JSON.stringify({ wrote: path }));
