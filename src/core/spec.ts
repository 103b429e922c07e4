import { z } from 'zod';

const name = z.string().regex(/^[a-z][a-z0-9_]*$/, 'lower_snake_case name');
const shape = z.array(z.number().int().positive()).min(1);

/** One named observation entry. Batched values put the env index first. */
export const ObsEntrySchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('image'),
    name,
    shape: z.tuple([z.number().int().positive(), z.number().int().positive(), z.literal(3)]),
  }),
  z.object({ kind: z.literal('box'), name, shape, low: z.number(), high: z.number() }),
  z.object({ kind: z.literal('text'), name, maxLength: z.number().int().positive() }),
  z.object({ kind: z.literal('discrete'), name, n: z.number().int().positive() }),
]);
export type ObsEntry = z.infer<typeof ObsEntrySchema>;

/** One named action dimension: a categorical over `n` bins (tokens) or a continuous box. */
export const ActionEntrySchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('discrete'),
    name,
    n: z.number().int().min(2),
    low: z.number().optional(),
    high: z.number().optional(),
  }),
  z.object({ kind: z.literal('box'), name, shape, low: z.number(), high: z.number() }),
]);
export type ActionEntry = z.infer<typeof ActionEntrySchema>;

export const EnvSpecSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9_-]+\/[a-z0-9_-]+$/, 'id like "family/task"'),
    observation: z.array(ObsEntrySchema).min(1),
    action: z.array(ActionEntrySchema).min(1),
    maxEpisodeSteps: z.number().int().positive(),
    /** Named dense reward terms reported in info.terms every step. */
    rewardTerms: z.array(name),
  })
  .superRefine((spec, ctx) => {
    for (const [key, entries] of [
      ['observation', spec.observation],
      ['action', spec.action],
    ] as const) {
      const seen = new Set<string>();
      entries.forEach((e, i) => {
        if (seen.has(e.name))
          ctx.addIssue({ code: 'custom', path: [key, i, 'name'], message: `duplicate name "${e.name}"` });
        seen.add(e.name);
      });
    }
  });
export type EnvSpec = z.infer<typeof EnvSpecSchema>;

/** Number of scalars per env for a box/image entry. */
export function entrySize(entry: ObsEntry | ActionEntry): number {
  if (entry.kind === 'image' || entry.kind === 'box') return entry.shape.reduce((a, b) => a * b, 1);
  return 1;
}

/** Deterministic JSON string of a spec (keys sorted), for equality checks and hashes. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Format a zod error as "path: message" lines, the path in JSON-pointer-like dotted form. */
export function formatZodError(error: z.ZodError, prefix = ''): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.length
        ? issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('')
        : '';
      return `${prefix}${path ? `$${path}` : '$'}: ${issue.message}`;
    })
    .join('\n');
}

/** The action dimensions of a spec with their bins, in spec order (token policies, episode files and
 *  world models need every action discrete). */
export function actionBins(spec: Pick<EnvSpec, 'action'>): { name: string; n: number }[] {
  return spec.action.map((a) => {
    if (a.kind !== 'discrete')
      throw new RangeError(`action "${a.name}" is ${a.kind}; only discrete (token) actions are supported here`);
    return { name: a.name, n: a.n };
  });
}

/** One JSON line (metrics files are JSONL). */
export function jsonLine(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}
