// This machine's nominal fp32 peak (cores x clock x FMA lanes), the basis of every share-of-peak figure.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

export function machine() {
  const info = readFileSync('/proc/cpuinfo', 'utf8');
  const mhz = Number(/cpu MHz\s*:\s*([\d.]+)/.exec(info)?.[1] ?? cpus()[0].speed);
  const flags = /flags\s*:\s*(.*)/.exec(info)?.[1].split(' ') ?? [];
  const lanes = flags.includes('avx512f') ? 16 : flags.includes('avx2') ? 8 : 4;
  const fmaPipes = 2;
  const flopsPerCycle = lanes * 2 * (flags.includes('fma') || lanes === 16 ? fmaPipes : 1);
  const cores = cpus().length;
  const peak = (cores * mhz * flopsPerCycle) / 1000;
  return {
    cores,
    mhz,
    flopsPerCycle,
    peakGflops: peak,
    model: cpus()[0].model,
    basis:
      `${cores} cores x ${(mhz / 1000).toFixed(3)} GHz x ${flopsPerCycle} fp32 FLOP/cycle ` +
      `(${lanes}-lane ${lanes === 16 ? 'AVX-512' : 'AVX2'} FMA x ${fmaPipes} pipes x 2); ` +
      'nominal clock from /proc/cpuinfo',
  };
}
