/**
 * The Atlas admission rule (core/atlas-admission.ts) on its own: an Atlas record stays
 * when its relevance is at least the ratio of the best work's, whatever the order it came in.
 * The same rule on real data is test/intent-set.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ATLAS_RELEVANCE_RATIO, aboveFloors, admitAtlasByRelevance } from '../core/atlas-admission.ts';
import type { ScoredRecord } from '../core/search/types.ts';

function hit(id: string, kind: 'work' | 'divergence', relevanceScore: number): ScoredRecord {
  return {
    record: {
      id,
      kind,
      title: id,
      ring: 'core',
      type: 'essay',
      layer: kind === 'work' ? 'research' : 'divergence',
      evidence: 'interpretive',
      contributors: [kind === 'work' ? 'A' : 'panel'],
      date: '2026-01-01',
      excerpt: '',
      lineage: [],
    },
    relevanceScore,
    similarity: relevanceScore,
    lexical: 0,
    coverage: 0,
    calibrated: relevanceScore,
    signals: 'semantic',
  };
}

const ids = (hits: readonly ScoredRecord[]) => hits.map((entry) => entry.record.id);

describe('admitAtlasByRelevance', () => {
  it('drops Atlas records far behind the best work and keeps the order of the rest', () => {
    const hits = [hit('w1', 'work', 0.9), hit('d-filler', 'divergence', 0.49), hit('w2', 'work', 0.6), hit('d-close', 'divergence', 0.8)];
    expect(ids(admitAtlasByRelevance(hits, 0.75))).toEqual(['w1', 'w2', 'd-close']);
  });

  it('measures against the best work wherever it is in the list, not against the first hit', () => {
    const hits = [hit('d-top', 'divergence', 0.95), hit('w-low', 'work', 0.3), hit('w-best', 'work', 0.8), hit('d-low', 'divergence', 0.55)];
    expect(ids(admitAtlasByRelevance(hits, 0.75))).toEqual(['d-top', 'w-low', 'w-best']);
  });

  it('keeps every Atlas record when no work was retrieved, or when the test is off (ratio 0)', () => {
    const atlasOnly = [hit('d1', 'divergence', 0.9), hit('d2', 'divergence', 0.1)];
    expect(ids(admitAtlasByRelevance(atlasOnly))).toEqual(['d1', 'd2']);
    const mixed = [hit('w', 'work', 0.9), hit('d', 'divergence', 0.1)];
    expect(ids(admitAtlasByRelevance(mixed, 0))).toEqual(['w', 'd']);
  });

  it('uses the calibrated default ratio', () => {
    const atTheBar = [hit('w', 'work', 0.8), hit('d', 'divergence', 0.8 * ATLAS_RELEVANCE_RATIO)];
    expect(ids(admitAtlasByRelevance(atTheBar))).toEqual(['w', 'd']);
    const below = [hit('w', 'work', 0.8), hit('d', 'divergence', 0.8 * ATLAS_RELEVANCE_RATIO - 0.001)];
    expect(ids(admitAtlasByRelevance(below))).toEqual(['w']);
  });
});

describe('aboveFloors (calibrated relevance, absolute)', () => {
  it('drops every record below the relevance floor, whatever the best one scores', () => {
    const hits = [hit('w1', 'work', 0.3), hit('w2', 'work', 0.2), hit('d', 'divergence', 0.99)];
    expect(ids(aboveFloors(hits, 0.25, undefined))).toEqual(['w1', 'd']);
    expect(ids(aboveFloors(hits, 0.995, undefined))).toEqual([]);
  });

  it('holds Atlas records to their own floor only when it applies, at the floor included', () => {
    const hits = [hit('w', 'work', 0.5), hit('d-high', 'divergence', 0.95), hit('d-low', 'divergence', 0.94)];
    expect(ids(aboveFloors(hits, 0.25, 0.95))).toEqual(['w', 'd-high']);
    expect(ids(aboveFloors(hits, 0.25, undefined))).toEqual(['w', 'd-high', 'd-low']);
  });
});
