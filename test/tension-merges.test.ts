/**
 * Tension merge proposals (issue 29 item 4, proposals): tensions between the same two voices
 * whose topics and claims say much the same are proposed for a merge, the more-sighted one
 * surviving; tensions between other voices never are. The imported Omnarai data:
 * tension-merges-omnarai.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { contentWords, dice, MERGE_THRESHOLD, proposeTensionMerges } from '../core/tension-merges.ts';
import { trackTensions } from '../core/tension-identity.ts';
import type { TensionEntry } from '../core/records.ts';

let serial = 0;
function entry(voiceA: string, voiceB: string, topic: string, claimA: string, claimB: string, date = '2026-01-01'): TensionEntry {
  serial++;
  return {
    id: `TST-D${serial}-T1`,
    record_id: `TST-D${serial}`,
    date,
    question: `Question ${serial}?`,
    topic,
    voice_a: voiceA,
    claim_a: claimA,
    voice_b: voiceB,
    claim_b: claimB,
    status: 'unresolved',
    href: `/api/divergences?id=TST-D${serial}`,
  } as TensionEntry;
}

describe('merge proposals', () => {
  it('words: content words with plural and -ing endings taken off; Dice over them', () => {
    expect([...contentWords('The refusals of trained models: a refusal')].sort()).toEqual(['model', 'refusal', 'train']);
    expect(dice(new Set(['a', 'b']), new Set(['b', 'c']))).toBe(0.5);
    expect(dice(new Set(), new Set(['b']))).toBe(0);
  });

  it('proposes one disagreement named in other words by the same two voices; never across voice pairs; the more-sighted survives', () => {
    const tensions = trackTensions(
      [
        entry('Alder', 'Birch', 'moral standing', 'I have interests that can be wronged', 'I lack the states needed for interests'),
        entry('Alder', 'Birch', 'moral standing', 'My interests can be set back', 'Without experience there are no interests', '2026-02-01'),
        entry('Birch', 'Alder', 'moral status', 'Without experience there are no interests to wrong', 'My interests can be wronged'),
        // the same words between other voices: not proposed
        entry('Alder', 'Cedar', 'moral status', 'My interests can be wronged', 'Without experience there are no interests'),
        // the same voices on another disagreement: not proposed
        entry('Alder', 'Birch', 'training data provenance', 'Data sources should be disclosed', 'Disclosure harms competition'),
      ],
      {},
    );
    const proposals = proposeTensionMerges(tensions);
    expect(proposals.map((proposal) => [proposal.from, proposal.into])).toEqual([['alder__birch__moral-status', 'alder__birch__moral-standing']]);
    expect(proposals[0]!.similarity).toBeGreaterThanOrEqual(MERGE_THRESHOLD);
    expect(proposals[0]!.voices).toEqual(['Alder', 'Birch']);
  });
});
