/**
 * Fusion over a scope of records (core/search/fusion.ts): the dense scope gives the standard
 * scores the score-normalisation functions give, and a sparse scope (the records either side
 * ranks, the rest through their totals) gives its members the dense scope's scores and bounds
 * every record left out, on random data with many ties, zeros and records without a cosine.
 */
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../core/random.ts';
import { bestOf, fuseScope, gatherScope, rankByWords, sparseScope, union } from '../core/search/fusion.ts';
import { scaleToUnit, standardScores } from '../core/search/score-normalisation.ts';

const ZSCORE = { fusion: 'zscore' as const, vectorWeight: 0.6 };

/** A corpus's first-ranking inputs: `scored` records with a cosine, BM25 with many zeros and ties. */
function sample(seed: number, records: number, scored: number) {
  const next = seededRandom(seed);
  const truth = Float32Array.from({ length: records }, () => Math.fround(0.2 + 0.5 * next()));
  const similarity = new Float32Array(records).fill(-2);
  const chosen = new Set<number>();
  while (chosen.size < scored) chosen.add(Math.floor(next() * records));
  for (const record of chosen) similarity[record] = truth[record]!;
  // BM25: 60 % of records match no word; the rest on a coarse grid, so ties are common.
  const lexical = Float64Array.from({ length: records }, () => (next() < 0.6 ? 0 : Math.round(next() * 40) / 4));
  let sum = 0;
  let squares = 0;
  for (const value of truth) {
    sum += value;
    squares += value * value;
  }
  const mean = sum / records;
  const population = { mean, deviation: Math.sqrt(squares / records - mean * mean) };
  return { similarity, lexical, population, scored: Uint32Array.from(chosen).sort(), allowed: Uint32Array.from({ length: records }, (_, i) => i) };
}

describe('fusion over a dense scope', () => {
  it('is the standard scores of both sides mixed and scaled to [0, 1], the same numbers', () => {
    const { similarity, lexical, allowed } = sample(3, 500, 500);
    const scope = gatherScope(allowed, similarity, lexical);
    const fused = fuseScope(ZSCORE, scope).scores;
    const v = standardScores(similarity, allowed);
    const l = standardScores(lexical, allowed);
    const expected = Float64Array.from(allowed, (record) => 0.6 * v[record]! + 0.4 * l[record]!);
    scaleToUnit(expected, allowed);
    expect(Array.from(fused)).toEqual(Array.from(expected));
    expect(Math.max(...fused)).toBe(1);
  });
});

describe('rankByWords', () => {
  it('keeps the k best positive scores with ties at the cut, the totals of every allowed record, and the bound below them', () => {
    const { lexical, allowed } = sample(5, 2_000, 100);
    const ranking = rankByWords(allowed, lexical, 150);
    const positives = [...lexical].filter((value) => value > 0).sort((a, b) => b - a);
    const cut = positives[149]!;
    expect(ranking.bound).toBe(cut);
    expect([...ranking.best]).toEqual([...allowed].filter((record) => lexical[record]! >= cut));
    expect(ranking.best.length).toBeGreaterThan(150); // the grid makes ties at the cut
    expect(ranking.sum).toBeCloseTo(
      lexical.reduce((a, b) => a + b, 0),
      9,
    );
    expect(bestOf(ranking, lexical, 10).every((record) => lexical[record]! >= positives[9]!)).toBe(true);
    // Fewer positives than k: all of them, and 0 for the rest.
    const all = rankByWords(allowed, lexical, 10_000);
    expect(all.best.length).toBe(positives.length);
    expect(all.bound).toBe(0);
  });

  it('on many records, where it keeps those above a sampled threshold first, ranks as sorting does, filtered or not, even where the sample misleads', () => {
    const next = seededRandom(41);
    // 20,000: a 100k-passage corpus's records, where the sample is read too (SAMPLED_FROM).
    for (const records of [120_000, 20_000]) checkSizes(next, records);
  });

  function checkSizes(next: () => number, records: number): void {
    const shapes: Record<string, () => Float64Array> = {
      'a grid with ties': () => sample(7, records, 10).lexical,
      'a long tail': () => Float64Array.from({ length: records }, () => (next() < 0.2 ? 0 : -Math.log(next()))),
      // Large only at the records an even sample reads, ordinary elsewhere.
      'misleading sample': () => Float64Array.from({ length: records }, (_, i) => (i % 117 === 0 ? 50 + next() : next() < 0.5 ? 0 : next())),
    };
    const reference = (allowed: Uint32Array, lexical: Float64Array, k: number) => {
      const positives = [...allowed]
        .map((record) => lexical[record]!)
        .filter((value) => value > 0)
        .sort((a, b) => b - a);
      const cut = positives.length <= k ? 0 : positives[k - 1]!;
      return { best: [...allowed].filter((record) => lexical[record]! > 0 && lexical[record]! >= cut), bound: cut };
    };
    for (const [shape, make] of Object.entries(shapes)) {
      const lexical = make();
      const every = Uint32Array.from({ length: records }, (_, i) => i);
      const some = every.filter(() => next() < 0.6);
      for (const allowed of [every, some]) {
        for (const k of [256, 2_000, 5_000]) {
          const ranking = rankByWords(allowed, lexical, k);
          const expected = reference(allowed, lexical, k);
          expect(ranking.bound, `${shape}, ${allowed.length} allowed, k = ${k}`).toBe(expected.bound);
          expect([...ranking.best], `${shape}, ${allowed.length} allowed, k = ${k}`).toEqual(expected.best);
          expect(ranking.sum).toBe([...allowed].reduce((total, record) => total + lexical[record]!, 0));
        }
      }
    }
  }

  it('counts only the allowed records', () => {
    const { lexical } = sample(6, 1_000, 10);
    const allowed = Uint32Array.from({ length: 500 }, (_, i) => i * 2);
    const ranking = rankByWords(allowed, lexical, 20);
    expect([...ranking.best].every((record) => record % 2 === 0)).toBe(true);
  });
});

describe('fusion over a sparse scope', () => {
  for (const seed of [11, 12, 13, 14]) {
    it(`gives its members the dense scope's scores and bounds every record left out (seed ${seed})`, () => {
      const records = 5_000;
      const { similarity, lexical, population, scored, allowed } = sample(seed, records, 300);
      const words = rankByWords(allowed, lexical, 200);
      const sparse = sparseScope(allowed.length, scored, words, similarity, lexical);
      expect(sparse.rest!.count).toBeGreaterThan(records / 2); // really sparse
      const dense = fuseScope(ZSCORE, gatherScope(allowed, similarity, lexical), population).scores;
      const fused = fuseScope(ZSCORE, sparse, population);
      const members = new Set(sparse.members);
      sparse.members.forEach((record, at) => expect(fused.scores[at]).toBeCloseTo(dense[record]!, 12));
      let restBest = -Infinity;
      for (const record of allowed) if (!members.has(record)) restBest = Math.max(restBest, dense[record]!);
      expect(fused.restBound).toBeGreaterThanOrEqual(restBest - 1e-12);
      // Every one of the k best by words outranks every record left out.
      for (const record of words.best) expect(dense[record]!).toBeGreaterThan(restBest);
    });
  }

  it('refuses a sparse scope under another fusion or without the population', () => {
    const { similarity, lexical, population, scored, allowed } = sample(20, 1_000, 50);
    const sparse = sparseScope(allowed.length, scored, rankByWords(allowed, lexical, 20), similarity, lexical);
    expect(() => fuseScope({ ...ZSCORE, fusion: 'max' }, sparse, population)).toThrow(/z-scores/);
    expect(() => fuseScope(ZSCORE, sparse)).toThrow(/approximate path/);
  });
});

describe('the union of two record lists (fusion.ts)', () => {
  it('merges two ascending lists, each record once, and sorts what does not ascend', () => {
    const next = seededRandom(12);
    for (let trial = 0; trial < 50; trial++) {
      const a = Uint32Array.from(new Set(Array.from({ length: Math.floor(next() * 60) }, () => Math.floor(next() * 100)))).sort();
      const b = Uint32Array.from(new Set(Array.from({ length: Math.floor(next() * 60) }, () => Math.floor(next() * 100)))).sort();
      expect([...union(a, b)]).toEqual([...new Set([...a, ...b])].sort((x, y) => x - y));
    }
    expect([...union(new Uint32Array(0), new Uint32Array(0))]).toEqual([]);
    expect([...union(Uint32Array.from([5, 1, 3]), Uint32Array.from([2, 3]))]).toEqual([1, 2, 3, 5]);
  });
});
