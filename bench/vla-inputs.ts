// Seeded weights and observations for timing a VLA config (bench:head, bench:cameras).
import { Rng } from '../src/core/rng.ts';
import type { BatchObs } from '../src/env/types.ts';
import { Graph } from '../src/nn/ir.ts';
import { ParamStore } from '../src/nn/params.ts';
import { type VlaConfig, vlaForwardBuilder } from '../src/policy/vla.ts';

const INSTRUCTIONS = [
  'push the red cube to the orange zone',
  'pick the blue cube and place it on the green cube',
  'put the yellow cube in the bin',
  'stack the green cube on the blue cube',
];

/** The network's parameters, initialised with seed 0. */
export function paramsOf(config: VlaConfig): ParamStore {
  const g = new Graph();
  vlaForwardBuilder(config)(g);
  return ParamStore.init(g.params, 0);
}

/** `n` rows of random pixels, instructions and proprioception (seeded by n). */
export function observations(config: VlaConfig, n: number): BatchObs {
  const rng = new Rng(n, 1);
  const [h, w] = config.imageSize;
  const obs: BatchObs = {};
  for (const cam of config.cameras) obs[cam] = Uint8Array.from({ length: n * h * w * 3 }, () => rng.int(256));
  obs[config.instruction] = Array.from({ length: n }, (_, i) => INSTRUCTIONS[i % INSTRUCTIONS.length]);
  if (config.proprio)
    obs[config.proprio.name] = Float32Array.from({ length: n * config.proprio.dim }, () => rng.normal());
  return obs;
}
