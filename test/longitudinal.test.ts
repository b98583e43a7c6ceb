/** The longitudinal summary of a re-elicitation pair (core/longitudinal.ts), on hand-made vectors. */
import { expect, it } from 'vitest';
import { longitudinalSummary, type PairRecord } from '../core/longitudinal.ts';

const earlier: PairRecord = {
  id: 'X-D1',
  date: '2025-01-01',
  answers: [
    { model: 'A', model_id: 'a-1' },
    { model: 'B', model_id: 'b-1' },
    { model: 'C', model_id: 'c-1' },
    { model: 'Gone', model_id: 'g-1' },
  ],
  tensions: [
    { topic: 'held', voice_a: 'A', voice_b: 'B' },
    { topic: 'melted', voice_a: 'A', voice_b: 'C' },
    { topic: 'missing', voice_a: 'A', voice_b: 'Gone' },
  ],
};
const later: PairRecord = {
  id: 'X-D2',
  date: '2026-01-01',
  answers: [
    { model: 'A', model_id: 'a-2' },
    { model: 'B', model_id: 'b-1' },
    { model: 'C', model_id: 'c-2' },
    { model: 'New', model_id: 'n-1' },
  ],
  tensions: [],
};

it('names who moved, who held, who answered once, and which tensions still hold', () => {
  // A and B keep their directions; C turns from B's side to A's; Gone and New answer once.
  const summary = longitudinalSummary(
    earlier,
    [
      [1, 0],
      [0, 1],
      [0, 1],
      [1, 1],
    ],
    later,
    [
      [1, 0],
      [0, 1],
      [1, 0],
      [1, 0],
    ],
    'test-embedder',
  );
  expect(summary.families.map((family) => [family.model, family.status])).toEqual([
    ['A', 'steady'],
    ['B', 'steady'],
    ['C', 'moved'],
    ['Gone', 'only-earlier'],
    ['New', 'only-later'],
  ]);
  expect(summary.families.find((family) => family.model === 'C')).toMatchObject({ earlier_model_ids: ['c-1'], later_model_ids: ['c-2'], distance: 1 });
  expect(summary.moved).toEqual(['C']);
  expect(summary.tensions.map((tension) => [tension.topic, tension.status, tension.earlier_distance, tension.later_distance])).toEqual([
    ['held', 'still-holds', 1, 1],
    ['melted', 'converged', 1, 0],
    ['missing', 'voice-missing', expect.any(Number), null],
  ]);
  expect(summary.note).toContain('test-embedder');
});
