// Checkpoint selection on the validation split: scores at every --select-every steps and at the end, the
// policy written is the best-scoring one, and a run stopped and resumed selects exactly as one that was not.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadScene } from '../../src/cli/scene.ts';
import { InputError } from '../../src/core/errors.ts';
import { collectDemos, DEMOS_FORMAT, type PretrainOptions, pretrain, writeDemoFolder } from '../../src/demos/index.ts';
import { loadPolicy } from '../../src/policy/model.ts';

// every evaluation's tasks, as runEval was asked
const evaluated = vi.hoisted(() => [] as string[][]);
vi.mock('../../src/eval/index.ts', async (importOriginal) => {
  const eval_ = await importOriginal<typeof import('../../src/eval/index.ts')>();
  return {
    ...eval_,
    runEval: (o: Parameters<typeof eval_.runEval>[0]) => {
      evaluated.push([...o.tasks]);
      return eval_.runEval(o);
    },
  };
});

const scene = loadScene(undefined);
const tmp = mkdtempSync(join(tmpdir(), 'wmrl-select-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const data = join(tmp, 'demos');

beforeAll(async () => {
  const demos = await collectDemos(scene, 'tabletop/pick-place', {
    episodes: 2,
    noise: 0.05,
    seed: 0,
    seedOffset: 0,
    numEnvs: 2,
  });
  const meta = {
    format: DEMOS_FORMAT,
    scene: 'scenes/tabletop.json',
    noise: 0.05,
    seed: 0,
    labels: 'expert',
    observations: 're-simulate',
  } as const;
  writeDemoFolder(data, meta, 'test', scene, demos);
}, 60_000);

const options = (name: string): PretrainOptions => ({
  data: [data],
  out: join(tmp, `${name}.onnx`),
  runDir: join(tmp, name),
  steps: 6,
  batch: 8,
  lr: 0.01,
  weightDecay: 0,
  shift: 0,
  size: 'tiny',
  seed: 0,
  logEvery: 3,
  threads: 1,
  checkpointEvery: 100,
  maxNonfinite: 20,
  counterfactual: false,
  selectEvery: 2,
  selectEpisodes: 2,
});

const scores = (name: string) => JSON.parse(readFileSync(join(tmp, name, 'selection.json'), 'utf8'));

describe('selection on the validation split', () => {
  it('scores every --select-every steps and writes the best-scoring weights', async () => {
    const r = await pretrain(options('a'));
    expect(r.stopped).toBe(false);
    const s = scores('a');
    expect(s.split).toBe('validation');
    expect(s.scores.map((x: { step: number }) => x.step)).toEqual([2, 4, 6]);
    const [out, best] = await Promise.all([loadPolicy(join(tmp, 'a.onnx')), loadPolicy(join(tmp, 'a', 'best.onnx'))]);
    // the scores of an untrained tiny net tie at 0, so the earliest (step 2), not the last weights, is chosen
    for (const name of best.params.names)
      expect(Array.from(out.params.get(name))).toEqual(Array.from(best.params.get(name)));
    expect(best.sidecar.provenance.steps).toBe(
      s.scores.reduce((a: any, x: any) => (x.success > a.success ? x : a)).step,
    );
  }, 120_000);

  it('a run stopped after a scored step and resumed selects exactly as the uninterrupted one', async () => {
    let steps = 0;
    const first = await pretrain(options('b'), { shouldStop: () => steps >= 3, onStep: () => steps++ });
    expect(first.stopped).toBe(true);
    await pretrain({ ...options('b'), resume: true });
    expect(scores('b')).toEqual(scores('a'));
    expect(readFileSync(join(tmp, 'b.onnx')).equals(readFileSync(join(tmp, 'a.onnx')))).toBe(true);
  }, 120_000);

  it('scores the tasks of the data, not every task of the scene, and records them', async () => {
    evaluated.length = 0;
    await pretrain(options('c'));
    expect(evaluated).toEqual([['tabletop/pick-place'], ['tabletop/pick-place'], ['tabletop/pick-place']]);
    expect(scores('c').tasks).toEqual(['tabletop/pick-place']);
  }, 120_000);

  it('a resume whose kept scores are over other tasks is refused, naming the file and the field', async () => {
    let steps = 0;
    await pretrain(options('d'), { shouldStop: () => steps >= 3, onStep: () => steps++ });
    const path = join(tmp, 'd', 'selection.json');
    writeFileSync(path, JSON.stringify({ ...scores('d'), tasks: ['tabletop/push'] }));
    const run = pretrain({ ...options('d'), resume: true });
    await expect(run).rejects.toThrow(InputError);
    await expect(run).rejects.toThrow(`${path}: tasks: its scores are over tabletop/push`);
  }, 120_000);
});
