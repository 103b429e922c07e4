import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spearman } from '../../src/core/stats.ts';
import {
  ActionCoder,
  EnsembleDynamics,
  evaluateDynamics,
  stateGroups,
  limitsFromScene,
  loadWmCheckpoint,
  saveWmCheckpoint,
  stateLayout,
  stepsForBudget,
  TransitionSet,
  WorldModelTrainer,
} from '../../src/worldmodel/index.ts';
import type { ParamStore } from '../../src/nn/params.ts';
import { knownDynamicsEpisodes, scene, specOf } from './helpers.ts';

const spec = specOf('tabletop/push');
const coder = new ActionCoder(spec);
const layout = stateLayout(scene.objects);
const net = { members: 3, hidden: [64, 64] };
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const knownSets = () => ({
  train: TransitionSet.fromEpisodes(layout, coder, knownDynamicsEpisodes(300, 6, 1)),
  val: TransitionSet.fromEpisodes(layout, coder, knownDynamicsEpisodes(10, 6, 2)),
});

async function trainKnown(seed: number, steps: number, evalEvery = 100) {
  const { train, val } = knownSets();
  const trainer = await WorldModelTrainer.create(train, val, { net, batch: 64, seed });
  const fit = await trainer.fit({ steps, lr: 3e-3, evalEvery });
  return { trainer, fit };
}

function expectSameParams(a: ParamStore, b: ParamStore): void {
  expect(b.names).toEqual(a.names);
  for (const name of a.names) expect(Buffer.from(b.get(name).buffer), name).toEqual(Buffer.from(a.get(name).buffer));
}

describe('world-model trainer', () => {
  it('recovers a known dynamics (the tool lags its command, fingers relax toward the command)', async () => {
    const { trainer, fit } = await trainKnown(0, 800);
    expect(fit.skipped).toBe(0);
    const dyn = await EnsembleDynamics.create(trainer.config, trainer.params(), layout, limitsFromScene(scene), spec);
    const report = await evaluateDynamics(dyn, scene, coder.names, knownDynamicsEpisodes(10, 6, 3), [5]);
    await dyn.close();
    await trainer.close();
    console.log(
      `known dynamics: 1-step ee ${(1000 * report.one_step.ee_m).toFixed(2)} mm (copy ${(1000 * report.one_step.copy_baseline.ee_m).toFixed(2)} mm), fingers ${(1000 * report.one_step.fingers_m).toFixed(2)} mm, H5 ee ${(1000 * report.open_loop.H5.ee_m).toFixed(2)} mm`,
    );
    // A step moves the tool 0-28 mm; the learned model must be far better than "nothing moves".
    expect(report.one_step.ee_m).toBeLessThan(0.1 * report.one_step.copy_baseline.ee_m);
    expect(report.one_step.ee_m).toBeLessThan(0.002);
    expect(report.one_step.fingers_m).toBeLessThan(0.25 * report.one_step.copy_baseline.fingers_m);
    expect(report.one_step.objects_m).toBeLessThan(0.001);
    // open loop compounds the error but stays far below a random walk's 5-step spread (~35 mm)
    expect(report.open_loop.H5.ee_m).toBeLessThan(0.01);
    expect(report.excluded_off_table).toEqual([]);
  });

  it('leaves out episodes in which an object falls off the table, naming them', async () => {
    const { trainer } = await trainKnown(0, 50);
    const dyn = await EnsembleDynamics.create(trainer.config, trainer.params(), layout, limitsFromScene(scene), spec);
    const eps = knownDynamicsEpisodes(4, 6, 5);
    const S = layout.stateDim;
    const z = stateGroups(scene.objects.length).objectPos[1][2];
    const fallen = { ...eps[2], states: eps[2].states.slice() };
    for (let t = 3; t <= fallen.length; t++) fallen.states[t * S + z] = -0.5 * t; // falls through the void
    const report = await evaluateDynamics(dyn, scene, coder.names, [eps[0], eps[1], fallen, eps[3]], [5]);
    const clean = await evaluateDynamics(dyn, scene, coder.names, [eps[0], eps[1], eps[3]], [5]);
    await dyn.close();
    await trainer.close();
    expect(report.excluded_off_table).toEqual([{ task: fallen.taskId, seed: fallen.seed }]);
    expect({ ...report, excluded_off_table: [] }).toEqual(clean);
  });

  it('is deterministic: same seed, same weights bit for bit; refresh warm-starts for a step count', async () => {
    const a = await trainKnown(5, 40);
    const b = await trainKnown(5, 40);
    expectSameParams(a.trainer.params(), b.trainer.params());
    await b.trainer.close();
    const added = a.trainer.addTransitions(knownDynamicsEpisodes(5, 6, 9));
    expect(added).toBe(30);
    const r = await a.trainer.refresh({ steps: 25, evalEvery: 10 });
    expect(r.steps).toBe(25);
    expect(a.trainer.steps).toBe(40 + 25);
    await a.trainer.close();
  });

  it('a fit stopped at any step and resumed from a saved checkpoint ends bit-identical to an uninterrupted one', async () => {
    const straight = await trainKnown(7, 30, 10);
    const dir = await mkdtemp(join(tmpdir(), 'wmrl-wmck-'));
    dirs.push(dir);
    for (const stopAt of [13, 20]) {
      const { train, val } = knownSets();
      const first = await WorldModelTrainer.create(train, val, { net, batch: 64, seed: 7 });
      let n = 0;
      const cut = await first.fit({ steps: 30, lr: 3e-3, evalEvery: 10, shouldStop: () => n++ === stopAt });
      expect(cut).toMatchObject({ interrupted: true, steps: stopAt });
      saveWmCheckpoint(dir, { config: first.config, steps: 30, run: { seed: 7 }, state: first.exportState() });
      await first.close();
      const ck = loadWmCheckpoint(dir);
      expect(ck.state.step).toBe(stopAt);
      const second = await WorldModelTrainer.create(train, val, {
        net,
        batch: 64,
        seed: 7,
        init: ck.state.params,
        config: ck.config,
      });
      second.restore(ck.state);
      const rest = await second.fit({ steps: 30, lr: 3e-3, evalEvery: 10 });
      const { elapsedMs: _a, ...r1 } = rest;
      const { elapsedMs: _b, ...r0 } = straight.fit;
      expect(r1).toEqual(r0);
      expectSameParams(straight.trainer.params(), second.params());
      expectSameParams(straight.trainer.exportState().params, second.exportState().params);
      await second.close();
    }
    await straight.trainer.close();
  });

  it('a time budget only chooses the step count: the timing probe leaves the state untouched', async () => {
    expect(stepsForBudget(2, 10, 1000)).toBe(200);
    expect(stepsForBudget(100, 10, 1000)).toBe(1000);
    expect(stepsForBudget(0.001, 10, 1000)).toBe(1);
    const { train, val } = knownSets();
    const probed = await WorldModelTrainer.create(train, val, { net, batch: 64, seed: 3 });
    expect(await probed.measureStepMs(3)).toBeGreaterThan(0);
    await probed.fit({ steps: 12, lr: 3e-3, evalEvery: 6 });
    const plain = await trainKnown(3, 12, 6);
    expectSameParams(plain.trainer.exportState().params, probed.exportState().params);
    await probed.close();
    await plain.trainer.close();
  });

  it('spearman handles ties', () => {
    expect(spearman([1, 2, 3], [10, 20, 30])).toBeCloseTo(1, 12);
    expect(spearman([0, 0, 1, 1], [0.1, 0.2, 0.7, 0.9])).toBeCloseTo(0.894427, 5);
    expect(spearman([1, 1, 1], [1, 2, 3])).toBeNull();
  });
});
