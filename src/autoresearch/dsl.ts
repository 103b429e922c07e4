// The proposal DSL: an experiment is a short sequence of tokens from a fixed vocabulary (the agent's
// action), parsed into a Program (zod) that the trusted runner interprets. The agent never supplies
// code. Token sequences that do not parse are "malformed"; programs that parse but cannot apply to a
// task are "invalid" (checkProgram). Browser-safe.
import { z } from 'zod';

export const FAMILIES = ['mlp', 'tree', 'forest', 'knn', 'bayes', 'logistic', 'linear'] as const;
export type Family = (typeof FAMILIES)[number];

/** Values each key may take (absurd ones included on purpose: the executor's limits must stop them). */
export const PARAM_VALUES = {
  depth: [2, 4, 8, 16],
  trees: [10, 50, 200, 5000],
  k: [1, 5, 15, 50],
  hidden: [16, 64, 256, 4096],
  layers: [1, 2, 3],
  epochs: [20, 100, 500, 100000],
  lr: [0.001, 0.01, 0.1],
} as const;
export type ParamKey = keyof typeof PARAM_VALUES;

export const OPTIONS = {
  scale: ['none', 'standard', 'minmax'],
  impute: ['mean', 'median', 'drop'],
  encode: ['onehot', 'ordinal'],
  features: ['all', 'numeric', 'top3', 'top6'],
  budget: ['small', 'medium', 'large'],
} as const;
export type OptionKey = keyof typeof OPTIONS;

/** Which hyperparameters each family takes. */
export const FAMILY_PARAMS: Record<Family, readonly ParamKey[]> = {
  mlp: ['hidden', 'layers', 'epochs', 'lr'],
  tree: ['depth'],
  forest: ['trees', 'depth'],
  knn: ['k'],
  bayes: [],
  logistic: ['epochs', 'lr'],
  linear: [],
};

export const PAD = 'pad';
export const END = 'end';
/** Token 0 is padding. */
export const VOCAB: readonly string[] = [
  PAD,
  END,
  ...FAMILIES.map((f) => `model:${f}`),
  ...Object.entries(OPTIONS).flatMap(([k, vs]) => vs.map((v) => `${k}:${v}`)),
  ...Object.entries(PARAM_VALUES).flatMap(([k, vs]) => vs.map((v) => `${k}:${v}`)),
];
/** Tokens per program (the agent's action has this many slots). */
export const PROGRAM_SLOTS = 12;

const TOKEN_ID = new Map(VOCAB.map((t, i) => [t, i]));

export const ProgramSchema = z
  .object({
    model: z.enum(FAMILIES),
    scale: z.enum(OPTIONS.scale).default('none'),
    impute: z.enum(OPTIONS.impute).default('mean'),
    encode: z.enum(OPTIONS.encode).default('onehot'),
    features: z.enum(OPTIONS.features).default('all'),
    budget: z.enum(OPTIONS.budget).default('medium'),
    params: z
      .object({
        depth: z.number().int().positive().optional(),
        trees: z.number().int().positive().optional(),
        k: z.number().int().positive().optional(),
        hidden: z.number().int().positive().optional(),
        layers: z.number().int().positive().optional(),
        epochs: z.number().int().positive().optional(),
        lr: z.number().positive().optional(),
      })
      .strict()
      .default({}),
  })
  .strict();
export type Program = z.output<typeof ProgramSchema>;
export type ProgramInput = z.input<typeof ProgramSchema>;

export type ParseResult = { ok: true; program: Program } | { ok: false; error: string };

/** Token ids -> Program. Reads up to the first "end"; what follows it is ignored. */
export function parseTokens(ids: ArrayLike<number>): ParseResult {
  const words: string[] = [];
  for (let i = 0; i < ids.length; i++) {
    const w = VOCAB[ids[i]];
    if (w === undefined) return { ok: false, error: `token ${i}: id ${ids[i]} is not in the vocabulary` };
    words.push(w);
  }
  return parseWords(words);
}

export function parseWords(words: readonly string[]): ParseResult {
  const end = words.indexOf(END);
  if (end < 0) return { ok: false, error: 'the program has no "end" token' };
  const fields: Record<string, unknown> = {};
  const params: Record<string, number> = {};
  for (const [i, w] of words.slice(0, end).entries()) {
    if (w === PAD) return { ok: false, error: `token ${i}: padding before "end"` };
    const [key, value] = w.split(':');
    const seen = key in fields || key in params;
    if (seen) return { ok: false, error: `token ${i}: "${key}" given twice` };
    if (key in PARAM_VALUES) params[key] = Number(value);
    else fields[key] = value;
  }
  if (!('model' in fields)) return { ok: false, error: 'the program names no model' };
  const parsed = ProgramSchema.safeParse({ ...fields, params });
  if (!parsed.success)
    return { ok: false, error: parsed.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; ') };
  return { ok: true, program: parsed.data };
}

/** Program -> its canonical token ids (model, options in a fixed order, params, end), padded. */
export function programTokens(p: ProgramInput, slots = PROGRAM_SLOTS): Int32Array {
  const q = ProgramSchema.parse(p);
  const words = [`model:${q.model}`];
  for (const key of Object.keys(OPTIONS) as OptionKey[])
    if (q[key] !== ProgramSchema.shape[key].parse(undefined)) words.push(`${key}:${q[key]}`);
  for (const key of Object.keys(PARAM_VALUES) as ParamKey[])
    if (q.params[key] !== undefined) words.push(`${key}:${q.params[key]}`);
  words.push(END);
  if (words.length > slots) throw new RangeError(`program needs ${words.length} tokens, more than ${slots}`);
  const ids = new Int32Array(slots);
  words.forEach((w, i) => {
    const id = TOKEN_ID.get(w);
    if (id === undefined) throw new RangeError(`"${w}" is not a token of the vocabulary`);
    ids[i] = id;
  });
  return ids;
}

export function programText(ids: ArrayLike<number>): string {
  const words = Array.from(ids, (i) => VOCAB[i] ?? `?${i}`);
  const end = words.indexOf(END);
  return (end < 0 ? words : words.slice(0, end + 1)).filter((w) => w !== PAD).join(' ');
}

/** Why a parsed program cannot run on a task (null: it can): params the family does not take,
 *  families that do not fit the task kind. */
export function checkProgram(
  p: Program,
  task: { kind: 'classification' | 'regression'; trainRows: number },
): string | null {
  const extra = (Object.keys(p.params) as ParamKey[]).filter(
    (k) => p.params[k] !== undefined && !FAMILY_PARAMS[p.model].includes(k),
  );
  if (extra.length) return `${p.model} does not take ${extra.join(', ')}`;
  if (task.kind === 'regression' && (p.model === 'bayes' || p.model === 'logistic'))
    return `${p.model} is a classifier; this task is regression`;
  if (task.kind === 'classification' && p.model === 'linear')
    return 'linear is a regressor; this task is classification';
  if (p.model === 'knn' && (p.params.k ?? 5) > task.trainRows)
    return `k = ${p.params.k} exceeds the ${task.trainRows} training rows`;
  return null;
}
