import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { failedStages, formatReport, lastStage, runEval, stagesTable, validateReport } from '../../src/eval/index.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';
import { packState, sampleTask, splitSeed, stateSize, unpackState } from '../../src/task/index.ts';
import { runJson } from '../cli/helpers.ts';

const scene = loadSceneFile(DEFAULT_SCENE_PATH);
const taskId = 'tabletop/stack';
const seed = splitSeed(scene, 'train', 7);

/** The episode's initial layout with the tool far above; `lift` holds the task object 5 cm up, away
 *  from its target, in the closed fingers. */
function finalState(lift: boolean): Float64Array {
  const task = sampleTask(scene, taskId, seed);
  const s = unpackState(new Float64Array(stateSize(scene.objects.length)), scene.objects.length);
  task.initObjects.forEach((o, i) => {
    s.objects[i].pos = [...o.pos];
    s.objects[i].quat = [0, 0, 0, 1];
  });
  s.eePos = [0, 0, 0.3];
  s.fingers = [0.04, 0.04];
  if (lift) {
    const o = s.objects[task.object];
    o.pos = [o.pos[0], o.pos[1], o.pos[2] + 0.05];
    s.eePos = [...o.pos];
    s.fingers = [0.02, 0.02]; // closed onto the 4 cm cube
  }
  return packState(s) as Float64Array;
}

describe('failed episodes by the last stage reached', () => {
  it('puts a known final state in its column: held 5 cm up away from the target is "lifted"', () => {
    const lifted = unpackState(finalState(true), scene.objects.length);
    expect(lastStage(scene, taskId, seed, lifted)).toBe('lifted');
    expect(lastStage(scene, taskId, seed, unpackState(finalState(false), scene.objects.length))).toBe('none');
    const f = failedStages(scene, taskId, [
      { seed, success: false, finalState: finalState(true) },
      { seed, success: false, finalState: finalState(true) },
      { seed, success: false, finalState: finalState(false) },
      { seed, success: false, offTable: true, finalState: finalState(true) },
      { seed, success: true }, // successes are not counted and need no state
    ]);
    expect(f).toEqual({
      failed: 4,
      stages: { none: 1, ee_near_object: 0, grasped: 0, lifted: 2, above_target: 0, off_table: 1 },
    });
    const table = stagesTable([{ policy: 'p', failed_stages: { [taskId]: f } }]);
    expect(table).toContain('| task | failed | none | stage 1 | stage 2 | stage 3 | stage 4 | off table |');
    expect(table).toContain(
      '| tabletop/stack | 4 | 1 | ee_near_object 0 | grasped 0 | lifted 2 | above_target 0 | 1 |',
    );
  });

  it('eval reports carry the counts per family (JSON) and print the table', async () => {
    const report = await runEval({
      scene,
      tasks: ['tabletop/push'],
      policies: ['random'],
      split: 'train',
      episodes: 2,
      seed: 0,
      temperature: 1,
      numEnvs: 2,
    });
    const f = validateReport(JSON.parse(JSON.stringify(report))).policies[0].failed_stages!['tabletop/push'];
    expect(f.failed).toBe(2);
    expect(Object.values(f.stages).reduce((a, b) => a + b, 0)).toBe(2);
    expect(Object.keys(f.stages)).toEqual([
      'none',
      'ee_near_object',
      'object_toward_target',
      'object_near_target',
      'object_in_target',
      'off_table',
    ]);
    expect(formatReport(report)).toContain('failed episodes by the last stage reached at their final state: random');
  });

  it('--compare with a --handover sweep: every K and policy carries the counts, and handover.md has their tables', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'wmrl-stages-'));
    try {
      const out = await runJson(
        ['eval', '--compare', 'random', 'expert', '--task', 'push', '--split', 'train', '--episodes', '1'].concat([
          '--handover',
          '0,5',
          '--out',
          dir,
          '--json',
        ]),
      );
      for (const point of out.points)
        for (const p of point.policies) expect(p.failed_stages['tabletop/push'].failed).toBeGreaterThanOrEqual(0);
      expect(out.points[0].policies[0].failed_stages['tabletop/push'].failed).toBe(1); // random never pushes it home
      const md = await readFile(join(dir, 'handover.md'), 'utf8');
      expect(md).toContain('### K = 5');
      expect(md.match(/failed episodes by the last stage reached at their final state: expert/g)).toHaveLength(2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
