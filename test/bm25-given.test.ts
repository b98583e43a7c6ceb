/**
 * BM25 of given records (core/search/bm25-given.ts, the feedback's pool) against the exhaustive
 * `scores()`: the scores of given records must be the exhaustive scores of those records, to
 * the bit, under every option set and filter; over a seeded random corpus and over 300 real
 * ArguAna documents with its real arguments as queries.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildBm25Data, loadBm25Index, type FullTextIndex, type FullTextQueryOptions } from '../core/search/bm25.ts';
import { seek } from '../core/search/postings.ts';
import { seededRandom } from '../core/random.ts';
import { parseCorpus, parseQrels, parseQueries, readMaybeGzip, selectSubset } from '../scripts/lib/beir.ts';
import { haveFixtures, sharedPath } from './helpers/shared-fixtures.ts';
import { readFileSync } from 'node:fs';

const BASE: FullTextQueryOptions = { text: { k1: 1.5, b: 1 } };

const OPTION_VARIANTS: FullTextQueryOptions[] = [BASE, { text: { k1: 1.2, b: 0.75 } }, { text: { k1: 0.9, b: 0.4 } }];

function randomMask(next: () => number, records: number, share: number): Uint8Array {
  return Uint8Array.from({ length: records }, () => (next() < share ? 1 : 0));
}

/** Checks scoresOf for each query, option set and filter; returns how many cases ran. */
function compareAll(index: FullTextIndex, records: number, queries: readonly string[], seed: number): { cases: number } {
  const next = seededRandom(seed);
  let cases = 0;
  queries.forEach((query, queryIndex) => {
    const options = OPTION_VARIANTS[queryIndex % OPTION_VARIANTS.length]!;
    const masks = [undefined, randomMask(next, records, 0.5), randomMask(next, records, 0.05)];
    for (const mask of masks) {
      // The filter is the caller's: the scores of allowed records are the unfiltered ones.
      const scores = index.scores(query, options, mask);
      const dense = index.scores(query, options);
      scores.forEach((score, record) => expect(score).toBe(!mask || mask[record] === 1 ? dense[record] : 0));
      const some = Array.from({ length: 20 }, () => Math.floor(next() * records)).filter((record) => !mask || mask[record] === 1);
      const exact = index.scoresOf(query, options, some);
      some.forEach((record, i) => expect(exact[i]).toBe(dense[record]));
      cases++;
      // Every record, then a few again: walked postings with the slot map, reset between calls.
      const every = Array.from({ length: records }, (_, record) => record);
      const all = index.scoresOf(query, options, every);
      every.forEach((record) => expect(all[record]).toBe(dense[record]));
      expect([...index.scoresOf(query, options, some)]).toEqual([...exact]);
    }
  });
  return { cases };
}

describe('seek (galloping in [doc, tf] postings)', () => {
  it('finds the first pair at or after a document, from any start', () => {
    const list = Uint32Array.from([2, 1, 5, 1, 9, 3, 14, 1, 20, 2, 31, 1]);
    expect(seek(list, 0, 0)).toBe(0);
    expect(seek(list, 0, 5)).toBe(2);
    expect(seek(list, 0, 6)).toBe(4);
    expect(seek(list, 2, 31)).toBe(10);
    expect(seek(list, 4, 32)).toBe(12);
    expect(seek(list, 8, 3)).toBe(8); // never moves back
    for (let target = 0; target < 35; target++) {
      const expected = [0, 2, 4, 6, 8, 10].find((at) => list[at]! >= target) ?? 12;
      expect(seek(list, 0, target)).toBe(expected);
    }
  });
});

describe('BM25 of given records equals the exhaustive BM25', () => {
  it('on a seeded random corpus with Zipf-distributed words, repeated and shared passages', async () => {
    const next = seededRandom(30);
    const vocabulary = Array.from({ length: 400 }, (_, i) => `w${i.toString(36)}q`);
    // Zipf: word i drawn with weight 1 / (i + 1), so a few words are in most passages.
    const cumulative: number[] = [];
    vocabulary.forEach((_, i) => cumulative.push((cumulative[i - 1] ?? 0) + 1 / (i + 1)));
    const word = () => {
      const target = next() * cumulative.at(-1)!;
      return vocabulary[cumulative.findIndex((sum) => sum >= target)]!;
    };
    const sentence = (length: number) => Array.from({ length }, word).join(' ');
    const records = 600;
    const chunks = Array.from({ length: 1500 }, () => ({ record: Math.floor(next() * records), text: sentence(3 + Math.floor(next() * 40)) }));
    // Exact ties: copies of passages in other records.
    for (let i = 0; i < 60; i++) chunks.push({ record: Math.floor(next() * records), text: chunks[i]!.text });
    const index = await loadBm25Index(await buildBm25Data({ recordCount: records, chunks }));
    const queries = Array.from({ length: 40 }, (_, i) => sentence(i % 4 === 0 ? 1 + (i % 3) : 5 + Math.floor(next() * 80)));
    const { cases } = compareAll(index, records, queries, 7);
    expect(cases).toBe(40 * 3);
  });
});

const ARGUANA = process.env.BEIR_ARGUANA_DIR ?? sharedPath('benchmarks', 'arguana');
const haveArguana = haveFixtures(['corpus.jsonl.gz', 'qrels-dev.tsv', 'queries.jsonl.gz'].map((file) => path.join(ARGUANA, file)));

describe.skipIf(!haveArguana)('BM25 of given records on 300 ArguAna documents', () => {
  it('equals the exhaustive scores for real arguments and for their first words as short questions', async () => {
    const qrels = parseQrels(readFileSync(path.join(ARGUANA, 'qrels-dev.tsv'), 'utf8'));
    const corpus = parseCorpus(readMaybeGzip(path.join(ARGUANA, 'corpus.jsonl.gz')));
    const subset = selectSubset(
      qrels,
      corpus.map((doc) => doc._id),
      { queries: 60, docs: 300, groupOf: (id) => id.replace(/-[^-]+$/, '') },
    );
    const chosen = new Set(subset.docIds);
    const docs = corpus.filter((doc) => chosen.has(doc._id));
    const index = await loadBm25Index(
      await buildBm25Data({ recordCount: docs.length, chunks: docs.map((doc, record) => ({ record, text: `${doc.title}. ${doc.text}` })) }),
    );
    const wanted = new Set(subset.queryIds);
    const arguments_ = parseQueries(readMaybeGzip(path.join(ARGUANA, 'queries.jsonl.gz')))
      .filter((query) => wanted.has(query._id))
      .map((query) => query.text);
    const questions = arguments_.map((text, i) =>
      text
        .split(/\s+/)
        .slice(0, 5 + (i % 6))
        .join(' '),
    );
    const { cases } = compareAll(index, docs.length, [...arguments_, ...questions], 11);
    expect(cases).toBe(120 * 3);
  }, 60_000);
});
