import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  collectDemos,
  counterfactualTask,
  DEMOS_FORMAT,
  type Demo,
  learnerWithExpert,
  readDemoFolder,
  writeDemoFolder,
} from '../../src/demos/index.ts';
import { loadScene } from '../../src/cli/scene.ts';
import { tabletopTrainSetup } from '../../src/experiment/tabletop.ts';
import { runEpisodes } from '../../src/physics/index.ts';
import { randomPolicy } from '../../src/rollout/policies.ts';
import { familyTasks, sampleTask, splitOf, splitSeed, usesReservedPair } from '../../src/task/index.ts';

const scene = loadScene(undefined);
const TASKS = ['tabletop/pick-place', 'tabletop/stack', 'tabletop/push', 'tabletop/put-in-bin'];
const reservedPairs = (taskId: string) => scene.tasks.find((t) => t.id === taskId)!.heldoutPairs.length;

describe('counterfactual tasks', () => {
  it('swap the object phrase, keep layout and target, and never make the target the object', () => {
    for (const taskId of TASKS) {
      for (let k = 0; k < 10; k++) {
        const task = sampleTask(scene, taskId, splitSeed(scene, 'train', k));
        let alternatives = 0;
        scene.objects.forEach((obj, o) => {
          const cf = counterfactualTask(scene, task, o);
          if (o === task.object || (task.target.kind === 'object' && task.target.index === o))
            return expect(cf).toBeNull();
          if (usesReservedPair(scene, { ...task, object: o })) return expect(cf).toBeNull();
          alternatives++;
          expect(cf!.object).toBe(o);
          expect(cf!.target).toEqual(task.target);
          expect(cf!.initObjects).toBe(task.initObjects);
          expect(obj.words.some((w) => cf!.instruction.includes(w))).toBe(true);
          expect(
            scene.objects[task.object].words.some((w) =>
              cf!.instruction.startsWith(task.instruction.slice(0, task.instruction.indexOf(w)) + w),
            ),
          ).toBe(false);
        });
        expect(alternatives).toBeLessThanOrEqual(
          task.target.kind === 'object' ? scene.objects.length - 2 : scene.objects.length - 1,
        );
      }
    }
  });

  it('never name a pair reserved for held-out seeds', () => {
    let refused = 0;
    for (const taskId of TASKS)
      for (let k = 0; k < 20; k++) {
        const task = sampleTask(scene, taskId, splitSeed(scene, 'train', k));
        for (let o = 0; o < scene.objects.length; o++) {
          const cf = counterfactualTask(scene, task, o);
          if (cf) expect(usesReservedPair(scene, cf), `${taskId} train ${k} object ${o}`).toBe(false);
          else if (o !== task.object && usesReservedPair(scene, { ...task, object: o })) refused++;
        }
      }
    expect(refused).toBeGreaterThan(0);
  });
});

describe('no training row names a reserved (held-out) pair', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'wmrl-heldout-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  /** Every (object, target) a demo's rows name: its own episode's, and each counterfactual record's. */
  const rowsNamingReserved = (demos: readonly Demo[]) =>
    demos.flatMap((d) => {
      const task = sampleTask(scene, d.task, d.seed);
      return [task, ...d.counterfactual.map((x) => ({ ...task, object: x.object }))]
        .filter((t) => usesReservedPair(scene, t))
        .map(() => `${d.task} seed ${d.seed}`);
    });

  it('demonstrations and their counterfactual rows, as collected into a folder and read back', {
    timeout: 60_000,
  }, async () => {
    const demos: Demo[] = [];
    for (const taskId of TASKS)
      demos.push(
        ...(await collectDemos(scene, taskId, { episodes: 3, noise: 0.05, seed: 0, seedOffset: 0, numEnvs: 3 })),
      );
    const dir = join(tmp, 'demos');
    const meta = { format: DEMOS_FORMAT, scene: 'scenes/tabletop.json', noise: 0.05, seed: 0 } as const;
    writeDemoFolder(dir, { ...meta, labels: 'expert', observations: 're-simulate' }, 'test', scene, demos);
    const back = readDemoFolder(dir, scene).demos;
    expect(back.reduce((s, d) => s + d.counterfactual.length, 0)).toBeGreaterThan(100);
    expect(rowsNamingReserved(back)).toEqual([]);
  });

  it('DAgger rows (a learner mixed with the expert, labelled by it)', { timeout: 60_000 }, async () => {
    const demos: Demo[] = [];
    for (const taskId of TASKS) {
      let labeller: ReturnType<typeof learnerWithExpert>['labeller'] | null = null;
      const episodes = await runEpisodes({
        scene,
        taskId,
        policyName: 'dagger',
        episodes: 3,
        split: 'train',
        seedOffset: 0,
        numEnvs: 3,
        recordStates: true,
        makePolicy: (env) => {
          const p = learnerWithExpert(env, randomPolicy(env.spec, 1), 0.5, 1);
          labeller = p.labeller;
          return p;
        },
      });
      demos.push(...labeller!.demos(episodes));
    }
    expect(demos.reduce((s, d) => s + d.counterfactual.length, 0)).toBeGreaterThan(0);
    expect(rowsNamingReserved(demos)).toEqual([]);
  });

  it('relabels and training starts (AgentBrew, evolution, frontier) come from train seeds and pairs', async () => {
    const { tasks } = await tabletopTrainSetup(scene, TASKS, { mode: 'real', worldModel: '', seed: 0 });
    for (const t of tasks) {
      expect(t.trainStarts).toBeGreaterThan(0);
      for (const k of [0, 1, t.trainStarts - 1]) {
        const seed = t.trainSeed(k);
        expect(splitOf(scene, seed)).toBe('train');
        const family = familyTasks(scene, t.id, seed);
        expect(family.length).toBeGreaterThan(1);
        expect(family.filter((x) => usesReservedPair(scene, x))).toEqual([]);
      }
      expect(reservedPairs(t.id)).toBeGreaterThan(0);
    }
  });
});
