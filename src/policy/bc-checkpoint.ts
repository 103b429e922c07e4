// BC checkpoints in a run folder: parameters + AdamW moments (checkpoint.bin) and the step, VLA config
// and run key (checkpoint.json), committed as one unit with the sha256 of the .bin (nn/checkpoint-file).
// Node-only.
import { InputError } from '../core/errors.ts';
import type { CommitOptions } from '../store/index.ts';
import { loadTrainCheckpoint, saveTrainCheckpoint } from '../nn/checkpoint-file.ts';
import type { ParamStore } from '../nn/params.ts';
import type { OptimizerState } from '../nn/train.ts';
import { dropLegacyValueHead } from './model-bytes.ts';
import { type VlaConfig, parseVlaConfig, type VlaConfigInput } from './vla.ts';

export const CHECKPOINT_FORMAT = 'wmrl-bc-checkpoint/2';

export interface BcCheckpoint {
  step: number;
  config: VlaConfig;
  run: Record<string, unknown>;
  params: ParamStore;
  optimizer: OptimizerState;
}

export function saveBcCheckpoint(dir: string, ck: BcCheckpoint, commit?: CommitOptions): void {
  saveTrainCheckpoint(
    dir,
    CHECKPOINT_FORMAT,
    { step: ck.step, run: ck.run, info: { config: ck.config }, params: ck.params, optimizer: ck.optimizer, extra: {} },
    commit,
  );
}

export function loadBcCheckpoint(dir: string): BcCheckpoint {
  const c = loadTrainCheckpoint(dir, CHECKPOINT_FORMAT);
  let config: VlaConfig;
  try {
    config = parseVlaConfig(c.info.config as VlaConfigInput);
  } catch (err) {
    throw new InputError(`${dir}/checkpoint.json: info.config: ${(err as Error).message}`);
  }
  return { step: c.step, config, run: c.run, params: dropLegacyValueHead(c.params), optimizer: c.optimizer };
}
