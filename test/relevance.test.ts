/**
 * Calibrated relevance (core/search/relevance.ts) and its fit (core/search/relevance-fit.ts) on
 * made-up pairs and questions whose right answers are known; the same on real data is
 * test/intent-set.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { calibratedRelevance, DEFAULT_RELEVANCE_MODEL, relevanceFor, RelevanceModelSchema, signalsOf, withFloors } from '../core/search/relevance.ts';
import { fitFloors, fitLogistic, fitSignals, floorOutcome, quantile, type JudgedCandidates, type JudgedPair } from '../core/search/relevance-fit.ts';
import { seededRandom } from '../core/random.ts';

describe('calibratedRelevance', () => {
  it('is the logistic of the linear score, rising with each signal', () => {
    const model = { ...DEFAULT_RELEVANCE_MODEL, intercept: -2, cosine: 4, coverage: 2 };
    expect(calibratedRelevance(model, 0.5, 0)).toBeCloseTo(0.5, 12);
    expect(calibratedRelevance(model, 0.5, 0.5)).toBeCloseTo(1 / (1 + Math.exp(-1)), 12);
    expect(calibratedRelevance(model, 0.6, 0.1)).toBeGreaterThan(calibratedRelevance(model, 0.5, 0.1));
    expect(calibratedRelevance(model, 0.5, 0.2)).toBeGreaterThan(calibratedRelevance(model, 0.5, 0.1));
  });

  it('names the signals above what judged irrelevant matches reach', () => {
    const model = { ...DEFAULT_RELEVANCE_MODEL, signals: { cosine: 0.4, coverage: 0.2 } };
    expect(signalsOf(model, 0.4, 0.2)).toBe('both');
    expect(signalsOf(model, 0.41, 0.19)).toBe('semantic');
    expect(signalsOf(model, 0.39, 0.3)).toBe('lexical');
    expect(signalsOf(model, 0.1, 0.1)).toBe('neither');
  });

  it('applies its floors only to the embedder it was fitted on; configured floors override', () => {
    expect(relevanceFor(DEFAULT_RELEVANCE_MODEL, DEFAULT_RELEVANCE_MODEL.embedder)).toEqual({ model: DEFAULT_RELEVANCE_MODEL, applies: true });
    const other = relevanceFor(DEFAULT_RELEVANCE_MODEL, 'another-embedder');
    expect(other.applies).toBe(false);
    expect(other.model.floors).toEqual({ relevant: 0, atlas: 0 });
    expect(withFloors(DEFAULT_RELEVANCE_MODEL, { atlas: 0.7 }).floors).toEqual({ relevant: DEFAULT_RELEVANCE_MODEL.floors.relevant, atlas: 0.7 });
  });

  it('the default model is a valid calibration file', () => {
    expect(RelevanceModelSchema.parse(DEFAULT_RELEVANCE_MODEL)).toEqual(DEFAULT_RELEVANCE_MODEL);
    expect(() => RelevanceModelSchema.parse({ ...DEFAULT_RELEVANCE_MODEL, floors: { relevant: 1.5, atlas: 0.5 } })).toThrow();
  });
});

describe('fitLogistic', () => {
  it('recovers the coefficients that generated the labels', () => {
    const random = seededRandom(7);
    const truth = { intercept: -6, cosine: 8, coverage: 10 };
    const pairs: JudgedPair[] = [];
    for (let i = 0; i < 6000; i++) {
      const cosine = random();
      const coverage = random() * 0.5;
      const p = 1 / (1 + Math.exp(-(truth.intercept + truth.cosine * cosine + truth.coverage * coverage)));
      pairs.push({ cosine, coverage, label: random() < p ? 1 : 0 });
    }
    // Both classes are about equally common here, so balancing them barely moves the fit.
    const fitted = fitLogistic(pairs);
    expect(fitted.cosine).toBeGreaterThan(6.5);
    expect(fitted.cosine).toBeLessThan(9.5);
    expect(fitted.coverage).toBeGreaterThan(8);
    expect(fitted.coverage).toBeLessThan(12);
    expect(fitted.intercept).toBeGreaterThan(-7.5);
    expect(fitted.intercept).toBeLessThan(-4.5);
  });

  it('weighs the two classes the same: many more negatives do not move the equal-odds point', () => {
    const pairs: JudgedPair[] = [];
    for (let i = 0; i < 10; i++) pairs.push({ cosine: 0.6 + i * 0.01, coverage: 0.2, label: 1 }, { cosine: 0.45 + i * 0.01, coverage: 0.2, label: 0 });
    const balanced = fitLogistic(pairs);
    const manyNegatives = fitLogistic([...pairs, ...pairs.filter((pair) => pair.label === 0).flatMap((pair) => [pair, pair, pair])]);
    const midpoint = (c: typeof balanced) => -(c.intercept + c.coverage * 0.2) / c.cosine;
    expect(midpoint(balanced)).toBeGreaterThan(0.5);
    expect(midpoint(balanced)).toBeLessThan(0.65);
    expect(midpoint(manyNegatives)).toBeCloseTo(midpoint(balanced), 1);
  });

  it('refuses a set without both kinds of pairs', () => {
    expect(() => fitLogistic([{ cosine: 0.5, coverage: 0.1, label: 1 }])).toThrow(/both kinds/);
  });
});

describe('floors and signals from judged questions', () => {
  const question = (family: JudgedCandidates['family'], expect: string[], candidates: [string, boolean, number][]): JudgedCandidates => ({
    family,
    expect,
    candidates: candidates.map(([id, atlas, relevance]) => ({ id, atlas, relevance })),
  });
  const questions = [
    question(
      'answers',
      ['w1'],
      [
        ['w1', false, 0.8],
        ['d9', true, 0.6],
      ],
    ),
    question('answers', ['w2'], [['w2', false, 0.55]]),
    question(
      'off_corpus',
      [],
      [
        ['w3', false, 0.3],
        ['d8', true, 0.45],
      ],
    ),
    question('off_corpus', [], [['w4', false, 0.2]]),
    question('contested', ['d1'], [['d1', true, 0.9]]),
    question('contested', ['d2'], [['d2', true, 0.7]]),
  ];

  it('counts what each family gets at given floors', () => {
    expect(floorOutcome(questions, 0.5, 0.65)).toEqual({ answersKept: 1, contestedKept: 1, offCorpusEmpty: 1, offCorpusNoAtlas: 1, answersNoAtlas: 1 });
    expect(floorOutcome(questions, 0.5, 0.55).answersNoAtlas).toBe(0.5);
    expect(floorOutcome(questions, 0.6, 0.8)).toMatchObject({ answersKept: 0.5, contestedKept: 0.5 });
  });

  it('puts the relevance floor inside the widest best range, and the Atlas floor at the lowest that keeps Atlas records from questions off the corpus', () => {
    const floors = fitFloors(questions);
    // 0.46..0.55 keeps every answer and empties every question off the corpus: its middle.
    expect(floors.relevant).toBe(0.5);
    // The Atlas floor must exceed d8's 0.45 (already below the relevance floor): the lowest grid value from there.
    expect(floors.atlas).toBe(0.5);
    expect(floorOutcome(questions, floors.relevant, floors.atlas).offCorpusNoAtlas).toBe(1);
  });

  it('sets each signal at the 90th percentile of the irrelevant pairs', () => {
    const pairs: JudgedPair[] = Array.from({ length: 10 }, (_, i) => ({ cosine: i / 10, coverage: i / 100, label: 0 as const }));
    expect(fitSignals([...pairs, { cosine: 0.99, coverage: 0.5, label: 1 }])).toEqual({ cosine: 0.8, coverage: 0.08 });
    expect(quantile([3, 1, 2], 0.5)).toBe(2);
  });
});
