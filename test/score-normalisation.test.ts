/** Score normalisation for hybrid fusion (core/search/score-normalisation.ts). */
import { describe, expect, it } from 'vitest';
import { scaleToUnit, standardScores } from '../core/search/score-normalisation.ts';

describe('standardScores', () => {
  it('is (score − mean) / standard deviation over the allowed records, NaN elsewhere', () => {
    // allowed 0, 1, 3: values 2, 4, 6 → mean 4, population deviation √(8/3)
    const standard = standardScores([2, 4, 100, 6], Uint32Array.from([0, 1, 3]));
    const deviation = Math.sqrt(8 / 3);
    expect(standard[0]).toBeCloseTo(-2 / deviation, 12);
    expect(standard[1]).toBeCloseTo(0, 12);
    expect(standard[3]).toBeCloseTo(2 / deviation, 12);
    expect(standard[2]).toBeNaN();
  });

  it('lets one outlier among many records weigh by its share of the variance, not set the scale as the best does', () => {
    const bulk = Array.from({ length: 10_000 }, (_, i) => i / 9_999); // spread evenly over [0, 1]
    const withOutlier = [...bulk.slice(0, -1), 10]; // the last record is ten times the next best
    const allowed = Uint32Array.from(bulk.keys());
    const gap = (scores: ArrayLike<number>) => scores[9_998]! - scores[9_997]!;
    // dividing by the best: the outlier shrinks every other gap tenfold
    const byBest = (scores: number[]) => {
      const best = Math.max(...scores);
      return scores.map((score) => score / best);
    };
    expect(gap(byBest(withOutlier)) / gap(byBest(bulk))).toBeCloseTo(0.1, 6);
    // standard scores: the same gaps within about 5 %
    const ratio = gap(standardScores(withOutlier, allowed)) / gap(standardScores(bulk, allowed));
    expect(ratio).toBeGreaterThan(0.9);
    expect(ratio).toBeLessThan(1);
  });

  it('gives 0 to every record when all scores are equal', () => {
    expect(Array.from(standardScores([0.3, 0.3, 0.3], Uint32Array.from([0, 1, 2])))).toEqual([0, 0, 0]);
  });
});

describe('scaleToUnit', () => {
  it('maps the allowed scores onto [0, 1]: the best 1, the mean and below 0', () => {
    // allowed 0, 1, 3, 4: mean 4, best 9, so (score − 4) / 5, at least 0
    const scores = Float64Array.from([0, 1, Number.NaN, 9, 6]);
    scaleToUnit(scores, Uint32Array.from([0, 1, 3, 4]));
    expect(scores[3]).toBe(1);
    expect(scores[4]).toBeCloseTo(0.4, 12);
    expect(scores[0]).toBe(0);
    expect(scores[1]).toBe(0);
    expect(scores[2]).toBeNaN();
  });

  it('gives 1 to every record when they are equal', () => {
    expect(Array.from(scaleToUnit(Float64Array.from([0, 0]), Uint32Array.from([0, 1])))).toEqual([1, 1]);
  });
});
