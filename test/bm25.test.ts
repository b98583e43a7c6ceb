/** BM25 (core/search/bm25.ts): the formula, the binary artifact format, filters. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openPassageFile } from '../api/passage-file.ts';
import { encodePassages, passagesFromBytes } from '../core/search/passages.ts';
import { buildBm25Data, decodeFullText, encodeFullText, loadBm25Index, type FullTextQueryOptions } from '../core/search/bm25.ts';

const OPTIONS: FullTextQueryOptions = { text: { k1: 1.5, b: 1 } };

const CHUNKS = [
  { record: 0, text: 'Models forget between conversations; memory is carried by the corpus.' },
  { record: 0, text: 'A second passage about continuity and memory, memory again — naïve café.' },
  { record: 1, text: 'Knead the dough, let it rise, bake it for forty minutes.' },
  { record: 2, text: 'Where models disagree about alignment, the dissent is kept.' },
];

async function fixture() {
  return buildBm25Data({ recordCount: 3, chunks: CHUNKS });
}

describe('BM25', () => {
  it('scores by Lucene BM25: best passage per record, absent terms score 0', async () => {
    const data = await fixture();
    const index = await loadBm25Index(data);
    const scores = index.scores('memory', OPTIONS);
    expect(scores).toHaveLength(3);
    // From the index's own statistics: the term's postings, passage lengths and their mean.
    const term = data.text.terms.findIndex((t) => t.startsWith('memor'));
    const postings = data.text.postings[term]!;
    expect(postings).toEqual([0, 1, 1, 2]); // passage 0 once, passage 1 twice
    const lengths = data.text.lengths;
    const average = lengths.reduce((a, b) => a + b, 0) / lengths.length;
    const idf = Math.log(1 + (4 - 2 + 0.5) / (2 + 0.5));
    const bm25 = (tf: number, length: number) => (idf * tf * 2.5) / (tf + 1.5 * (1 - 1 + (1 * length) / average));
    expect(scores[0]).toBeCloseTo(Math.max(bm25(1, lengths[0]!), bm25(2, lengths[1]!)), 10);
    expect(scores[1]).toBe(0);
    expect(scores[2]).toBe(0);
    // a word repeated in the query counts each time
    expect(index.scores('memory memory', OPTIONS)[0]).toBeCloseTo(2 * scores[0]!, 10);
    expect(index.scores('the and of', OPTIONS).every((score) => score === 0)).toBe(true);
  });

  it('a record not allowed scores 0 whatever it contains', async () => {
    const index = await loadBm25Index(await fixture());
    expect(index.scores('models', OPTIONS)[2]).toBeGreaterThan(0);
    expect(index.scores('models', OPTIONS, Uint8Array.from([1, 1, 0]))[2]).toBe(0);
    expect(index.scores('models', OPTIONS, Uint8Array.from([1, 1, 0]))[0]).toBeGreaterThan(0);
  });

  it('the binary file loads to the same scores as the in-memory data', async () => {
    const data = await fixture();
    const bytes = encodeFullText(data);
    const fromFile = await loadBm25Index(decodeFullText(bytes));
    const inMemory = await loadBm25Index(data);
    expect(fromFile.passages).toBe(4);
    for (const query of ['memory', 'models disagree', 'bread dough bake', 'alignment memory models', 'nothing here']) {
      expect(Array.from(fromFile.scores(query, OPTIONS))).toEqual(Array.from(inMemory.scores(query, OPTIONS)));
    }
    // unaligned bytes (a slice at an odd offset) load too
    const shifted = new Uint8Array(bytes.length + 1);
    shifted.set(bytes, 1);
    expect(Array.from((await loadBm25Index(decodeFullText(shifted.subarray(1)))).scores('memory', OPTIONS))).toEqual(
      Array.from(inMemory.scores('memory', OPTIONS)),
    );
  });

  it('weighted query terms score as the query they come from, and an expanded query adds its words', async () => {
    const index = await loadBm25Index(await fixture());
    const terms = index.queryTerms('memory models memory');
    expect([...terms.values()].sort()).toEqual([1, 2]); // the repeated word counts twice
    expect(Array.from(index.scores(terms, OPTIONS))).toEqual(Array.from(index.scores('memory models memory', OPTIONS)));
    // a word the query lacks, given weight, reaches the record that holds it
    const dough = [...index.queryTerms('dough').keys()][0]!;
    expect(index.scores(terms, OPTIONS)[1]).toBe(0);
    expect(index.scores(new Map([...terms, [dough, 0.5]]), OPTIONS)[1]).toBeGreaterThan(0);
  });

  it("gives each passage's own terms and counts from the postings (in memory, and from the file)", async () => {
    const data = await fixture();
    const variants = [await loadBm25Index(data), await loadBm25Index(decodeFullText(encodeFullText(data)))];
    for (const index of variants) {
      data.text.lengths.forEach((length, chunk) => {
        const expected = new Map<string, number>();
        data.text.terms.forEach((term, i) => {
          const postings = data.text.postings[i]!;
          for (let at = 0; at < postings.length; at += 2) if (postings[at] === chunk) expected.set(term, postings[at + 1]!);
        });
        const passage = index.passageTerms(chunk);
        expect(passage.length).toBe(length);
        expect(new Map([...passage.terms].sort())).toEqual(new Map([...expected].sort()));
      });
      const second = index.passageTerms(1);
      expect(second.terms.get([...index.queryTerms('memory').keys()][0]!)).toBe(2); // "memory, memory again"
      expect([...second.terms.values()].reduce((sum, count) => sum + count, 0)).toBe(second.length);
    }
  });

  it('reads passages back byte for byte, and refuses a passages file that does not match', async () => {
    // Text with more bytes than characters, beyond the encoder's first buffer: it grows mid-passage.
    const texts = [...CHUNKS.map((chunk) => chunk.text), '', 'ünïcode ✓ 𝄞', 'ü'.repeat(3000), `a${'𝄞'.repeat(1500)}`, 'plain'];
    const bytes = encodePassages(texts);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'polyphony-passages-'));
    writeFileSync(path.join(dir, 'passages.bin'), bytes);
    for (const reader of [passagesFromBytes(bytes), openPassageFile(path.join(dir, 'passages.bin'))]) {
      expect(reader.count).toBe(texts.length);
      expect(texts.map((_, passage) => reader.text(passage))).toEqual(texts);
      expect(() => reader.text(texts.length)).toThrow(RangeError);
    }
    writeFileSync(path.join(dir, 'short.bin'), bytes.subarray(0, bytes.length - 1));
    expect(() => openPassageFile(path.join(dir, 'short.bin'))).toThrow(/rebuild/);
    expect(() => passagesFromBytes(new TextEncoder().encode('not a passages file'))).toThrow(/rebuild/);
  });

  it('refuses a file of another format or a truncated one, naming the fix', async () => {
    const bytes = encodeFullText(await fixture());
    expect(() => decodeFullText(new TextEncoder().encode('{"format":"orama"}'))).toThrow(/rebuild/);
    expect(() => decodeFullText(bytes.subarray(0, bytes.length - 4))).toThrow(/truncated|rebuild/);
    // Version 1, which held a title field beside the passages, is refused: rebuild.
    const first = Uint8Array.from(bytes);
    first[7] = 1;
    expect(() => decodeFullText(first)).toThrow(/not in the current format: rebuild/);
  });

  it('scores every record, one without passages too (0)', async () => {
    const index = await loadBm25Index(await buildBm25Data({ recordCount: 5, chunks: CHUNKS }));
    const fromFile = await loadBm25Index(decodeFullText(encodeFullText(await buildBm25Data({ recordCount: 5, chunks: CHUNKS }))));
    for (const scores of [index.scores('memory models', OPTIONS), fromFile.scores('memory models', OPTIONS)]) {
      expect(scores.length).toBe(5);
      expect(scores[4]).toBe(0);
    }
    expect(Array.from(index.scoresOf('memory models', OPTIONS, [4, 0]))).toEqual([0, index.scores('memory models', OPTIONS)[0]]);
  });
});
