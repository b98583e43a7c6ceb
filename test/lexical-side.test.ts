/**
 * What fusion receives from the lexical side (core/search/lexical-side.ts): the exhaustive
 * scores up to the size threshold; above it, the exact score of every record in the pruned
 * top k or among the vector side's best k, and 0 for the others.
 */
import { describe, expect, it } from 'vitest';
import { buildBm25Data, loadBm25Index, type FullTextQueryOptions } from '../core/search/bm25.ts';
import { createLexicalSide } from '../core/search/lexical-side.ts';
import { createSearchIndex, type SearchTuning } from '../core/search/search-index.ts';
import type { SearchRecord } from '../core/search/types.ts';
import { seededRandom } from '../core/random.ts';
import { createHashedEmbedder } from '../devkit/hashed-embedder.ts';

const OPTIONS: FullTextQueryOptions = { text: { k1: 1.5, b: 1 }, title: { k1: 1.2, b: 0.75 }, titleBoost: 0, queryTermWeight: 'count' };

async function corpus() {
  const next = seededRandom(3);
  const words = Array.from({ length: 120 }, (_, i) => `t${i.toString(36)}x`);
  const sentence = (length: number) => Array.from({ length }, () => words[Math.floor(next() ** 2 * words.length)]!).join(' ');
  const records = 200;
  const chunks = Array.from({ length: 500 }, (_, i) => ({ record: i % records, text: sentence(4 + Math.floor(next() * 30)) }));
  const index = await loadBm25Index(await buildBm25Data({ titles: Array.from({ length: records }, () => sentence(3)), chunks }));
  const similarity = Float32Array.from({ length: records }, () => next() * 2 - 1);
  return { index, records, similarity, query: sentence(25) };
}

describe('the lexical side of fusion', () => {
  it('up to the threshold, is the exhaustive scores', async () => {
    const { index, records, similarity, query } = await corpus();
    const side = createLexicalSide({ fullText: index, options: OPTIONS, recordCount: records, topAbove: index.passages, pool: 10 });
    const mask = new Uint8Array(records).fill(1);
    expect(Array.from(side.finish(await side.start(query, mask), query, similarity))).toEqual(Array.from(index.scores(query, OPTIONS, mask)));
  });

  it('above it, is exact on the lexical top k and on the vector side’s best k, 0 elsewhere, filters kept', async () => {
    const { index, records, similarity, query } = await corpus();
    const pool = 15;
    const side = createLexicalSide({ fullText: index, options: OPTIONS, recordCount: records, topAbove: 0, pool });
    const mask = Uint8Array.from({ length: records }, (_, record) => (record % 7 === 0 ? 0 : 1));
    const masked = similarity.map((score, record) => (mask[record] === 1 ? score : -2));
    const lexical = side.finish(await side.start(query, mask), query, masked);
    const exhaustive = index.scores(query, OPTIONS, mask);
    const byLexical = [...exhaustive.keys()].filter((record) => exhaustive[record]! > 0).sort((a, b) => exhaustive[b]! - exhaustive[a]! || a - b);
    const byVector = [...masked.keys()].filter((record) => mask[record] === 1).sort((a, b) => masked[b]! - masked[a]!);
    const scored = new Set([...byLexical.slice(0, pool), ...byVector.slice(0, pool)]);
    let zeroed = 0;
    for (let record = 0; record < records; record++) {
      if (scored.has(record)) expect(lexical[record]).toBe(exhaustive[record]);
      else {
        expect(lexical[record]).toBe(0);
        if (exhaustive[record]! > 0) zeroed++;
      }
    }
    expect(zeroed).toBeGreaterThan(0); // the pool is smaller than the matches: something was left out
    expect(Math.max(...lexical)).toBe(Math.max(...exhaustive)); // the `max` fusion's scale is unchanged
  });
});

describe('search through the pruned lexical side', () => {
  it('ranks as the exhaustive side when the pool holds every record, and keeps the filters', async () => {
    const next = seededRandom(9);
    const words = ['memory', 'model', 'dissent', 'alignment', 'bread', 'river', 'voice', 'canon', 'ring', 'archive', 'drift', 'echo'];
    const sentence = (length: number) => Array.from({ length }, () => words[Math.floor(next() ** 1.5 * words.length)]!).join(' ');
    const records: SearchRecord[] = Array.from({ length: 60 }, (_, i) => ({
      id: `r${String(i).padStart(2, '0')}`,
      kind: 'work',
      title: sentence(3),
      ring: i % 3 === 0 ? 'open' : 'core',
      type: 'essay',
      layer: 'research',
      evidence: 'interpretive',
      contributors: [`voice-${i % 9}`],
      date: '2026-01-01',
      excerpt: '',
      lineage: [],
    }));
    const chunks = records.flatMap((_, record) => [0, 1].map(() => ({ record, text: sentence(6 + Math.floor(next() * 20)) })));
    const embedder = createHashedEmbedder(64);
    const vectors = new Float32Array(chunks.length * 64);
    (await embedder.embed(chunks.map((chunk) => chunk.text))).forEach((vector, i) => vectors.set(vector, i * 64));
    const fullText = await loadBm25Index(await buildBm25Data({ titles: records.map((record) => record.title), chunks }));
    const meta = { embedder: { id: embedder.id, dims: 64 }, records, chunk_records: chunks.map((chunk) => chunk.record), built_at: '' };
    const search = (tuning: Partial<SearchTuning>) => createSearchIndex({ meta, vectors, fullText, embedder, tuning: { floors: false, ...tuning } });
    const exhaustive = search({});
    const pruned = search({ lexicalTopAbove: 0 });
    for (const query of ['memory of the model', 'dissent and alignment in the canon', 'bread river echo drift', 'voice']) {
      for (const filters of [undefined, { rings: ['core' as const] }]) {
        const expected = await exhaustive.search(query, { limit: 20, filters });
        const found = await pruned.search(query, { limit: 20, filters });
        expect(found.map((hit) => [hit.record.id, hit.relevanceScore, hit.lexical])).toEqual(
          expected.map((hit) => [hit.record.id, hit.relevanceScore, hit.lexical]),
        );
        if (filters) expect(found.every((hit) => hit.record.ring === 'core')).toBe(true);
      }
    }
  });
});
