// npm run bench:head [-- --quick] — one JSON object per line: the sampler's cost per control step
// (PolicySampler.act: observation feeds, forward passes, token picking) of the tabletop VLA (roles16 on the
// shipped base's interface) with independent heads against autoregressive heads (--head autoregressive),
// and the autoregressive sampler as it was before the encoders and trunk ran once per step (the whole
// network once per action dimension), at batch 8 and 16 on 1 onnxruntime thread, timed in alternating
// batches so machine load hits all three alike.
import { Rng } from '../src/core/rng.ts';
import type { BatchObs } from '../src/env/types.ts';
import type { ParamStore } from '../src/nn/params.ts';
import { tensor } from '../src/nn/runtime.ts';
import { ForwardSession } from '../src/nn/train.ts';
import { loadPolicy } from '../src/policy/model.ts';
import { type HeadName, PRETRAIN_SIZES, withHead } from '../src/policy/presets.ts';
import { PolicySampler, policyFeeds } from '../src/policy/sampler.ts';
import { WordTokenizer } from '../src/policy/tokenizer.ts';
import { VLA_IO, type VlaConfig, parseVlaConfig, vlaForwardBuilder } from '../src/policy/vla.ts';
import { machine } from './machine.ts';
import { observations, paramsOf } from './vla-inputs.ts';
import { emit, round } from './timing.ts';

const quick = process.argv.includes('--quick');
const MIN_MS = quick ? 1500 : 6000;
const PER_BATCH = 10;
const BATCHES = [8, 16];

function configOf(base: VlaConfig, head: HeadName): VlaConfig {
  const { proprioHidden: _, ...sizes } = withHead(PRETRAIN_SIZES.roles16, head);
  return parseVlaConfig({ ...base, ...sizes });
}

/** The autoregressive sampler before the split: the whole network (encoders, trunk, heads) once per action
 *  dimension, the tokens chosen so far fed each time. Token picking is left out (a few microseconds). */
async function wholeNetworkPerSlot(
  config: VlaConfig,
  params: ParamStore,
): Promise<{ step: (obs: BatchObs, n: number) => Promise<void>; close: () => Promise<void> }> {
  const tokenizer = new WordTokenizer(config.tokenizer);
  const session = await ForwardSession.create(vlaForwardBuilder(config), params, { threads: 1 });
  return {
    step: async (obs, n) => {
      const feeds = policyFeeds(config, tokenizer, obs, n, session.ort);
      for (let t = 0; t < config.actions.length; t++) {
        for (const a of config.actions)
          feeds[VLA_IO.action(a.name)] = tensor('int32', new Int32Array(n), [n], session.ort);
        await session.run(feeds);
      }
    },
    close: () => session.close(),
  };
}

/** ms per call of each of `fns`, timed in alternating batches of PER_BATCH calls; medians over >= 5 rounds
 *  spanning at least MIN_MS. */
async function timeSideBySide(fns: (() => Promise<unknown>)[]): Promise<number[]> {
  const batch = async (fn: () => Promise<unknown>) => {
    const t0 = performance.now();
    for (let i = 0; i < PER_BATCH; i++) await fn();
    return (performance.now() - t0) / PER_BATCH;
  };
  for (const fn of fns) await batch(fn);
  const times: number[][] = fns.map(() => []);
  const until = performance.now() + MIN_MS;
  while (times[0].length < 5 || performance.now() < until)
    for (const [k, fn] of fns.entries()) times[k].push(await batch(fn));
  return times.map((xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]);
}

const M = machine();
emit({ figure: 'machine', model: M.model, cores: M.cores, node: process.version, quick });
const base = (await loadPolicy('models/vla-base.onnx')).config;
const indep = configOf(base, 'independent');
const ar = configOf(base, 'autoregressive');
const indepSampler = await PolicySampler.create(indep, paramsOf(indep), { threads: 1 });
const arParams = paramsOf(ar);
const arSampler = await PolicySampler.create(ar, arParams, { threads: 1 });
const before = await wholeNetworkPerSlot(ar, arParams);
const count = (c: VlaConfig) => paramsOf(c).size;
emit({ figure: 'head_params', size: 'roles16', independent: count(indep), autoregressive: count(ar) });
for (const n of BATCHES) {
  const obs = observations(ar, n);
  const draw = () => Array.from({ length: n }, (_, i) => new Rng([n, i], 2));
  const [ind, split, whole] = await timeSideBySide([
    () => indepSampler.act(obs, n, draw()),
    () => arSampler.act(obs, n, draw()),
    () => before.step(obs, n),
  ]);
  emit({
    figure: 'head_act_ms',
    size: 'roles16',
    batch: n,
    threads: 1,
    slots: ar.actions.length,
    independentMs: round(ind, 2),
    autoregressiveMs: round(split, 2),
    autoregressiveWholeNetPerSlotMs: round(whole, 2),
    autoregressiveOverIndependent: round(split / ind, 3),
    wholeNetPerSlotOverIndependent: round(whole / ind, 2),
  });
}
await before.close();
await indepSampler.close();
await arSampler.close();
