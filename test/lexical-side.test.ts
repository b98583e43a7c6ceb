/**
 * What fusion receives from the lexical side (core/search/lexical-side.ts): the exhaustive
 * scores up to the size threshold; above it, the exact score of every record in the pruned
 * top k or among the vector side's best k, and 0 for the others.
 */
import { describe, expect, it } from 'vitest';
import { buildBm25Data, loadBm25Index, type FullTextQueryOptions } from '../core/search/bm25.ts';
import { createLexicalSide } from '../core/search/lexical-side.ts';
import { seededRandom } from '../core/random.ts';

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
    expect(Array.from(side.finish(side.start(query, mask), query, similarity))).toEqual(Array.from(index.scores(query, OPTIONS, mask)));
  });

  it('above it, is exact on the lexical top k and on the vector side’s best k, 0 elsewhere, filters kept', async () => {
    const { index, records, similarity, query } = await corpus();
    const pool = 15;
    const side = createLexicalSide({ fullText: index, options: OPTIONS, recordCount: records, topAbove: 0, pool });
    const mask = Uint8Array.from({ length: records }, (_, record) => (record % 7 === 0 ? 0 : 1));
    const masked = similarity.map((score, record) => (mask[record] === 1 ? score : -2));
    const lexical = side.finish(side.start(query, mask), query, masked);
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
