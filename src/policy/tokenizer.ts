// Word-level instruction tokenizer: lowercase, split on anything that is not a-z/0-9, PAD = 0,
// UNK = 1, fixed maximum length (truncate / pad). Browser-safe.
import { z } from 'zod';

export const PAD_TOKEN = '<pad>';
export const UNK_TOKEN = '<unk>';
export const PAD_ID = 0;
export const UNK_ID = 1;

export const TokenizerConfigSchema = z
  .object({
    /** vocab[id] = word; vocab[0] = '<pad>', vocab[1] = '<unk>'. */
    vocab: z.array(z.string().min(1)).min(2),
    maxLength: z.number().int().positive(),
  })
  .superRefine((c, ctx) => {
    if (c.vocab[PAD_ID] !== PAD_TOKEN)
      ctx.addIssue({ code: 'custom', path: ['vocab', PAD_ID], message: `must be "${PAD_TOKEN}"` });
    if (c.vocab[UNK_ID] !== UNK_TOKEN)
      ctx.addIssue({ code: 'custom', path: ['vocab', UNK_ID], message: `must be "${UNK_TOKEN}"` });
    const seen = new Set<string>();
    c.vocab.forEach((w, i) => {
      if (seen.has(w)) ctx.addIssue({ code: 'custom', path: ['vocab', i], message: `duplicate word "${w}"` });
      seen.add(w);
    });
  });
export type TokenizerConfig = z.infer<typeof TokenizerConfigSchema>;

export function splitWords(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
}

export class WordTokenizer {
  private readonly ids: Map<string, number>;

  constructor(readonly config: TokenizerConfig) {
    const r = TokenizerConfigSchema.safeParse(config);
    if (!r.success)
      throw new Error(`tokenizer: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    this.ids = new Map(config.vocab.map((w, i) => [w, i]));
  }

  /** Vocabulary from a corpus: words by descending count, ties alphabetical (deterministic). */
  static fromCorpus(
    texts: readonly string[],
    opts: { maxLength: number; minCount?: number; maxVocab?: number },
  ): WordTokenizer {
    const counts = new Map<string, number>();
    for (const t of texts) for (const w of splitWords(t)) counts.set(w, (counts.get(w) ?? 0) + 1);
    const words = [...counts.entries()]
      .filter(([, n]) => n >= (opts.minCount ?? 1))
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([w]) => w)
      .filter((w) => w !== PAD_TOKEN && w !== UNK_TOKEN);
    const limit = opts.maxVocab === undefined ? words.length : Math.max(0, opts.maxVocab - 2);
    return new WordTokenizer({ vocab: [PAD_TOKEN, UNK_TOKEN, ...words.slice(0, limit)], maxLength: opts.maxLength });
  }

  get vocabSize(): number {
    return this.config.vocab.length;
  }

  get maxLength(): number {
    return this.config.maxLength;
  }

  /** Token ids of one text, truncated to maxLength and padded with PAD. */
  encode(text: string): Int32Array {
    const out = new Int32Array(this.config.maxLength);
    splitWords(text)
      .slice(0, this.config.maxLength)
      .forEach((w, i) => {
        out[i] = this.ids.get(w) ?? UNK_ID;
      });
    return out;
  }

  /** Row-major [texts.length, maxLength] ids. */
  encodeBatch(texts: readonly string[]): Int32Array {
    const L = this.config.maxLength;
    const out = new Int32Array(texts.length * L);
    texts.forEach((t, i) => out.set(this.encode(t), i * L));
    return out;
  }

  decode(ids: ArrayLike<number>): string {
    const words: string[] = [];
    for (let i = 0; i < ids.length; i++) {
      if (ids[i] === PAD_ID) continue;
      const w = this.config.vocab[ids[i]];
      if (w === undefined)
        throw new Error(`tokenizer: id ${ids[i]} is outside the vocabulary (size ${this.vocabSize})`);
      words.push(w);
    }
    return words.join(' ');
  }
}
