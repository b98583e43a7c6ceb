/** The full-text side of retrieval: an Orama BM25 index over chunks, with whole-word tokens. */
import { create, insertMultiple, load, save, search, type AnyOrama, type RawData } from '@orama/orama';
import { createWholeWordTokenizer } from './tokenizer.ts';
import type { SearchChunk, SearchFilters, SearchRecord } from './types.ts';

const oramaSchema = {
  rid: 'enum',
  title: 'string',
  text: 'string',
  layer: 'enum',
  ring: 'enum',
  evidence: 'enum',
} as const;

export async function createFullTextIndex(): Promise<AnyOrama> {
  return create({ schema: oramaSchema, components: { tokenizer: await createWholeWordTokenizer() } });
}

export async function buildFullTextIndex(records: readonly SearchRecord[], chunks: readonly SearchChunk[]): Promise<RawData> {
  const db = await createFullTextIndex();
  await insertMultiple(
    db,
    chunks.map((chunk, index) => {
      const record = records[chunk.record]!;
      return {
        id: String(index),
        rid: chunk.record,
        title: record.title,
        text: chunk.text,
        layer: record.layer,
        ring: record.ring,
        evidence: record.evidence,
      };
    }),
    1000,
  );
  return save(db);
}

export async function loadFullTextIndex(raw: RawData): Promise<AnyOrama> {
  const db = await createFullTextIndex();
  load(db, raw);
  return db;
}

/** Best BM25 score per record index, filters applied inside the search (before ranking). */
export async function fullTextScores(
  db: AnyOrama,
  query: string,
  filters: SearchFilters,
  excludedRecords: readonly number[],
  limit: number,
): Promise<Map<number, number>> {
  const where: Record<string, unknown> = {};
  if (filters.layers) where.layer = { in: [...filters.layers] };
  if (filters.rings) where.ring = { in: [...filters.rings] };
  if (filters.evidence) where.evidence = { in: [...filters.evidence] };
  if (excludedRecords.length > 0) where.rid = { nin: [...excludedRecords] };
  const result = await search(db, {
    term: query,
    properties: ['title', 'text'],
    boost: { title: 1.5 },
    threshold: 1,
    limit,
    ...(Object.keys(where).length > 0 ? { where } : {}),
  });
  const scores = new Map<number, number>();
  for (const hit of result.hits) {
    const rid = (hit.document as unknown as { rid: number }).rid;
    if (!scores.has(rid) || scores.get(rid)! < hit.score) scores.set(rid, hit.score);
  }
  return scores;
}
