/**
 * Tension merge proposals (issue 29 item 4, proposals): tensions between the same two voices
 * whose topics and claims say much the same are proposed for a merge, the more-sighted one
 * surviving; tensions between other voices never are. The imported Omnarai data:
 * tension-merges-omnarai.test.ts.
 */
import { cpSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../core/paths.ts';
import { decideTensionMerge } from '../scripts/lib/curate-tension.ts';
import { loadContent } from '../content-files/load-content.ts';
import { deriveDivergence } from '../core/records.ts';
import { buildApp, tempDir } from '../devkit/app.ts';
import { createContractChecker } from './helpers/contract.ts';
import { contentWords, dice, mergeMap, MERGE_THRESHOLD, proposeTensionMerges } from '../core/tension-merges.ts';
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

describe('merges decided by a curator', () => {
  it('the latest decision on a pair stands; chains resolve to their end; a circle is refused', () => {
    expect(
      mergeMap([
        { from: 'a__b__x', into: 'a__b__y', decision: 'merged' },
        { from: 'a__b__y', into: 'a__b__z', decision: 'merged' },
        { from: 'a__b__w', into: 'a__b__z', decision: 'merged' },
        { from: 'a__b__w', into: 'a__b__z', decision: 'declined' },
      ]),
    ).toEqual(
      new Map([
        ['a__b__x', 'a__b__z'],
        ['a__b__y', 'a__b__z'],
      ]),
    );
    expect(() =>
      mergeMap([
        { from: 'a__b__x', into: 'a__b__y', decision: 'merged' },
        { from: 'a__b__y', into: 'a__b__x', decision: 'merged' },
      ]),
    ).toThrow(/circle/);
  });

  it('a merged key joins the surviving tension: every sighting and disposition under one key, the old key named', () => {
    const entries = [
      entry('Alder', 'Birch', 'moral standing', 'I can be wronged', 'No interests without experience', '2026-01-01'),
      entry('Alder', 'Birch', 'moral status', 'My interests can be set back', 'Without experience no interests', '2026-03-01'),
    ];
    const dispositions = {
      'alder__birch__moral-standing': [{ kind: 'held' as const, by: 'c', at: '2026-02-01T00:00:00.000Z', reason: 'open' }],
      'alder__birch__moral-status': [{ kind: 'canon-note' as const, by: 'c', at: '2026-04-01T00:00:00.000Z', note: 'ruled' }],
    };
    const merged = trackTensions(entries, dispositions, () => [], [], new Map([['alder__birch__moral-status', 'alder__birch__moral-standing']]));
    expect(merged).toHaveLength(1);
    expect(merged[0]).toMatchObject({
      id: 'alder__birch__moral-standing',
      sighting_count: 2,
      merged_keys: ['alder__birch__moral-status'],
      disposition: 'canon-note',
      lifecycle: 'repaired',
    });
    expect(merged[0]!.dispositions.map((disposition) => disposition.kind)).toEqual(['held', 'canon-note']);
    expect(trackTensions(entries, dispositions)).toHaveLength(2);
  });
});

describe('a merge decided as content, through the build and the API', () => {
  it('GET /api/tensions?key=<merged key> answers the surviving tension, with the merged key named; the total drops by one', async () => {
    const content = path.join(tempDir('tension-merge-api'), 'content');
    cpSync(path.join(REPO_ROOT, 'content'), content, { recursive: true });
    const loaded = loadContent(content);
    const tensions = trackTensions(
      loaded.divergences.flatMap((entry) => deriveDivergence(entry.data, entry.body, loaded.registry).tensions),
      {},
    );
    // Two tensions of the same two voices (the demo content has several such pairs).
    const [into, from] = tensions.filter(
      (tension) =>
        tension.voices.join() === tensions.find((other) => tensions.some((t) => t !== other && t.voices.join() === other.voices.join()))!.voices.join(),
    );
    decideTensionMerge(content, from!.id, into!.id, 'merged', 'curator');
    const built = await buildApp(content);
    const contract = await createContractChecker(built.app);
    const byKey = await request(built.app).get(`/api/tensions?key=${from!.id}`);
    contract.check('GET', `/api/tensions?key=${from!.id}`, byKey);
    expect(byKey.status).toBe(200);
    expect(byKey.body.tensions).toHaveLength(1);
    expect(byKey.body.tensions[0]).toMatchObject({ id: into!.id, merged_keys: [from!.id], sighting_count: into!.sighting_count + from!.sighting_count });
    const all = await request(built.app).get('/api/tensions');
    expect(all.body.total).toBe(tensions.length - 1);
    // a circle is refused, and nothing is written
    expect(() => decideTensionMerge(content, into!.id, from!.id, 'merged', 'curator')).toThrow(/circle/);
    expect(loadContent(content).tensionMerges).toHaveLength(1);
  }, 120_000);
});
