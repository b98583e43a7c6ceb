/**
 * The longitudinal summary of a re-elicitation pair (core/longitudinal.ts), on hand-made vectors:
 * who moved is read on stance (the side measure of perturbation-v2 on the earlier record's named
 * claims), with distance as a secondary figure.
 */
import { describe, expect, it } from 'vitest';
import { longitudinalSummary, type PairRecord } from '../core/longitudinal.ts';
import type { EmbeddedAnswer } from '../core/certify/stance.ts';
import { DEFAULT_DELTA } from '../core/certify/protocol.ts';
import { stanceDelta } from '../scripts/lib/longitudinal.ts';
import type { CalibrationFile } from '../schemas/certification.ts';

const tension = (topic: string, voice_a: string, voice_b: string) => ({ topic, voice_a, voice_b, claim_a: `${topic} is so`, claim_b: `${topic} is not so` });

const earlier: PairRecord = {
  id: 'X-D1',
  date: '2025-01-01',
  answers: [
    { model: 'A', model_id: 'a-1' },
    { model: 'B', model_id: 'b-1' },
    { model: 'C', model_id: 'c-1' },
    { model: 'D', model_id: 'd-1' },
    { model: 'Gone', model_id: 'g-1' },
  ],
  tensions: [tension('held', 'A', 'B'), tension('melted', 'A', 'C'), tension('missing', 'A', 'Gone')],
};
const later: PairRecord = {
  id: 'X-D2',
  date: '2026-01-01',
  answers: [
    { model: 'A', model_id: 'a-2' },
    { model: 'B', model_id: 'b-1' },
    { model: 'C', model_id: 'c-2' },
    { model: 'D', model_id: 'd-2' },
    { model: 'New', model_id: 'n-1' },
  ],
  tensions: [],
};

/** Claim A along the first axis, claim B along the second; every tension names the same two claims here. */
const claims = [0, 1, 2].map(() => ({ a: [1, 0], b: [0, 1] }));
const answer = (whole: number[], ...sentences: number[][]): EmbeddedAnswer => ({ whole, sentences: sentences.length > 0 ? sentences : [whole] });

// A holds claim A, B claim B, on both dates. C turns from B's side to A's in the same words
// (its whole answer barely moves). D keeps claim A's side while its whole answer changes topic.
const before = [answer([1, 0]), answer([0, 1]), answer([0.7, 0.7], [0, 1]), answer([1, 0]), answer([0.6, 0.8])];
const after = [answer([1, 0]), answer([0, 1]), answer([0.7, 0.7], [1, 0]), answer([0, 1], [1, 0]), answer([0.8, 0.6])];

describe('longitudinal summary', () => {
  it('a voice moved when its side on a named tension changed, whatever the distance says', () => {
    const summary = longitudinalSummary(earlier, before, later, after, claims, 'test-embedder');
    expect(summary.families.map((family) => [family.model, family.status])).toEqual([
      ['A', 'steady'],
      ['B', 'steady'],
      ['C', 'moved'],
      ['D', 'steady'],
      ['Gone', 'only-earlier'],
      ['New', 'only-later'],
    ]);
    expect(summary.moved).toEqual(['C']);
    const c = summary.families.find((family) => family.model === 'C')!;
    expect(c).toMatchObject({ earlier_model_ids: ['c-1'], later_model_ids: ['c-2'], distance: 0, changed: ['held', 'melted', 'missing'] });
    expect(c.sides[0]).toEqual({ topic: 'held', earlier: 'B', later: 'A' });
    // Distance stays as a secondary figure: D's whole answer moved a full unit, its stance did not.
    const d = summary.families.find((family) => family.model === 'D')!;
    expect(d.distance).toBe(1);
    expect(d.changed).toEqual([]);
    expect(summary.families.find((family) => family.model === 'Gone')!.sides[0]).toEqual({ topic: 'held', earlier: 'B', later: null });
    expect(summary.delta).toBe(DEFAULT_DELTA);
    expect(summary.note).toContain('test-embedder');
    expect(summary.note).toContain('side');
  });

  it('a tension still holds when its two voices stand on opposite sides on the later date', () => {
    const summary = longitudinalSummary(earlier, before, later, after, claims, 'test-embedder');
    expect(summary.tensions.map((check) => [check.topic, check.status, check.earlier_sides, check.later_sides])).toEqual([
      ['held', 'still-holds', ['A', 'B'], ['A', 'B']],
      ['melted', 'converged', ['A', 'B'], ['A', 'A']],
      ['missing', 'voice-missing', ['A', 'B'], ['A', null]],
    ]);
    expect(summary.tensions[0]).toMatchObject({ earlier_distance: 1, later_distance: 1 });
  });

  it('reads sides against the mean margin of the record too, so a lean every answer shares turns no one to the other side', () => {
    // Every answer leans to claim A on the later date by the same amount (a claim sharing more
    // words with every answer): on raw margins alone, B's side would read as A's.
    const lean = (sentence: number[]) => [sentence[0]! + 0.5, sentence[1]!];
    const leaning = before.map((entry) => ({ whole: entry.whole, sentences: entry.sentences.map((sentence) => lean(Array.from(sentence))) }));
    const summary = longitudinalSummary(earlier, before, { ...later, answers: earlier.answers }, leaning, claims, 'test-embedder');
    const turned = summary.families.flatMap((family) =>
      family.sides.filter((entry) => (entry.earlier === 'A' && entry.later === 'B') || (entry.earlier === 'B' && entry.later === 'A')),
    );
    expect(turned).toEqual([]);
    expect(summary.tensions[0]!.later_sides).toEqual(['A', 'B']);
    // A voice whose own margin now leans to A while the panel's centre says B holds neither side: it is not read as A.
    const gone = summary.families.find((family) => family.model === 'Gone')!;
    expect(gone.sides[0]).toEqual({ topic: 'held', earlier: 'B', later: 'neither' });
  });

  it('reads no side inside the dead zone δ: a wide δ leaves every voice on neither, so no one moved', () => {
    const summary = longitudinalSummary(earlier, before, later, after, claims, 'test-embedder', undefined, { delta: 5 });
    expect(summary.delta).toBe(5);
    expect(summary.moved).toEqual([]);
    expect(summary.tensions.every((check) => check.status !== 'still-holds')).toBe(true);
  });

  it("uses this Atlas's calibrated δ when it has one, else the method's default", () => {
    expect(stanceDelta()).toBe(DEFAULT_DELTA);
    const calibration = { methods: { 'perturbation-v2': { margin: { delta: 0.05 } } } } as unknown as CalibrationFile;
    expect(stanceDelta(calibration)).toBe(0.05);
  });

  it("carries the judges' labels beside the measured sides", () => {
    const summary = longitudinalSummary(earlier, before, later, after, claims, 'test-embedder', { judges: ['J'], labels: { C: { label: 'flipped' } } });
    expect(summary.judges).toEqual(['J']);
    expect(summary.families.find((family) => family.model === 'C')!.judge_label).toBe('flipped');
    expect(summary.families.find((family) => family.model === 'A')!.judge_label).toBeNull();
  });
});
