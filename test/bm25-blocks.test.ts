/**
 * BM25's two fast paths against a plain reference written here from the formula: the
 * exhaustive scores computed a block of passages at a time (bm25.ts `bestPassages`, blocks of
 * 16,384) and the given records' scores read through the forward index (forward-index.ts),
 * on a corpus of more than two blocks whose records' passages are not all consecutive (as in a
 * grown index), with a word repeated past what the forward index's counts hold.
 */
import { describe, expect, it } from 'vitest';
import { bm25Idf } from '../core/search/bm25-given.ts';
import { buildBm25Data, decodeFullText, encodeFullText, loadBm25Index, packFullText, PAUSE_PASSAGES, type FullTextQueryOptions } from '../core/search/bm25.ts';
import { createPassageKernel, kernelBytes, POOL_PASSAGES } from '../core/search/passage-kernel.ts';
import { compactForwardIndex, COUNT_ESCAPE } from '../core/search/forward-index.ts';
import { seededRandom } from '../core/random.ts';

const OPTIONS: FullTextQueryOptions = { text: { k1: 1.5, b: 1 } };

async function corpus(records = 9_000) {
  const next = seededRandom(91);
  const vocabulary = Array.from({ length: 300 }, (_, i) => `t${i.toString(36)}x`);
  const word = () => vocabulary[Math.floor(vocabulary.length * next() ** 3)]!; // a few words in most passages
  const chunks: { record: number; text: string }[] = [];
  for (let record = 0; record < records; record++) {
    for (let i = 0; i < 4; i++) chunks.push({ record, text: Array.from({ length: 2 + Math.floor(next() * 12) }, word).join(' ') });
  }
  // Passages added later to early records (a grown index), across the block boundaries.
  for (let i = 0; i < 400; i++) chunks.push({ record: Math.floor(next() * 200), text: Array.from({ length: 6 }, word).join(' ') });
  // One word repeated more times than a forward count holds.
  chunks.push({ record: 17, text: `${'trebled '.repeat(COUNT_ESCAPE + 45)} t0x` });
  const data = await buildBm25Data({ recordCount: records, chunks });
  return { data, chunks, records };
}

/** Each record's best passage score, summed term by term in query order, from the built data alone. */
function reference(data: Awaited<ReturnType<typeof corpus>>['data'], terms: ReadonlyMap<string, number>, records: number, allowed?: Uint8Array): Float64Array {
  const { k1, b } = OPTIONS.text;
  const lengths = data.text.lengths;
  const average = lengths.reduce((sum, length) => sum + length, 0) / lengths.length;
  const passage = new Float64Array(lengths.length);
  for (const [term, weight] of terms) {
    const at = data.text.terms.indexOf(term);
    if (at < 0) continue;
    const list = data.text.postings[at]!;
    const factor = weight * bm25Idf(lengths.length, list.length / 2) * (k1 + 1);
    for (let i = 0; i < list.length; i += 2) {
      const doc = list[i]!;
      const tf = list[i + 1]!;
      passage[doc] = passage[doc]! + (factor * tf) / (tf + k1 * (1 - b + (b * lengths[doc]!) / average));
    }
  }
  const best = new Float64Array(records);
  passage.forEach((score, doc) => {
    const record = data.chunkRecords[doc]!;
    if ((!allowed || allowed[record] === 1) && score > best[record]!) best[record] = score;
  });
  return best;
}

describe('BM25 by blocks of passages and through the forward index', () => {
  it('gives the reference scores, bit for bit, over more than two blocks, filtered or not', async () => {
    const { data, records } = await corpus();
    expect(data.chunkRecords.length).toBeGreaterThan(2 * 16_384);
    const index = await loadBm25Index(data);
    const next = seededRandom(5);
    const questions = ['t0x t1x t5x', 't2x t2x t9x t1ax trebled', 'tzx', 'nothing-here t3x'];
    for (const question of questions) {
      const terms = index.queryTerms(question);
      expect([...index.scores(question, OPTIONS)]).toEqual([...reference(data, terms, records)]);
      const allowed = Uint8Array.from({ length: records }, () => (next() < 0.3 ? 1 : 0));
      expect([...index.scores(question, OPTIONS, allowed)]).toEqual([...reference(data, terms, records, allowed)]);
    }
  });

  it('the same in the kernel over the index file read into its memory, and in JavaScript while a paused question holds the kernel', async () => {
    // Past PAUSE_PASSAGES passages, so that a question pauses.
    const { data, records } = await corpus(17_000);
    expect(data.chunkRecords.length).toBeGreaterThan(PAUSE_PASSAGES);
    const file = encodeFullText(data);
    const bytes = kernelBytes(file.length);
    expect(bytes, 'WebAssembly runs here').toBeDefined();
    bytes!.set(file);
    const index = await loadBm25Index(decodeFullText(bytes!));
    const questions = ['t0x t1x t5x', 't2x t2x t9x t1ax trebled', 'tzx'];
    const next = seededRandom(12);
    for (const question of questions) {
      const terms = index.queryTerms(question);
      expect([...index.scores(question, OPTIONS)]).toEqual([...reference(data, terms, records)]);
      const allowed = Uint8Array.from({ length: records }, () => (next() < 0.5 ? 1 : 0));
      // While this question pauses between blocks (its run holding the kernel), another is
      // scored in JavaScript; both are the reference's.
      const during: Float64Array[] = [];
      const paused = await index.scoresPausing(question, OPTIONS, allowed, async () => {
        during.push(index.scores(questions[(questions.indexOf(question) + 1) % questions.length]!, OPTIONS));
      });
      expect([...paused]).toEqual([...reference(data, terms, records, allowed)]);
      expect(during.length).toBeGreaterThan(0);
      const other = questions[(questions.indexOf(question) + 1) % questions.length]!;
      for (const scores of during) expect([...scores]).toEqual([...reference(data, index.queryTerms(other), records)]);
    }
    // A question that can wait (scoresPausing) waits for the run under way, then takes the kernel:
    // it reaches its own pause only once the first has gone on from its pause (scoring in
    // JavaScript instead, it would reach it within the first's pause).
    const order: string[] = [];
    let waited: Promise<Float64Array> | undefined;
    const first = await index.scoresPausing('t0x t1x t5x', OPTIONS, undefined, async () => {
      order.push('first paused');
      waited ??= index.scoresPausing('t2x t9x', OPTIONS, undefined, async () => {
        order.push('second paused');
      });
      order.push('first goes on');
    });
    expect([...first]).toEqual([...reference(data, index.queryTerms('t0x t1x t5x'), records)]);
    expect([...(await waited!)]).toEqual([...reference(data, index.queryTerms('t2x t9x'), records)]);
    expect(order.slice(0, 3)).toEqual(['first paused', 'first goes on', 'second paused']);
    // Listed records under other parameters while a run holds the kernel's norms: scored in
    // JavaScript then, in the kernel after; the same sums.
    const other: FullTextQueryOptions = { ...OPTIONS, text: { k1: 0.9, b: 0.4 } };
    const expanded = new Map(data.text.terms.slice(0, 60).map((term, i) => [term, 1 / (i + 1)]));
    const pool = Array.from({ length: 3_000 }, (_, i) => (i * 37) % records).sort((a, b) => a - b);
    let meanwhile: Float64Array | undefined;
    await index.scoresPausing('t0x t1x', OPTIONS, undefined, async () => {
      meanwhile ??= index.scoresOf(expanded, other, pool);
    });
    expect(meanwhile).toBeDefined();
    expect([...index.scoresOf(expanded, other, pool)]).toEqual([...meanwhile!]);
    // A pause that fails ends its run: the kernel serves the next question.
    await expect(index.scoresPausing('t0x', OPTIONS, undefined, () => Promise.reject(new Error('gone')))).rejects.toThrow('gone');
    expect([...index.scores('t1x t2x', OPTIONS)]).toEqual([...reference(data, index.queryTerms('t1x t2x'), records)]);
  });

  it('the kernel takes one run at a time, lists of its own field only, and is free again after finish or release, waking those waiting', async () => {
    const postings = Uint32Array.from([0, 1, 2, 3, 1, 2, 3, 1]);
    const chunkRecords = Uint32Array.from([0, 0, 1, 1]);
    const kernel = createPassageKernel({ postings, chunkRecords, recordCount: 2, block: 3 })!;
    const norms = Float64Array.from([1, 2, 1, 0.5]);
    const lists = [postings.subarray(0, 4), postings.subarray(4, 8)];
    const run = kernel.begin(lists, [2, 1], norms, 'a')!;
    expect(kernel.begin(lists, [2, 1], norms, 'a')).toBeUndefined();
    run.step(0, 4);
    const best = new Float64Array(2);
    run.finish(best);
    // Passages 0 and 1 (record 0): 2·1/(1+1), 1·2/(2+2); 2 and 3 (record 1, across the blocks): 2·3/(3+1), 1·1/(1+0.5).
    expect([...best]).toEqual([Math.max(1, 0.5), Math.max(1.5, 1 / 1.5)]);
    expect(() => run.step(0, 4)).toThrow(/ended/);
    const again = kernel.begin(lists, [2, 1], norms, 'a')!;
    again.release();
    expect(kernel.begin([Uint32Array.from([0, 1])], [1], norms, 'a')).toBeUndefined(); // not a view of the field's postings
    const held = kernel.begin(lists, [2, 1], norms, 'a')!;
    expect(kernel.busy).toBe(true);
    const woken: number[] = [];
    void kernel.released().then(() => woken.push(1));
    void kernel.released().then(() => woken.push(2));
    held.release();
    expect(kernel.busy).toBe(false);
    await kernel.released(); // at once when free
    expect(woken).toEqual([1, 2]);
  });

  it('scores listed passages in the kernel as scoreTerms does: walked or galloped, refusing what it cannot take', () => {
    // Passages 0..5; term a in 0, 2, 3, 5; term b in 1, 2, 4.
    const postings = Uint32Array.from([0, 2, 2, 1, 3, 4, 5, 1, 1, 1, 2, 3, 4, 2]);
    const chunkRecords = Uint32Array.from([0, 0, 1, 1, 2, 2]);
    const kernel = createPassageKernel({ postings, chunkRecords, recordCount: 3, block: 4 })!;
    const norms = Float64Array.from([1, 2, 0.5, 1, 3, 2]);
    const lists = [postings.subarray(0, 8), postings.subarray(8, 14)];
    const factors = [3, 0.5];
    const share = (factor: number, tf: number, doc: number) => (factor * tf) / (tf + norms[doc]!);
    // Added in query order: a's share first, then b's.
    const expected = (docs: number[]) =>
      docs.map((doc) => {
        let sum = 0;
        lists.forEach((list, j) => {
          for (let i = 0; i < list.length; i += 2) if (list[i] === doc) sum = sum + share(factors[j]!, list[i + 1]!, doc);
        });
        return sum;
      });
    for (const docs of [[0, 1, 2, 3, 4, 5], [2, 5], [1], [4, 5], []]) {
      for (const gallop of [0, 1, 1_000]) {
        const scores = kernel.scoresOf(lists, factors, norms, 'n', Uint32Array.from(docs), gallop);
        expect([...scores!], `passages ${docs.join(',')}, gallop from ${gallop}`).toEqual(expected(docs));
      }
    }
    expect(kernel.scoresOf(lists, factors, norms, 'n', Uint32Array.from([3, 2]), 8)).toBeUndefined(); // not ascending
    expect(kernel.scoresOf(lists, factors, norms, 'n', Uint32Array.from([2, 2]), 8)).toBeUndefined(); // not distinct
    expect(kernel.scoresOf(lists, factors, norms, 'n', Uint32Array.from([6]), 8)).toBeUndefined(); // past the passages
    expect(kernel.scoresOf([Uint32Array.from([0, 1])], [1], norms, 'n', Uint32Array.from([0]), 8)).toBeUndefined(); // not the field's
    expect(
      kernel.scoresOf(
        lists,
        factors,
        norms,
        'n',
        new Uint32Array(POOL_PASSAGES + 1).map((_, i) => i),
        8,
      ),
    ).toBeUndefined();
    // A paused run holds the norms: the same norms are scored meanwhile, other norms are not.
    const run = kernel.begin(lists, factors, norms, 'n')!;
    run.step(0, 2);
    expect([...kernel.scoresOf(lists, factors, norms, 'n', Uint32Array.from([2, 5]), 8)!]).toEqual(expected([2, 5]));
    expect(
      kernel.scoresOf(
        lists,
        factors,
        Float64Array.from(norms, (norm) => norm * 2),
        'm',
        Uint32Array.from([2]),
        8,
      ),
    ).toBeUndefined();
    run.step(2, 6);
    const best = new Float64Array(3);
    run.finish(best);
    const all = expected([0, 1, 2, 3, 4, 5]);
    expect([...best]).toEqual([Math.max(all[0]!, all[1]!), Math.max(all[2]!, all[3]!), Math.max(all[4]!, all[5]!)]);
    // Once the run is over, other norms are taken (and copied in).
    const doubled = Float64Array.from(norms, (norm) => norm * 2);
    const other = kernel.scoresOf(lists, factors, doubled, 'm', Uint32Array.from([2]), 8)!;
    expect(other[0]).toBe((3 * 1) / (1 + doubled[2]!) + (0.5 * 3) / (3 + doubled[2]!));
  });

  it('scores given records through the forward index (many words, many records) and the postings (few) alike', async () => {
    const { data, records } = await corpus();
    const index = await loadBm25Index(data);
    // An expanded query: many words, each with a weight, as the feedback's, in an order that is
    // not the index's (the sums must still be added in query order).
    const expanded = new Map(
      data.text.terms
        .slice(0, 90)
        .reverse()
        .map((term, i) => [term, 1 / (i + 2)]),
    );
    expanded.set('trebl', 0.4); // record 17's passage holds it past the forward count: read again from the postings
    const full = reference(data, expanded, records);
    const next = seededRandom(8);
    for (const [size, distinct] of [
      [3, false],
      [40, false],
      [2_000, false],
      [2_000, true],
      [records, false],
      [records, true],
    ] as const) {
      // Records ascending and distinct (as the feedback's pool), or in any order and repeated.
      const drawn = Array.from({ length: size }, () => Math.floor(next() * records));
      const pool = distinct ? [...new Set(drawn)].sort((a, b) => a - b) : drawn;
      if (!pool.includes(17)) pool.push(17);
      const scores = index.scoresOf(expanded, OPTIONS, pool);
      pool.forEach((record, i) => expect(scores[i], `record ${record} of a pool of ${size}`).toBe(full[record]));
      // One word: its postings are fewer than the pool's terms, and are read instead.
      const one = new Map([[data.text.terms[7]!, 1]]);
      const single = reference(data, one, records);
      const read = index.scoresOf(one, OPTIONS, pool);
      pool.forEach((record, i) => expect(read[i]).toBe(single[record]));
    }
  });

  it("keeps each passage's terms and counts, reading a count past the escape from the postings", async () => {
    const { data, chunks } = await corpus();
    const index = await loadBm25Index(data);
    const forward = compactForwardIndex(packFullText(data).text);
    const repeated = chunks.length - 1;
    const at = data.text.terms.indexOf('trebl');
    expect(at).toBeGreaterThanOrEqual(0);
    const slot = [...forward.terms.subarray(forward.offsets[repeated]!, forward.offsets[repeated + 1]!)].indexOf(at);
    expect(forward.counts[forward.offsets[repeated]! + slot]).toBe(COUNT_ESCAPE);
    const passage = index.passageTerms(repeated);
    expect(passage.terms.get('trebl')).toBe(COUNT_ESCAPE + 45);
    expect(passage.length).toBe(data.text.lengths[repeated]);
    // Filled a block at a time or at once: the same index.
    for (const block of [1_000, 7_777]) {
      const small = compactForwardIndex(packFullText(data).text, block);
      expect(small.offsets).toEqual(forward.offsets);
      expect(Buffer.from(small.terms.buffer).equals(Buffer.from(forward.terms.buffer))).toBe(true);
      expect(Buffer.from(small.counts.buffer).equals(Buffer.from(forward.counts.buffer))).toBe(true);
    }
    // Every passage's terms are its postings', with their counts.
    for (let doc = 0; doc < 300; doc++) {
      const expected = new Map<string, number>();
      data.text.postings.forEach((list, term) => {
        for (let i = 0; i < list.length; i += 2) if (list[i] === doc) expected.set(data.text.terms[term]!, list[i + 1]!);
      });
      expect(index.passageTerms(doc).terms).toEqual(expected);
    }
  });
});
