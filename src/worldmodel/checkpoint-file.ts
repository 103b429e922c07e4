// World-model train checkpoints in a run folder: the trainer state (current weights, AdamW moments,
// step, best weights and score) plus the net config, the run key and the step count of the run,
// committed as one unit (nn/checkpoint-file). Node-only.
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { parseInput } from '../core/input-file.ts';
import { loadTrainCheckpoint, saveTrainCheckpoint } from '../nn/checkpoint-file.ts';
import type { WorldModelNetConfig } from '../nn/nets/worldmodel.ts';
import type { CommitOptions } from '../store/index.ts';
import type { TrainerState } from './trainer.ts';

export const WM_CHECKPOINT_FORMAT = 'wmrl-wm-checkpoint/1';

const InfoSchema = z.object({
  config: z
    .object({
      stateDim: z.number().int().positive(),
      actionDim: z.number().int().positive(),
      outDim: z.number().int().positive(),
      members: z.number().int().positive(),
      hidden: z.array(z.number().int().positive()),
      act: z.enum(['relu', 'silu', 'tanh']),
    })
    .passthrough(),
  /** Steps of the whole run (chosen by --steps or a time budget; a resume replays it). */
  steps: z.number().int().min(1),
  fitStep: z.number().int().min(0),
  skipped: z.number().int().min(0),
  bestStep: z.number().int(),
  bestScore: z.number().nullable(),
});

export interface WmCheckpoint {
  config: WorldModelNetConfig & { members: number };
  steps: number;
  run: Record<string, unknown>;
  state: TrainerState;
}

export function saveWmCheckpoint(dir: string, ck: WmCheckpoint, commit?: CommitOptions): void {
  const s = ck.state;
  const info = {
    config: ck.config,
    steps: ck.steps,
    fitStep: s.fitStep,
    skipped: s.skipped,
    bestStep: s.bestStep,
    bestScore: s.bestScore,
  };
  saveTrainCheckpoint(
    dir,
    WM_CHECKPOINT_FORMAT,
    { step: s.step, run: ck.run, info, params: s.params, optimizer: s.optimizer, extra: { best: s.best } },
    commit,
  );
}

export function loadWmCheckpoint(dir: string): WmCheckpoint {
  const c = loadTrainCheckpoint(dir, WM_CHECKPOINT_FORMAT);
  const i = parseInput(c.info, InfoSchema, `${dir}/checkpoint.json info`);
  if (!c.extra.best) throw new InputError(`${dir}/checkpoint.json: stores.best: missing`);
  const state: TrainerState = {
    step: c.step,
    fitStep: i.fitStep,
    skipped: i.skipped,
    bestStep: i.bestStep,
    bestScore: i.bestScore,
    params: c.params,
    optimizer: c.optimizer,
    best: c.extra.best,
  };
  return { config: i.config as WorldModelNetConfig & { members: number }, steps: i.steps, run: c.run, state };
}
