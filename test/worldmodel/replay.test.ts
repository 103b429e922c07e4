import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ActionCoder,
  OnlineWorldModel,
  saveWmModel,
  stateLayout,
  TransitionSet,
  WorldModelTrainer,
} from '../../src/worldmodel/index.ts';
import { knownDynamicsEpisodes, scene, specOf } from './helpers.ts';

const spec = specOf('tabletop/push');
const coder = new ActionCoder(spec);
const layout = stateLayout(scene.objects);
const F = layout.featureDim;
/** Feature rows as strings, sorted: a set's contents whatever its ring order. */
const rowsOf = (feats: Float32Array) =>
  Array.from({ length: feats.length / F }, (_, i) => feats.subarray(i * F, (i + 1) * F).join(',')).sort();

describe('TransitionSet as a FIFO ring', () => {
  const episodes = knownDynamicsEpisodes(10, 6, 1); // 60 transitions

  it('keeps the newest `capacity` transitions, each stored once, in rows written % capacity', () => {
    const ring = new TransitionSet(layout, coder, 25);
    for (const e of episodes) ring.append([e]);
    const all = TransitionSet.fromEpisodes(layout, coder, episodes);
    expect([ring.count, ring.written, ring.feats.length]).toEqual([25, 60, 25 * F]);
    expect(rowsOf(ring.rows().feats)).toEqual(rowsOf(all.feats.subarray(35 * F, 60 * F)));
    // transition k sits in row k % 25
    expect(ring.feats.subarray(9 * F, 10 * F)).toEqual(all.feats.subarray(59 * F, 60 * F));
    expect(ring.deltas.subarray(10 * layout.stateDim, 11 * layout.stateDim)).toEqual(
      all.deltas.subarray(35 * layout.stateDim, 36 * layout.stateDim),
    );
  });

  it('rows() and restore() round-trip a wrapped ring; resize keeps the newest rows that fit', () => {
    const ring = new TransitionSet(layout, coder, 25);
    ring.append(episodes);
    const copy = new TransitionSet(layout, coder, 25);
    copy.restore(ring.rows());
    expect(copy.rows()).toEqual(ring.rows());
    const all = TransitionSet.fromEpisodes(layout, coder, episodes);
    const newest = all.feats.slice(53 * F, 60 * F);
    all.resize(7);
    expect([all.count, all.written, all.capacity]).toEqual([7, 7, 7]);
    expect(all.rows().feats).toEqual(newest); // oldest first
    ring.resize(7);
    expect(ring.rows().feats).toEqual(newest);
    expect(() => copy.restore({ ...ring.rows(), written: 3 })).toThrow(/do not hold 3 rows/);
  });
});

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('the online world model with a bounded replay', () => {
  it('validation rows are the most recent validation transitions, and the replay exports O(capacity) rows', async () => {
    const trainer = await WorldModelTrainer.create(
      TransitionSet.fromEpisodes(layout, coder, knownDynamicsEpisodes(20, 6, 1)),
      null,
      {
        net: { members: 2, hidden: [16] },
        batch: 16,
        seed: 1,
      },
    );
    const dir = await mkdtemp(join(tmpdir(), 'wmrl-replay-'));
    dirs.push(dir);
    const path = join(dir, 'wm.onnx');
    const meta = { objects: scene.objects.map((o) => o.name), specs: { [spec.id]: spec }, command: 'test' };
    await saveWmModel(path, trainer.config, trainer.params(), meta, 1, 0);
    await trainer.close();

    const online = await OnlineWorldModel.open(path, scene, spec, { val: knownDynamicsEpisodes(5, 6, 9), batch: 16 });
    online.bound(100); // 80 training transitions, 20 validation ones
    const val = knownDynamicsEpisodes(12, 6, 2); // 72 validation transitions
    for (const e of val) online.addEpisodes([e], { validation: true });
    for (let k = 0; k < 5; k++) online.addEpisodes(knownDynamicsEpisodes(10, 6, 10 + k));
    const replay = online.exportReplay();
    expect(replay.info).toEqual({ train: 300, val: 20 + 72 }); // the 30 opened with: their newest 20 kept
    expect(replay.store.get('train/feats').length).toBe(80 * F);
    const recent = TransitionSet.fromEpisodes(layout, coder, val).feats.subarray(52 * F, 72 * F);
    expect(rowsOf(replay.store.get('val/feats') as Float32Array)).toEqual(rowsOf(recent));
    expect(online.transitions).toBe(80);

    // a second model given the export continues with the same replay
    const again = await OnlineWorldModel.open(path, scene, spec, { batch: 16 });
    again.bound(100);
    again.importReplay(replay.store, replay.info);
    expect(again.exportReplay()).toEqual(replay);
    await Promise.all([online.close(), again.close()]);
  });
});
