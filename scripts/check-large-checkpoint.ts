// node bin/run-ts.mjs scripts/check-large-checkpoint.ts [GiB=2.25] — writes a training checkpoint of
// more than 2 GiB (Node refuses to read such a file whole), reads it back with the reader every resume
// uses, checks every value and prints one JSON line. Needs about 2.5x the size in free memory.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTrainCheckpoint, saveTrainCheckpoint } from '../src/nn/checkpoint-file.ts';
import { ParamStore } from '../src/nn/params.ts';

const gib = Number(process.argv[2] ?? 2.25);
const n = Math.floor((gib * 2 ** 30) / 4);
const dir = mkdtempSync(join(tmpdir(), 'wmrl-large-ck-'));
try {
  const entry = (name: string, size: number) => ({ name, shape: [size], trainable: true, decay: false });
  const params = new ParamStore('float32');
  params.add(entry('w', 3), Float32Array.of(1, 2, 3));
  const big = new ParamStore('float32');
  const values = new Float32Array(n);
  for (let i = 0; i < n; i++) values[i] = i % 1000;
  big.add({ ...entry('rows', n), trainable: false }, values);
  const zeros = new Map([['w', new Float32Array(3)]]);
  let t0 = performance.now();
  const ck = { step: 1, run: {}, info: {}, params, optimizer: { step: 0, m: zeros, v: zeros }, extra: { big } };
  saveTrainCheckpoint(dir, 'large-check/1', ck);
  const saveS = (performance.now() - t0) / 1000;
  t0 = performance.now();
  const back = loadTrainCheckpoint(dir, 'large-check/1').extra.big.get('rows');
  const loadS = (performance.now() - t0) / 1000;
  let equal = back.length === n;
  for (let i = 0; equal && i < n; i++) equal = back[i] === i % 1000;
  const bytes = statSync(join(dir, 'checkpoint.bin')).size;
  console.log(JSON.stringify({ bin_gib: bytes / 2 ** 30, save_s: saveS, load_s: loadS, equal }));
  if (!equal) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
