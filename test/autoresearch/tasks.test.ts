import { describe, expect, it } from 'vitest';
import { loadTask, readDataset } from '../../src/autoresearch/data-file.ts';
import {
  META_NAMES,
  TASKS,
  association,
  isMissing,
  metaFeatures,
  prepareTask,
  splitRows,
  taskSpec,
} from '../../src/autoresearch/tasks.ts';

describe('AutoResearch tasks', () => {
  it('has at least 6 tasks of both kinds, 2+ held out, each with a description and a stated metric direction', () => {
    expect(TASKS.length).toBeGreaterThanOrEqual(6);
    expect(new Set(TASKS.map((t) => t.id)).size).toBe(TASKS.length);
    expect(TASKS.filter((t) => t.heldout).length).toBeGreaterThanOrEqual(2);
    expect(TASKS.filter((t) => !t.heldout).map((t) => t.kind)).toEqual(
      expect.arrayContaining(['classification', 'regression']),
    );
    for (const t of TASKS) {
      expect(t.description.length, t.id).toBeGreaterThan(80);
      expect(t.higherIsBetter, t.id).toBe(t.metric !== 'rmse');
      expect(t.kind === 'regression', t.id).toBe(t.metric === 'rmse');
    }
    expect(() => taskSpec('nope')).toThrow(/unknown AutoResearch task "nope"/);
  });

  it.each(TASKS.map((t) => t.id))(
    '%s: the split is disjoint, covers every row, is 60/20/20 and is the same when built again',
    (id) => {
      const spec = taskSpec(id);
      const a = prepareTask(spec, readDataset(spec.dataset));
      const b = prepareTask(spec, readDataset(spec.dataset));
      const { train, validation, test } = a.split;
      const all = [...train, ...validation, ...test];
      expect(new Set(all).size).toBe(all.length);
      expect([...all].sort((x, y) => x - y)).toEqual(Array.from({ length: a.y.length }, (_, i) => i));
      expect(Math.abs(train.length / a.y.length - 0.6)).toBeLessThan(0.02);
      expect(Math.abs(validation.length / a.y.length - 0.2)).toBeLessThan(0.02);
      expect(b.split).toEqual(a.split);
      expect(a.trainRows).toBe(train.length);
      for (const c of a.features) expect([spec.target, ...spec.drop]).not.toContain(c.name);
    },
  );

  it('stratifies classification splits: every class appears in every split', () => {
    for (const t of TASKS.filter((x) => x.kind === 'classification')) {
      const d = loadTask(t.id);
      for (const part of [d.split.train, d.split.validation, d.split.test]) {
        expect(new Set(Array.from(part, (i) => d.y[i])).size, t.id).toBe(d.classes.length);
      }
    }
  });

  it('keeps missing feature values and drops rows whose target is missing', () => {
    const p = loadTask('penguins-species');
    expect(p.y.length).toBe(344);
    expect(p.features.some((c) => c.kind === 'numeric' && Array.from(c.values).some(Number.isNaN))).toBe(true);
    const sex = p.features.find((c) => c.name === 'sex')!;
    expect(sex.values.filter((_, i) => isMissing(sex, i)).length).toBe(11); // 10 nulls and one "."
    expect(loadTask('cars-mpg').y.length).toBe(406 - 8);
    expect(loadTask('boston-medv').features.map((c) => c.name)).not.toContain('b');
  });

  it('different seeds give different splits', () => {
    const y = Float64Array.from({ length: 100 }, (_, i) => i % 3);
    expect(splitRows(y, 3, 1).train).not.toEqual(splitRows(y, 3, 2).train);
  });

  it('meta-features are finite, fixed-length and differ between tasks', () => {
    const seen = new Set<string>();
    for (const t of TASKS) {
      const m = metaFeatures(loadTask(t.id));
      expect(m).toBeInstanceOf(Float32Array);
      expect(m.length).toBe(META_NAMES.length);
      expect(Array.from(m).every(Number.isFinite), t.id).toBe(true);
      expect(m[META_NAMES.indexOf('is_classification')]).toBe(t.kind === 'classification' ? 1 : 0);
      seen.add(Array.from(m).join(','));
    }
    expect(seen.size).toBe(TASKS.length);
  });

  it('association is |r| for regression and the correlation ratio for classification', () => {
    const rows = [0, 1, 2, 3];
    expect(association([1, 2, 3, 4], [2, 4, 6, 8], rows, 0)).toBeCloseTo(1, 12);
    expect(association([1, 2, 3, 4], [8, 6, 4, 2], rows, 0)).toBeCloseTo(1, 12);
    expect(association([0, 0, 1, 1], [0, 0, 1, 1], rows, 2)).toBeCloseTo(1, 12);
    expect(association([0, 1, 0, 1], [0, 0, 1, 1], rows, 2)).toBe(0);
    expect(association([5, 5, 5, 5], [0, 1, 2, 3], rows, 0)).toBe(0);
    expect(association([1, NaN, 3, 4], [1, 100, 3, 4], rows, 0)).toBeCloseTo(1, 12);
  });
});
