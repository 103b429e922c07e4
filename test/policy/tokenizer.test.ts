import { describe, expect, it } from 'vitest';
import { PAD_ID, UNK_ID, WordTokenizer, splitWords } from '../../src/policy/tokenizer.ts';

describe('WordTokenizer', () => {
  const corpus = [
    'Push the red cube to the LEFT zone.',
    'Pick the blue cube; place it on the red cube',
    'put the cube in the bin',
  ];

  it('lowercases and splits on non-alphanumerics', () => {
    expect(splitWords('Push  the RED-cube, to zone_2!')).toEqual(['push', 'the', 'red', 'cube', 'to', 'zone', '2']);
  });

  it('builds a deterministic vocabulary (count desc, then alphabetical) with PAD and UNK first', () => {
    const t = WordTokenizer.fromCorpus(corpus, { maxLength: 6 });
    expect(t.config.vocab.slice(0, 4)).toEqual(['<pad>', '<unk>', 'the', 'cube']);
    expect(WordTokenizer.fromCorpus([...corpus].reverse(), { maxLength: 6 }).config.vocab).toEqual(t.config.vocab);
  });

  it('encodes with UNK for unknown words, pads and truncates to maxLength', () => {
    const t = WordTokenizer.fromCorpus(corpus, { maxLength: 6 });
    const ids = t.encode('push the GOLDEN cube');
    expect(ids.length).toBe(6);
    expect(ids[2]).toBe(UNK_ID);
    expect(Array.from(ids.slice(4))).toEqual([PAD_ID, PAD_ID]);
    expect(t.decode(ids)).toBe('push the <unk> cube');
    expect(t.encode('the the the the the the the the').length).toBe(6);
    expect(t.encodeBatch(['push', 'pick']).length).toBe(12);
  });

  it('rejects bad vocabularies by field', () => {
    expect(() => new WordTokenizer({ vocab: ['<unk>', '<pad>'], maxLength: 3 })).toThrow(/vocab\.0/);
    expect(() => new WordTokenizer({ vocab: ['<pad>', '<unk>', 'a', 'a'], maxLength: 3 })).toThrow(
      /duplicate word "a"/,
    );
  });

  it('caps the vocabulary size', () => {
    expect(WordTokenizer.fromCorpus(corpus, { maxLength: 4, maxVocab: 5 }).vocabSize).toBe(5);
  });
});
