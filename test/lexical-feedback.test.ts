/** Lexical pseudo-relevance feedback (core/search/lexical-feedback.ts): RM3's relevance model and interpolation. */
import { describe, expect, it } from 'vitest';
import { expandQuery, relevanceModel } from '../core/search/lexical-feedback.ts';

const passage = (counts: Record<string, number>) => {
  const terms = new Map(Object.entries(counts));
  return { terms, length: [...terms.values()].reduce((sum, count) => sum + count, 0) };
};

describe('relevanceModel', () => {
  it('averages each term’s share of its passage over the passages, and keeps the likeliest', () => {
    // P(tide) = (2/4 + 0/2) / 2 = 0.25, P(moon) = (1/4 + 1/2) / 2 = 0.375, P(sea) = (1/4 + 1/2) / 2 = 0.375
    const model = relevanceModel([passage({ tide: 2, moon: 1, sea: 1 }), passage({ moon: 1, sea: 1 })], 3);
    expect(model.get('tide')).toBeCloseTo(0.25, 12);
    expect(model.get('moon')).toBeCloseTo(0.375, 12);
    expect(model.get('sea')).toBeCloseTo(0.375, 12);
    // two kept: moon and sea tie ahead of tide, then renormalised to sum to 1
    const two = relevanceModel([passage({ tide: 2, moon: 1, sea: 1 }), passage({ moon: 1, sea: 1 })], 2);
    expect([...two.keys()]).toEqual(['moon', 'sea']);
    expect(two.get('moon')).toBeCloseTo(0.5, 12);
  });

  it('weights passages alike whatever their length, and skips empty ones', () => {
    const model = relevanceModel([passage({ a: 10 }), passage({ b: 1 })], 5);
    expect(model.get('a')).toBeCloseTo(0.5, 12);
    expect(model.get('b')).toBeCloseTo(0.5, 12);
    expect(relevanceModel([{ terms: new Map(), length: 0 }], 5).size).toBe(0);
    expect(relevanceModel([passage({ a: 1 })], 0).size).toBe(0);
  });
});

describe('expandQuery', () => {
  it('mixes the normalised query and model by the weight', () => {
    const expanded = expandQuery(
      new Map([
        ['tide', 3],
        ['moon', 1],
      ]),
      new Map([
        ['moon', 0.5],
        ['sea', 0.5],
      ]),
      0.2,
    );
    expect(expanded.get('tide')).toBeCloseTo(0.8 * 0.75, 12);
    expect(expanded.get('moon')).toBeCloseTo(0.8 * 0.25 + 0.2 * 0.5, 12);
    expect(expanded.get('sea')).toBeCloseTo(0.2 * 0.5, 12);
    expect([...expanded.values()].reduce((sum, value) => sum + value, 0)).toBeCloseTo(1, 12);
  });

  it('gives a long question and a short one the same share of expansion', () => {
    const model = new Map([['sea', 1]]);
    const short = expandQuery(new Map([['tide', 1]]), model, 0.3);
    const long = expandQuery(new Map(Array.from({ length: 50 }, (_, i) => [`word${i}`, 4])), model, 0.3);
    expect(short.get('sea')).toBeCloseTo(0.3, 12);
    expect(long.get('sea')).toBeCloseTo(0.3, 12);
  });
});
