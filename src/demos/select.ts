// Model selection on the validation split: every `every` steps of a pretraining run the policy is scored on
// validation episodes (never held-out ones) and the best weights so far are kept in the run folder
// (best.onnx, then selection.json). A score follows the checkpoint of its step, so a resumed run that
// finds its last checkpoint unscored scores it again and gets the same result.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { readInputJson } from '../core/input-file.ts';
import { canonicalJson } from '../core/spec.ts';
import { runEval } from '../eval/index.ts';
import type { ParamStore } from '../nn/params.ts';
import { loadPolicy, savePolicy } from '../policy/model.ts';
import type { VlaConfig } from '../policy/vla.ts';
import type { Scene } from '../scene/index.ts';
import { commitFiles } from '../store/index.ts';

const SelectionSchema = z.object({
  format: z.literal('wmrl-selection/1'),
  split: z.literal('validation'),
  // absent in files from when every task of the scene was scored
  tasks: z.array(z.string()).optional(),
  episodesPerTask: z.number().int().positive(),
  scores: z.array(z.object({ step: z.number().int().positive(), success: z.number().min(0).max(1) })),
});
type SelectionFile = z.infer<typeof SelectionSchema>;

export interface SelectionOptions {
  runDir: string;
  scene: Scene;
  config: VlaConfig;
  specHash: string;
  /** The tasks scored: those of the training data. */
  tasks: readonly string[];
  every: number;
  episodes: number;
}

export class Selection {
  private readonly path: string;
  readonly bestPath: string;
  private state: SelectionFile;

  /** The scores of steps up to `resumedAt` (the checkpoint a run continues from; 0 for a fresh run). */
  constructor(
    private readonly o: SelectionOptions,
    resumedAt: number,
  ) {
    this.path = join(o.runDir, 'selection.json');
    this.bestPath = join(o.runDir, 'best.onnx');
    const tasks = [...o.tasks];
    const fresh: SelectionFile = {
      format: 'wmrl-selection/1',
      split: 'validation',
      tasks,
      episodesPerTask: o.episodes,
      scores: [],
    };
    const saved = existsSync(this.path) ? readInputJson(this.path, SelectionSchema, 'validation scores') : fresh;
    const kept = saved.scores.filter((s) => s.step <= resumedAt);
    const scoredOn = saved.tasks ?? o.scene.tasks.map((t) => t.id);
    if (kept.length && canonicalJson(scoredOn) !== canonicalJson(tasks))
      throw new InputError(
        `${this.path}: tasks: its scores are over ${scoredOn.join(', ')}, the data's tasks are ${tasks.join(', ')}; ` +
          'use another --run-dir',
      );
    this.state = { ...saved, tasks, scores: kept };
  }

  /** A scheduled step (the last step is scored as well: the caller says when it is). */
  due(step: number): boolean {
    return this.o.every > 0 && step % this.o.every === 0;
  }

  scored(step: number): boolean {
    return this.state.scores.some((s) => s.step === step);
  }

  /** The best score so far (the earliest on a tie), or null before the first. */
  best(): { step: number; success: number } | null {
    return this.state.scores.reduce<{ step: number; success: number } | null>(
      (a, s) => (a === null || s.success > a.success ? s : a),
      null,
    );
  }

  /** Scores the weights of `step`; keeps them in best.onnx when they beat every earlier score. */
  async score(step: number, params: ParamStore): Promise<number> {
    const candidate = join(this.o.runDir, 'candidate.onnx');
    await this.save(candidate, params, step);
    const report = await runEval({
      scene: this.o.scene,
      tasks: [...this.o.tasks],
      policies: [candidate],
      split: 'validation',
      episodes: this.o.episodes,
      seed: 0,
      temperature: 1,
      numEnvs: 16,
    });
    const success = report.policies[0].results.overall.success_rate;
    const best = this.best();
    if (best === null || success > best.success) await this.save(this.bestPath, params, step);
    this.state.scores.push({ step, success });
    commitFiles([{ path: this.path, data: `${JSON.stringify(this.state, null, 2)}\n` }]);
    return success;
  }

  /** The selected weights (best.onnx). */
  async bestParams(): Promise<ParamStore> {
    return (await loadPolicy(this.bestPath)).params;
  }

  private save(path: string, params: ParamStore, step: number) {
    return savePolicy(path, this.o.config, params, {
      provenance: { producer: 'wmrl pretrain (validation selection)', seed: 0, steps: step, notes: `step ${step}` },
      specHash: this.o.specHash,
    });
  }
}
