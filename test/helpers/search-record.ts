import { expect } from 'vitest';
import type { SearchRecord } from '../../core/search/types.ts';

/** A work as the search index holds it: an essay in the core ring, with what a test sets over it. */
export function searchRecord(fields: Pick<SearchRecord, 'id' | 'title'> & Partial<SearchRecord>): SearchRecord {
  return {
    kind: 'work',
    ring: 'core',
    type: 'essay',
    layer: 'research',
    evidence: 'interpretive',
    contributors: ['someone'],
    date: '2026-01-01',
    excerpt: '',
    lineage: [],
    ...fields,
  };
}

/**
 * Results over int8 rows (vector-scan.ts) beside float32 rows': the same records but for one at
 * most (a near tie at the cut), near ties possibly swapped, every number of a record both return
 * within `tolerance` (the rows' quantization moves a cosine by a few thousandths at most), every
 * other field equal, and position by position the ranking scores within it too.
 */
export function expectCloseResults<T extends { record: { id: string } }>(found: readonly T[], expected: readonly T[], tolerance = 0.003): void {
  expect(found).toHaveLength(expected.length);
  const byId = new Map(expected.map((hit) => [hit.record.id, hit as Record<string, unknown>]));
  let shared = 0;
  found.forEach((hit, at) => {
    const score = (result: unknown) => {
      const hit = result as { relevanceScore?: number; score?: number };
      return (hit.relevanceScore ?? hit.score)!;
    };
    expect(Math.abs(score(hit) - score(expected[at])), `position ${at}`).toBeLessThanOrEqual(tolerance);
    const reference = byId.get(hit.record.id);
    if (!reference) return;
    shared++;
    for (const [key, value] of Object.entries(hit)) {
      if (typeof value === 'number') expect(Math.abs(value - (reference[key] as number)), `${hit.record.id} ${key}`).toBeLessThanOrEqual(tolerance);
      else expect(value, `${hit.record.id} ${key}`).toEqual(reference[key]);
    }
  });
  expect(shared).toBeGreaterThanOrEqual(expected.length - 1);
}
