// Reads a file outside the allowed read paths, at the path its input names (outcome 'denied').
import { readFileSync } from 'node:fs';
const { path } = JSON.parse(readFileSync(process.env.WMRL_INPUT, 'utf8'));
console.log(JSON.stringify({ text: readFileSync(path, 'utf8') }));
