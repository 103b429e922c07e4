// Sleeps input.ms and prints when it started and ended on the system-wide monotonic clock
// (process.hrtime, CLOCK_MONOTONIC), so the concurrency tests can see which children were alive together.
import { readFileSync } from 'node:fs';
const { ms } = JSON.parse(readFileSync(process.env.WMRL_INPUT, 'utf8'));
const start = process.hrtime.bigint();
await new Promise((resolve) => setTimeout(resolve, ms));
const end = process.hrtime.bigint();
console.log(JSON.stringify({ start: String(start), end: String(end) }));
