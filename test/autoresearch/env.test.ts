import { describe, expect, it } from 'vitest';
import {
  AutoResearchEnv,
  Executor,
  MAX_TURNS,
  OnlineOutcomeModel,
  STATUSES,
  VOCAB,
  episodeRuns,
  executorSource,
  ladder,
  loadTask,
  modelSource,
  programTokens,
  researchBranching,
  researchRow,
  stateFromRow,
} from '../../src/autoresearch/index.ts';
import { checkEnv } from '../../src/env/index.ts';

const executor = new Executor({ concurrency: 2 });
const task = loadTask('iris-species');
const action = (tokens: Int32Array, n = 1) =>
  Object.fromEntries(Array.from(tokens, (t, k) => [`tok_${k}`, new Int32Array(n).fill(t)]));
const GOOD = programTokens({ model: 'tree', params: { depth: 4 } });
const MALFORMED = Int32Array.from(GOOD, (t, k) => (k === 0 ? VOCAB.indexOf('scale:none') : t)); // no model token

describe('AutoResearchEnv on the real executor', () => {
  it('passes checkEnv', { timeout: 120_000 }, async () => {
    const env = new AutoResearchEnv(task, 2, executorSource(executor));
    const ran = await checkEnv(env, { steps: 3 });
    expect(ran).toEqual(expect.arrayContaining(['spec', 'shapes', 'seed-determinism', 'branching']));
  });

  it('scores turns by the ladder, keeps the best as progress, and ends after MAX_TURNS turns', {
    timeout: 120_000,
  }, async () => {
    const env = new AutoResearchEnv(task, 1, executorSource(executor));
    const { obs } = await env.reset({ seed: 3 });
    expect((obs.instruction as string[])[0]).toContain(task.spec.description.slice(0, 40));
    const valid = await env.step(action(GOOD));
    expect(valid.info.source).toBe('executor');
    const s1 = env.state(0);
    expect(s1.last!.status).toBe('valid');
    expect(valid.reward[0]).toBeCloseTo(ladder('valid', s1.last!.position), 12);
    expect(valid.reward[0]).toBeGreaterThanOrEqual(0.5);
    expect((valid.obs.instruction as string[])[0]).toContain('-> valid');
    const bad = await env.step(action(MALFORMED));
    expect(env.state(0).last!.status).toBe('malformed');
    expect(bad.reward[0]).toBe(0);
    expect(bad.info.progress[0]).toBe(valid.reward[0]); // the trajectory reward is the max over turns
    let r = bad;
    for (let t = 2; t < MAX_TURNS; t++) r = await env.step(action(MALFORMED));
    expect(r.truncated[0] + r.terminated[0]).toBe(1);
  });
});

describe('the outcome model', () => {
  it('is an env on the same contract (world-model source, rewardVar), exact on malformed programs', {
    timeout: 120_000,
  }, async () => {
    const online = new OnlineOutcomeModel([task], 0);
    const env = new AutoResearchEnv(task, 2, modelSource(online.model));
    await checkEnv(env, { steps: 3 });
    await env.reset({ seed: 0 });
    const r = await env.step({ ...action(GOOD, 2), tok_0: Int32Array.of(GOOD[0], MALFORMED[0]) });
    expect(r.info.source).toBe('world-model');
    expect(r.rewardVar).toBeDefined();
    expect(r.reward[1]).toBe(0); // malformed: known without learning
    expect(r.reward[0]).toBeGreaterThan(0.4); // reference runs are all valid
  });

  it('rows carry an episode state exactly, and anchor episodes become executed runs', async () => {
    const env = new AutoResearchEnv(task, 1, executorSource(executor));
    await env.reset({ seed: 1 });
    const rows = [researchRow(env.state(0))];
    await env.step(action(MALFORMED));
    rows.push(researchRow(env.state(0)));
    const back = stateFromRow(task, 1, rows[1]);
    expect(back.turn).toBe(1);
    expect(back.last!.status).toBe('malformed');
    expect(Array.from(back.lastTokens!)).toEqual(Array.from(MALFORMED));
    const runs = episodeRuns(task, { length: 1, states: rows.flat(), actions: MALFORMED });
    expect(runs).toEqual([]); // a malformed program teaches the model nothing
    expect(researchBranching().progress(1, rows[1])).toBe(0);
    expect(STATUSES).toContain('no_result');
  });
});
