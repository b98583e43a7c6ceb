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
