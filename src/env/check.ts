import { Rng } from '../core/rng.ts';
import { EnvSpecSchema, entrySize, formatZodError, type EnvSpec } from '../core/spec.ts';
import { Hasher } from '../core/hash.ts';
import {
  canBranch,
  hasFrame,
  hasSnapshot,
  type BatchAction,
  type BatchObs,
  type Branchable,
  type Env,
  type StepResult,
} from './types.ts';

export class CheckEnvError extends Error {
  constructor(
    readonly envId: string,
    readonly failures: string[],
  ) {
    super(`checkEnv(${envId}) failed:\n  - ${failures.join('\n  - ')}`);
  }
}

export interface CheckEnvOptions {
  seed?: number;
  /** Steps per determinism / snapshot probe. */
  steps?: number;
}

/** A uniformly random valid action for every env, from the spec. */
export function randomAction(spec: EnvSpec, numEnvs: number, rng: Rng): BatchAction {
  const action: BatchAction = {};
  for (const entry of spec.action) {
    if (entry.kind === 'discrete') action[entry.name] = Int32Array.from({ length: numEnvs }, () => rng.int(entry.n));
    else
      action[entry.name] = Float32Array.from({ length: numEnvs * entrySize(entry) }, () =>
        rng.range(entry.low, entry.high),
      );
  }
  return action;
}

export function hashObs(spec: EnvSpec, obs: BatchObs): string {
  const h = new Hasher();
  for (const entry of spec.observation) {
    const v = obs[entry.name];
    if (Array.isArray(v)) h.update(v.join('\u0000'));
    else if (v) h.update(v);
  }
  return h.digest();
}

function hashStep(spec: EnvSpec, r: StepResult): string {
  const h = new Hasher().update(hashObs(spec, r.obs)).update(r.reward).update(r.terminated).update(r.truncated);
  h.update(r.info.success).update(r.info.progress);
  if (r.rewardVar) h.update(r.rewardVar);
  return h.digest();
}

/** Check one env against the contract: spec, shapes and dtypes, value ranges, seed determinism,
 *  mask-only resets and steps, and (when offered) snapshot exactness and frames. Throws CheckEnvError listing
 *  every failure; returns the list of checks that ran. */
export async function checkEnv(env: Env, options: CheckEnvOptions = {}): Promise<string[]> {
  const seed = options.seed ?? 12345;
  const steps = options.steps ?? 5;
  const failures: string[] = [];
  const ran: string[] = [];
  const fail = (msg: string) => failures.push(msg);
  const id = env.spec?.id ?? '<no spec>';

  const parsed = EnvSpecSchema.safeParse(env.spec);
  ran.push('spec');
  if (!parsed.success) throw new CheckEnvError(id, [`spec is invalid:\n${formatZodError(parsed.error, 'spec')}`]);
  const spec = env.spec;
  const n = env.numEnvs;
  if (!Number.isInteger(n) || n < 1) throw new CheckEnvError(id, [`numEnvs must be a positive integer, got ${n}`]);

  const checkObs = (where: string, obs: BatchObs) => {
    for (const entry of spec.observation) {
      const v = obs[entry.name];
      const at = `${where}: obs.${entry.name}`;
      if (v === undefined) {
        fail(`${at} is missing`);
        continue;
      }
      if (entry.kind === 'text') {
        if (!Array.isArray(v) || v.length !== n) fail(`${at} must be string[${n}]`);
        else
          v.forEach((s, i) => {
            if (typeof s !== 'string' || s.length > entry.maxLength)
              fail(`${at}[${i}] must be a string of at most ${entry.maxLength} chars`);
          });
        continue;
      }
      const size = n * entrySize(entry);
      const ctor = entry.kind === 'image' ? Uint8Array : entry.kind === 'box' ? Float32Array : Int32Array;
      if (!(v instanceof ctor)) {
        fail(`${at} must be ${ctor.name}, got ${v?.constructor?.name}`);
        continue;
      }
      if (v.length !== size) {
        fail(`${at} has length ${v.length}, expected ${size}`);
        continue;
      }
      for (let k = 0; k < v.length; k++) {
        const x = v[k];
        if (entry.kind === 'box' && !(Number.isFinite(x) && x >= entry.low && x <= entry.high)) {
          fail(`${at}[${k}] = ${x} is outside [${entry.low}, ${entry.high}]`);
          break;
        }
        if (entry.kind === 'discrete' && !(Number.isInteger(x) && x >= 0 && x < entry.n)) {
          fail(`${at}[${k}] = ${x} is outside [0, ${entry.n})`);
          break;
        }
      }
    }
    for (const key of Object.keys(obs))
      if (!spec.observation.some((e) => e.name === key)) fail(`${where}: obs.${key} is not in the spec`);
  };

  const checkStep = (where: string, r: StepResult) => {
    checkObs(where, r.obs);
    const f64 = (name: string, v: unknown, finite = true) => {
      if (!(v instanceof Float64Array) || v.length !== n) fail(`${where}: ${name} must be Float64Array[${n}]`);
      else if (finite && v.some((x) => !Number.isFinite(x))) fail(`${where}: ${name} has non-finite values`);
    };
    const u8 = (name: string, v: unknown) => {
      if (!(v instanceof Uint8Array) || v.length !== n) fail(`${where}: ${name} must be Uint8Array[${n}]`);
      else if (v.some((x) => x > 1)) fail(`${where}: ${name} must hold 0/1`);
    };
    f64('reward', r.reward);
    if (r.rewardVar !== undefined) {
      f64('rewardVar', r.rewardVar);
      if (r.rewardVar instanceof Float64Array && r.rewardVar.some((x) => x < 0))
        fail(`${where}: rewardVar must be >= 0`);
    }
    u8('terminated', r.terminated);
    u8('truncated', r.truncated);
    if (!['physics', 'world-model', 'executor', 'toy'].includes(r.info?.source))
      fail(`${where}: info.source = ${r.info?.source} is not a known source`);
    u8('info.success', r.info?.success);
    f64('info.progress', r.info?.progress);
    if (r.info?.progress instanceof Float64Array && r.info.progress.some((x) => x < 0 || x > 1))
      fail(`${where}: info.progress must lie in [0, 1]`);
    const terms = Object.keys(r.info?.terms ?? {}).sort();
    const want = [...spec.rewardTerms].sort();
    if (terms.join(',') !== want.join(',')) fail(`${where}: info.terms has [${terms}], spec.rewardTerms is [${want}]`);
    for (const t of want) if (r.info?.terms?.[t]) f64(`info.terms.${t}`, r.info.terms[t]);
  };

  // Shapes and seed determinism: two runs from the same seed with the same actions.
  const rollout = async (): Promise<string> => {
    const { obs, info } = await env.reset({ seed });
    checkObs('reset', obs);
    if (!(info.seeds instanceof Int32Array) || info.seeds.length !== n)
      fail(`reset: info.seeds must be Int32Array[${n}]`);
    const h = new Hasher().update(hashObs(spec, obs));
    const rng = new Rng(seed, 1);
    for (let t = 0; t < steps; t++) {
      const r = await env.step(randomAction(spec, n, rng));
      checkStep(`step ${t}`, r);
      h.update(hashStep(spec, r));
    }
    return h.digest();
  };
  const first = await rollout();
  ran.push('shapes', 'ranges');
  const second = await rollout();
  ran.push('seed-determinism');
  if (first !== second) fail(`same seed and actions gave different results (${first} vs ${second})`);

  // Mask-only reset: envs outside the mask keep their observation.
  if (n > 1) {
    await env.reset({ seed });
    const r = await env.step(randomAction(spec, n, new Rng(seed, 2)));
    const mask = Array.from({ length: n }, (_, i) => i === 0);
    const after = await env.reset({ seed: seed + 1000, mask });
    if (after.info.seeds[0] !== seed + 1000)
      fail(`masked reset: env 0 has seed ${after.info.seeds[0]}, expected ${seed + 1000}`);
    for (let i = 1; i < n; i++) {
      if (after.info.seeds[i] !== seed + i) fail(`masked reset changed the seed of env ${i}`);
      if (rowHash(spec, r.obs, i, n) !== rowHash(spec, after.obs, i, n))
        fail(`masked reset changed the observation of env ${i}`);
    }
    ran.push('mask-reset');
  }

  // Mask-only step: envs outside the mask keep their observation and get reward 0; stepped later with
  // the same action, they give what an unmasked step gave.
  if (n > 1) {
    const action = randomAction(spec, n, new Rng(seed, 8));
    const start = await env.reset({ seed });
    const full = await env.step(action);
    await env.reset({ seed });
    const first = Array.from({ length: n }, (_, i) => i === 0);
    const one = await env.step(action, { mask: first });
    const rest = await env.step(action, { mask: first.map((x) => !x) });
    if (stepRowHash(spec, one, 0, n) !== stepRowHash(spec, full, 0, n))
      fail('masked step: env 0 (in the mask) differs from its unmasked step');
    for (let i = 1; i < n; i++) {
      if (rowHash(spec, one.obs, i, n) !== rowHash(spec, start.obs, i, n) || one.reward[i] !== 0) {
        fail(`masked step changed env ${i} (outside the mask)`);
        break;
      }
      if (stepRowHash(spec, rest, i, n) !== stepRowHash(spec, full, i, n)) {
        fail(`masked step: env ${i}, stepped after an idle step, differs from its unmasked step`);
        break;
      }
    }
    ran.push('mask-step');
  }

  if (hasSnapshot(env)) {
    await env.reset({ seed });
    await env.step(randomAction(spec, n, new Rng(seed, 3)));
    const snap = env.snapshot();
    const play = async () => {
      const rng = new Rng(seed, 4);
      const h = new Hasher();
      for (let t = 0; t < steps; t++) h.update(hashStep(spec, await env.step(randomAction(spec, n, rng))));
      return h.digest();
    };
    const a = await play();
    env.restore(snap);
    const b = await play();
    if (a !== b) fail('restore(snapshot()) did not reproduce the same steps');
    ran.push('snapshot');
  }

  if (canBranch(env)) await checkBranching(env, spec, seed, fail);
  if (canBranch(env)) ran.push('branching');

  if (hasFrame(env)) {
    const poses = env.frame(0);
    if (!Array.isArray(poses)) fail('frame() must return an array of body poses');
    else
      for (const p of poses) {
        if (
          typeof p.name !== 'string' ||
          p.pos?.length !== 3 ||
          p.quat?.length !== 4 ||
          [...p.pos, ...p.quat].some((x) => !Number.isFinite(x))
        ) {
          fail(`frame(): bad pose ${JSON.stringify(p)}`);
          break;
        }
      }
    ran.push('frame');
  }

  if (failures.length) throw new CheckEnvError(id, failures);
  return ran;
}

/** Branching: every live env captured (exactly where the engine can) a few steps in, the envs moved on
 *  to other episodes, then resetFrom(captures): the next step with the same action matches the step the
 *  captured envs took, byte for byte, per env. */
async function checkBranching(
  env: Env & Branchable,
  spec: EnvSpec,
  seed: number,
  fail: (msg: string) => void,
): Promise<void> {
  const n = env.numEnvs;
  await env.reset({ seed });
  let live = Array.from({ length: n }, (_, i) => i);
  for (let t = 0; t < 2; t++) {
    const r = await env.step(randomAction(spec, n, new Rng(seed, 5 + t)));
    live = live.filter((i) => !r.terminated[i] && !r.truncated[i]);
  }
  if (!live.length) return;
  const starts = live.map((i) => env.capture(i, { exact: true }));
  const action = randomAction(spec, n, new Rng(seed, 7));
  const first = await env.step(action);
  await env.reset({ seed: seed + 500 });
  const out = await env.resetFrom(live, starts);
  live.forEach((i, j) => {
    if (out.info.seeds[i] !== starts[j].seed)
      fail(`resetFrom: env ${i} reports seed ${out.info.seeds[i]}, its start has ${starts[j].seed}`);
  });
  const again = await env.step(action);
  for (const i of live) {
    if (stepRowHash(spec, first, i, n) !== stepRowHash(spec, again, i, n)) {
      fail(`resetFrom(capture()): env ${i}'s next step differs from the step the captured env took`);
      break;
    }
  }
}

function stepRowHash(spec: EnvSpec, r: StepResult, i: number, n: number): string {
  const h = new Hasher().update(rowHash(spec, r.obs, i, n));
  h.update(Float64Array.of(r.reward[i], r.info.progress[i], r.rewardVar?.[i] ?? -1)).update(
    Uint8Array.of(r.terminated[i], r.truncated[i], r.info.success[i]),
  );
  return h.digest();
}

/** Hash of env i's slice of every observation entry. */
function rowHash(spec: EnvSpec, obs: BatchObs, i: number, n: number): string {
  const h = new Hasher();
  for (const entry of spec.observation) {
    const v = obs[entry.name];
    if (Array.isArray(v)) h.update(v[i] ?? '');
    else if (v) {
      const size = v.length / n;
      h.update(v.subarray(i * size, (i + 1) * size));
    }
  }
  return h.digest();
}
