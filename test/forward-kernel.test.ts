/**
 * The feedback's BM25 in the WebAssembly kernel (forward-kernel.ts, dot.wat's `forwardScores`)
 * against the formula summed in query order, bit for bit: 16- and 32-bit term ids, terms in an
 * order that is not the index's, escaped counts listed rather than guessed, and what it refuses.
 */
import { describe, expect, it } from 'vitest';
import { compactForwardIndex, COUNT_ESCAPE, type PostingsField } from '../core/search/forward-index.ts';
import { createForwardKernel } from '../core/search/forward-kernel.ts';
import { seededRandom } from '../core/random.ts';

/** A field of `passages` passages over `vocabulary` terms, a few repeated past the forward count. */
function field(passages: number, vocabulary: number, seed: number): PostingsField {
  const next = seededRandom(seed);
  const lists: number[][] = Array.from({ length: vocabulary }, () => []);
  const lengths: number[] = [];
  for (let doc = 0; doc < passages; doc++) {
    const terms = new Map<number, number>();
    for (let i = 0; i < 3 + Math.floor(next() * 40); i++) {
      const term = Math.floor(vocabulary * next() ** 3);
      terms.set(term, (terms.get(term) ?? 0) + 1);
    }
    if (doc % 97 === 5) terms.set(1, COUNT_ESCAPE + (doc % 3)); // the count byte's own value, and past it
    let length = 0;
    for (const [term, count] of [...terms].sort((a, b) => a[0] - b[0])) {
      lists[term]!.push(doc, count);
      length += count;
    }
    lengths.push(length);
  }
  const offsets = new Uint32Array(vocabulary + 1);
  lists.forEach((list, term) => (offsets[term + 1] = offsets[term]! + list.length));
  return {
    lengths,
    terms: Array.from({ length: vocabulary }, (_, term) => `w${term}`),
    offsets,
    postings: Uint32Array.from(lists.flat()),
  };
}

function countOf(data: PostingsField, term: number, doc: number): number {
  for (let at = data.offsets[term]!; at < data.offsets[term + 1]!; at += 2) if (data.postings[at] === doc) return data.postings[at + 1]!;
  return 0;
}

describe('the feedback’s BM25 in the kernel (forward-kernel.ts)', () => {
  for (const [name, vocabulary] of [
    ['16-bit term ids', 2_000],
    ['32-bit term ids', 70_000],
  ] as const) {
    it(`sums each passage's matches in query order, as the formula does, with ${name}`, () => {
      const data = field(3_000, vocabulary, vocabulary);
      const kernel = createForwardKernel(data)!;
      expect(kernel).toBeDefined();
      expect(kernel.index.terms instanceof Uint32Array).toBe(vocabulary > 0x10000);
      // Built in the kernel's memory, the same index as in ordinary arrays.
      const plain = compactForwardIndex(data);
      expect([...kernel.index.offsets]).toEqual([...plain.offsets]);
      expect([...kernel.index.terms]).toEqual([...plain.terms]);
      expect([...kernel.index.counts]).toEqual([...plain.counts]);
      const next = seededRandom(7);
      // Up to a few hundred terms: matches at query positions past 128 are summed by the kernel's other loop.
      for (let question = 0; question < 7; question++) {
        const termIds = [...new Set(Array.from({ length: 10 + question * 45 }, () => Math.floor(vocabulary * next() ** 2)))];
        if (question % 2 === 0 && !termIds.includes(1)) termIds.push(1); // the escaped term
        const factors = Float64Array.from(termIds, () => 0.5 + next() * 3);
        const docs = Uint32Array.from(new Set(Array.from({ length: 800 }, () => Math.floor(next() * 3_000)))).sort();
        const norms = Float64Array.from(docs, () => 0.3 + next() * 2);
        for (let repeat = 0; repeat < 2; repeat++) {
          // Twice: what a question leaves in the kernel's memory does not reach the next.
          const { scores, escaped } = kernel.scores(termIds, factors, docs, norms);
          const escapedDocs = new Set<number>();
          docs.forEach((doc, i) => {
            let sum = 0;
            termIds.forEach((term, j) => {
              const tf = countOf(data, term, doc);
              if (tf > 0) sum = sum + (factors[j]! * tf) / (tf + norms[i]!);
              if (tf >= COUNT_ESCAPE) escapedDocs.add(i);
            });
            if (!escapedDocs.has(i)) expect(scores[i], `passage ${doc}`).toBe(sum);
          });
          expect([...escaped]).toEqual([...escapedDocs].sort((a, b) => a - b));
          if (question % 2 === 0) expect(escaped.length).toBeGreaterThan(0);
        }
      }
    });
  }

  it('refuses a term twice, a term or a passage it does not hold, and lists that do not match, and leaves no term behind', () => {
    const data = field(500, 300, 3);
    const kernel = createForwardKernel(data)!;
    const docs = Uint32Array.from([1, 2, 3]);
    const norms = new Float64Array(3).fill(1);
    const before = kernel.scores([4, 9], Float64Array.from([1, 2]), docs, norms).scores;
    expect(() => kernel.scores([4, 9, 4], Float64Array.from([1, 2, 3]), docs, norms)).toThrow(/once/);
    expect(() => kernel.scores([300], Float64Array.from([1]), docs, norms)).toThrow(/term id 300/);
    expect(() => kernel.scores([4], Float64Array.from([1, 2]), docs, norms)).toThrow(/factors/);
    expect(() => kernel.scores([4], Float64Array.from([1]), Uint32Array.from([500]), Float64Array.from([1]))).toThrow(/no passage 500/);
    expect(() => kernel.scores([4], Float64Array.from([1]), docs, new Float64Array(2))).toThrow(/norms/);
    // After each refusal the slots are clean: the same question scores the same.
    expect([...kernel.scores([4, 9], Float64Array.from([1, 2]), docs, norms).scores]).toEqual([...before]);
    expect(() => compactForwardIndex(data, undefined, { offsets: new Uint32Array(3), terms: new Uint16Array(1), counts: new Uint8Array(1) })).toThrow(
      /do not fit/,
    );
  });
});
