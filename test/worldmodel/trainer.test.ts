import { describe, expect, it } from 'vitest';
import { ActionCoder, EnsembleDynamics, evaluateDynamics, limitsFromScene, spearman, stateLayout, TransitionSet, WorldModelTrainer } from '../../src/worldmodel/index.ts';
import { knownDynamicsEpisodes, scene, specOf } from './helpers.ts';

const spec = specOf('tabletop/push');
const coder = new ActionCoder(spec);
const layout = stateLayout(scene.objects);
const net = { members: 3, hidden: [64, 64] };

async function trainKnown(seed: number, steps: number) {
  const train = TransitionSet.fromEpisodes(layout, coder, knownDynamicsEpisodes(300, 6, 1));
  const val = TransitionSet.fromEpisodes(layout, coder, knownDynamicsEpisodes(10, 6, 2));
  const trainer = await WorldModelTrainer.create(train, val, { net, batch: 64, seed });
  const fit = await trainer.fit({ steps, lr: 3e-3, evalEvery: 100 });
  return { trainer, fit };
}

describe('world-model trainer', () => {
  it('recovers a known dynamics (the tool lags its command, fingers relax toward the command)', async () => {
    const { trainer, fit } = await trainKnown(0, 800);
    expect(fit.skipped).toBe(0);
    const dyn = await EnsembleDynamics.create(trainer.config, trainer.params(), layout, limitsFromScene(scene), spec);
    const report = await evaluateDynamics(dyn, scene, coder.names, knownDynamicsEpisodes(10, 6, 3), [5]);
    await dyn.close();
    await trainer.close();
    console.log(`known dynamics: 1-step ee ${(1000 * report.one_step.ee_m).toFixed(2)} mm (copy ${(1000 * report.one_step.copy_baseline.ee_m).toFixed(2)} mm), fingers ${(1000 * report.one_step.fingers_m).toFixed(2)} mm, H5 ee ${(1000 * report.open_loop.H5.ee_m).toFixed(2)} mm`);
    // A step moves the tool 0-28 mm; the learned model must be far better than "nothing moves".
    expect(report.one_step.ee_m).toBeLessThan(0.1 * report.one_step.copy_baseline.ee_m);
    expect(report.one_step.ee_m).toBeLessThan(0.002);
    expect(report.one_step.fingers_m).toBeLessThan(0.25 * report.one_step.copy_baseline.fingers_m);
    expect(report.one_step.objects_m).toBeLessThan(0.001);
    // open loop compounds the error but stays far below a random walk's 5-step spread (~35 mm)
    expect(report.open_loop.H5.ee_m).toBeLessThan(0.01);
  });

  it('is deterministic: same seed, same weights bit for bit; refresh warm-starts within its time budget', async () => {
    const a = await trainKnown(5, 40);
    const b = await trainKnown(5, 40);
    const pa = a.trainer.params(), pb = b.trainer.params();
    for (const name of pa.names) expect(Buffer.from(pa.get(name).buffer)).toEqual(Buffer.from(pb.get(name).buffer));
    await b.trainer.close();
    const added = a.trainer.addTransitions(knownDynamicsEpisodes(5, 6, 9));
    expect(added).toBe(30);
    const t0 = performance.now();
    const r = await a.trainer.refresh({ timeBudgetMs: 300, evalEvery: 10 });
    expect(r.steps).toBeGreaterThan(0);
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(a.trainer.steps).toBe(40 + r.steps);
    await a.trainer.close();
  });

  it('spearman handles ties', () => {
    expect(spearman([1, 2, 3], [10, 20, 30])).toBeCloseTo(1, 12);
    expect(spearman([0, 0, 1, 1], [0.1, 0.2, 0.7, 0.9])).toBeCloseTo(0.894427, 5);
    expect(spearman([1, 1, 1], [1, 2, 3])).toBe(0);
  });
});
