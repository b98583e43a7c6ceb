import { describe, expect, it } from 'vitest';
import { probeQuestions, sentences } from '../core/search/probe-questions.ts';
import {
  choiceStillHolds,
  chooseRetrieval,
  DEPARTURE_Z,
  QUESTION_GATE_PERCENTILE,
  engineDefaultChoice,
  PROBE_VERSION,
  REPROBE_GROWTH,
  PROBE_MIN_QUESTIONS,
  probeCandidates,
  RetrievalChoiceSchema,
  tuningOf,
  type ProbeOutcome,
} from '../core/search/retrieval-choice.ts';
import { DEFAULT_TUNING } from '../core/search/search-index.ts';
import type { SearchChunk, SearchRecord } from '../core/search/types.ts';
import { bootstrapDifference, bootstrapMean } from '../scripts/lib/bootstrap.ts';

function record(id: string, kind: SearchRecord['kind'] = 'work'): SearchRecord {
  return {
    id,
    kind,
    title: `Title ${id}`,
    ring: 'curated',
    type: 'essay',
    layer: 'research',
    evidence: 'uncharacterized',
    contributors: ['someone'],
    date: '2026-01-01',
    excerpt: '',
    lineage: [],
  };
}

const BODY =
  'Title. Tides rise twice a day as the moon pulls the sea toward it. The pull is strongest when sun and moon line up. ' +
  'Sailors have long timed their departures by the ebb and the flood. Harbours silt up where the current slows.';

describe('sentences', () => {
  it('splits after a full stop, question or exclamation mark followed by a capital, digit or quote', () => {
    const parts = sentences('One is here. Two? "Three" follows! 4 ends it. e.g. not a split');
    expect(parts.map((part) => part.text)).toEqual(['One is here.', 'Two?', '"Three" follows!', '4 ends it. e.g. not a split']);
    const text = 'Alpha beta.  Gamma delta.';
    for (const part of sentences(text)) expect(text.slice(part.start, part.start + part.text.length)).toBe(part.text);
  });
});

describe('probe questions', () => {
  const records = Array.from({ length: 40 }, (_, at) => record(`W-${at}`));
  const chunks: SearchChunk[] = records.map((_, at) => ({ record: at, text: BODY }));

  it('hold back one sentence, never the first, and the answer keeps the rest', () => {
    const questions = probeQuestions(records, chunks, { count: 10 });
    expect(questions).toHaveLength(10);
    for (const question of questions) {
      expect(question.question.startsWith('Title.')).toBe(false);
      expect(BODY).toContain(question.question);
      expect(question.rest).not.toContain(question.question);
      expect(question.rest.startsWith('Title.')).toBe(true);
      // the rest is the passage less the question, word for word
      expect(question.rest.split(' ').length + question.question.split(' ').length).toBe(BODY.split(' ').length);
      expect(question.chunk).toBe(question.record);
    }
  });

  it('draw the same sample on every run and another with another seed', () => {
    const a = probeQuestions(records, chunks, { count: 10 });
    expect(probeQuestions(records, chunks, { count: 10 })).toEqual(a);
    const b = probeQuestions(records, chunks, { count: 10, seed: 7 });
    expect(b.map((question) => question.record)).not.toEqual(a.map((question) => question.record));
  });

  it('skip Atlas records, passages too short to split and sentences outside the word bounds', () => {
    const mixed = [record('D-1', 'divergence'), record('W-short'), record('W-ok')];
    const questions = probeQuestions(
      mixed,
      [
        { record: 0, text: BODY },
        { record: 1, text: 'Title. Only one sentence here.' },
        { record: 2, text: BODY },
      ],
      { count: 10 },
    );
    expect(questions.map((question) => mixed[question.record]!.id)).toEqual(['W-ok']);
    expect(probeQuestions(records, chunks, { count: 10, minWords: 40 })).toEqual([]);
  });
});

const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

function outcomes(table: [number, boolean, number][]): ProbeOutcome[] {
  return table.map(([vectorWeight, feedback, ndcg10]) => ({ vectorWeight, feedback, ndcg10, mrr10: ndcg10 - 0.05, hits10: Math.min(1, ndcg10 + 0.1) }));
}

const probe = { key: 'k', questions: 300, passages: 5000, corpusPassages: 5000, embedder: 'test-embedder' };

describe('chooseRetrieval', () => {
  it('takes feedback where it helps on average over the weights, then the best weight with it', () => {
    // One lucky weight without feedback does not decide: feedback wins on average.
    const choice = chooseRetrieval(
      outcomes([
        [0, true, 0.4],
        [0, false, 0.3],
        [0.2, true, 0.45],
        [0.2, false, 0.35],
        [0.4, true, 0.5],
        [0.4, false, 0.52],
        [0.6, true, 0.48],
        [0.6, false, 0.4],
        [0.8, true, 0.42],
        [0.8, false, 0.3],
        [1, false, 0.2],
      ]),
      probe,
      DEFAULT_TUNING,
    );
    expect(choice).toMatchObject({ source: 'probe', vector_weight: 0.4, feedback: true });
    expect(RetrievalChoiceSchema.parse(choice)).toEqual(choice);
    expect(choice.probe!.candidates).toHaveLength(11);
    expect(choice.note).toContain('vectors weighted 0.4, feedback on');
    expect(choice.note).toContain('alone, words find 40 % of them and vectors 30 %');
    expect(choice.probe!.candidates[0]).toEqual({ vector_weight: 0, feedback: true, ndcg10: 0.4, mrr10: 0.35, hits10: 0.5 });
  });

  it('weights the vectors little where they find little, and turns feedback off where it hurts', () => {
    const choice = chooseRetrieval(
      outcomes([
        [0, true, 0.7],
        [0, false, 0.75],
        [0.2, true, 0.7],
        [0.2, false, 0.76],
        [0.4, true, 0.69],
        [0.4, false, 0.74],
        [0.6, true, 0.6],
        [0.6, false, 0.7],
        [0.8, true, 0.5],
        [0.8, false, 0.6],
        [1, false, 0.2],
      ]),
      probe,
      DEFAULT_TUNING,
    );
    expect(choice).toMatchObject({ vector_weight: 0.2, feedback: false });
    expect(tuningOf(choice)).toEqual({ vectorWeight: 0.2, feedbackDocs: 0 });
  });

  it('breaks a tie toward the lower weight and never chooses the vectors alone', () => {
    const choice = chooseRetrieval(
      outcomes([
        [0.2, false, 0.5],
        [0.4, false, 0.5],
        [1, false, 0.9],
      ]),
      probe,
      DEFAULT_TUNING,
    );
    expect(choice).toMatchObject({ vector_weight: 0.2, feedback: false });
  });

  it("keeps the engine's default, and says why, when the corpus gives too few questions", () => {
    const choice = chooseRetrieval([], { ...probe, questions: PROBE_MIN_QUESTIONS - 1 }, DEFAULT_TUNING);
    expect(choice).toMatchObject({ source: 'default', vector_weight: DEFAULT_TUNING.vectorWeight, feedback: true });
    expect(choice.note).toContain(`gave ${PROBE_MIN_QUESTIONS - 1} questions`);
    expect(choice.probe).toMatchObject({ questions: PROBE_MIN_QUESTIONS - 1, candidates: [] });
    expect(tuningOf(choice)).toEqual({ vectorWeight: DEFAULT_TUNING.vectorWeight });
    expect(RetrievalChoiceSchema.parse(engineDefaultChoice('e', 'no build', DEFAULT_TUNING)).probe).toBeNull();
  });

  it("departs from the engine's default only when the probe's questions say so beyond their noise", () => {
    const engine = Array.from({ length: 200 }, (_, at) => (at % 4) / 4);
    const noisy = engine.map((value, at) => (at % 2 === 0 ? value + 0.25 : value - 0.2));
    const clear = engine.map((value) => value + 0.05);
    const table = (better: number[]): ProbeOutcome[] => [
      { vectorWeight: 0.6, feedback: true, ndcg10: mean(engine), perQuestion: engine, mrr10: 0.3, hits10: 0.5 },
      { vectorWeight: 0.6, feedback: false, ndcg10: mean(engine) - 0.01, perQuestion: engine, mrr10: 0.3, hits10: 0.5 },
      { vectorWeight: 0.4, feedback: true, ndcg10: mean(better), perQuestion: better, mrr10: 0.3, hits10: 0.6 },
      { vectorWeight: 0.4, feedback: false, ndcg10: mean(engine) - 0.01, perQuestion: engine, mrr10: 0.3, hits10: 0.5 },
    ];
    const kept = chooseRetrieval(table(noisy), probe, DEFAULT_TUNING);
    expect(kept).toMatchObject({ source: 'probe', vector_weight: 0.6, feedback: true });
    expect(kept.probe!.departure!.over_default).toBeCloseTo(0.025, 6);
    expect(kept.probe!.departure!.z).toBeLessThan(DEPARTURE_Z);
    expect(kept.note).toMatch(/the engine's default.*best other setting \(vectors 0.4, feedback on\) beat it by 0.025 nDCG@10/);
    const departed = chooseRetrieval(table(clear), probe, DEFAULT_TUNING);
    expect(departed).toMatchObject({ vector_weight: 0.4, feedback: true });
    expect(departed.probe!.departure!.z).toBeGreaterThanOrEqual(DEPARTURE_Z);
    expect(RetrievalChoiceSchema.parse(departed)).toEqual(departed);
  });

  it("sets the question gate at the relevance 98 % of the chosen setting's best hits reach, and none without them", () => {
    const top = Array.from({ length: 200 }, (_, at) => at / 200); // 0, 0.005, …, 0.995
    const choice = chooseRetrieval(
      [
        { vectorWeight: 0.4, feedback: false, ndcg10: 0.6, mrr10: 0.5, hits10: 0.7, topRelevance: top },
        { vectorWeight: 0.6, feedback: false, ndcg10: 0.5, mrr10: 0.4, hits10: 0.6, topRelevance: top.map(() => 0.99) },
      ],
      probe,
      DEFAULT_TUNING,
    );
    expect(choice.vector_weight).toBe(0.4);
    // The 4th of 200 values, 0.015: at most 2 % of the questions' best hits fall below it.
    expect(choice.question_gate).toBe(0.015);
    expect(top.filter((value) => value < choice.question_gate!).length / top.length).toBeLessThanOrEqual(QUESTION_GATE_PERCENTILE);
    // Rounded down, never past a question at the percentile.
    const uneven = chooseRetrieval(
      [{ vectorWeight: 0.4, feedback: false, ndcg10: 0.6, mrr10: 0.5, hits10: 0.7, topRelevance: top.map((value) => value + 0.00009) }],
      probe,
      DEFAULT_TUNING,
    );
    expect(uneven.question_gate).toBe(0.015);
    expect(chooseRetrieval(outcomes([[0.4, false, 0.5]]), probe, DEFAULT_TUNING).question_gate).toBeNull();
    expect(chooseRetrieval([], { ...probe, questions: 3 }, DEFAULT_TUNING).question_gate).toBeNull();
  });

  it('holds for a later build with the same embedder and probe while the corpus stays about its size', () => {
    const choice = chooseRetrieval(outcomes([[0.4, false, 0.5]]), probe, DEFAULT_TUNING);
    expect(choiceStillHolds(choice, 'k', 5000)).toBe(true);
    expect(choiceStillHolds(choice, 'k', 5000 * REPROBE_GROWTH)).toBe(true);
    expect(choiceStillHolds(choice, 'k', 5000 * REPROBE_GROWTH + 1)).toBe(false);
    expect(choiceStillHolds(choice, 'k', Math.floor(5000 / REPROBE_GROWTH) - 1)).toBe(false);
    expect(choiceStillHolds(choice, 'another key', 5000)).toBe(false);
    expect(choiceStillHolds({ ...choice, probe: { ...choice.probe!, version: PROBE_VERSION + 1 } }, 'k', 5000)).toBe(false);
    expect(choiceStillHolds(undefined, 'k', 5000)).toBe(false);
    expect(choiceStillHolds(engineDefaultChoice('e', 'none', DEFAULT_TUNING), 'k', 5000)).toBe(false);
  });

  it('tries every weight with feedback on and off, and the vectors alone', () => {
    const candidates = probeCandidates();
    expect(candidates).toHaveLength(11);
    expect(candidates.filter((candidate) => !candidate.feedback).every((candidate) => candidate.tuning.feedbackDocs === 0)).toBe(true);
    expect(candidates.filter((candidate) => candidate.feedback).every((candidate) => candidate.tuning.feedbackDocs === undefined)).toBe(true);
  });
});

describe('bootstrap intervals', () => {
  it('bracket the mean, narrow with more queries, and are the same on every run', () => {
    const values = Array.from({ length: 400 }, (_, at) => (at % 3 === 0 ? 1 : at % 3 === 1 ? 0.5 : 0));
    const interval = bootstrapMean(values);
    expect(interval.mean).toBeCloseTo(0.5, 2);
    expect(interval.low).toBeLessThan(interval.mean);
    expect(interval.high).toBeGreaterThan(interval.mean);
    expect(bootstrapMean(values)).toEqual(interval);
    const few = bootstrapMean(values.slice(0, 40));
    expect(few.high - few.low).toBeGreaterThan(interval.high - interval.low);
    expect(bootstrapMean([])).toEqual({ mean: 0, low: 0, high: 0 });
  });

  it('pair differences per query: a constant gain has no spread', () => {
    const base = Array.from({ length: 100 }, (_, at) => (at % 7) / 7);
    const better = base.map((value) => value + 0.01);
    const difference = bootstrapDifference(better, base);
    expect(difference.mean).toBeCloseTo(0.01, 10);
    expect(difference.low).toBeCloseTo(0.01, 10);
    expect(difference.high).toBeCloseTo(0.01, 10);
    expect(() => bootstrapDifference([1], [1, 2])).toThrow(/differ in length/);
  });
});
