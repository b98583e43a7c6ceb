/**
 * The postings turned around, compactly, for scoring a few passages against many terms: what
 * each passage holds (term ids and counts). The feedback's expanded query (80 words and the
 * question's) is scored over its pool's passages only (search-index.ts); through the postings
 * that costs each term's list or a gallop per passage, through this a pass over each passage's
 * own terms, a few times cheaper at a million passages (bench/README.md, "The feedback's
 * BM25 through the passages' own terms").
 *
 * Memory: 3 bytes a (passage, term) pair where the vocabulary has at most 65,536 terms (5
 * above), plus 4 bytes a passage: about 0.36 of the postings' own bytes.
 */
import { countIn } from './postings.ts';

/** A field's postings as bm25.ts packs them (PackedField): term i's [doc, tf, ...] at postings[offsets[i] .. offsets[i + 1]). */
export interface PostingsField {
  lengths: ArrayLike<number>;
  terms: readonly string[];
  offsets: Uint32Array;
  postings: Uint32Array;
}

/** A count at or above this is stored as it and read from the postings (rare: a word repeated 255 times in one passage). */
export const COUNT_ESCAPE = 255;

export interface CompactForwardIndex {
  /** Passage p's pairs are [offsets[p], offsets[p + 1]). */
  offsets: Uint32Array;
  /** Term ids (positions in the field's terms), ascending within a passage. */
  terms: Uint16Array | Uint32Array;
  /** The term's count in the passage, or COUNT_ESCAPE: read it from the term's postings. */
  counts: Uint8Array;
}

/** Where an index is built (forward-kernel.ts gives views of the kernel's memory): the sizes compactForwardIndex would allocate. */
export interface ForwardArrays {
  /** passages + 1 */
  offsets: Uint32Array;
  /** pairs: 16-bit where the vocabulary has at most 65,536 terms */
  terms: Uint16Array | Uint32Array;
  /** pairs */
  counts: Uint8Array;
}

/** Passages filled at a time: their slice of the index stays in cache while every term's postings in the block are placed. */
const FILL_BLOCK = 65_536;

/**
 * In two passes over the postings: the pairs per passage counted, then placed a block of
 * passages at a time, term by term, so each passage's terms come out ascending (half the time
 * of placing every term's postings at once over a million passages: 1.1 s against 2.2 s).
 */
export function compactForwardIndex(field: PostingsField, block = FILL_BLOCK, arrays?: ForwardArrays): CompactForwardIndex {
  const passages = field.lengths.length;
  const pairs = field.postings.length / 2;
  const wide = field.terms.length > 0x10000;
  if (
    arrays &&
    (arrays.offsets.length !== passages + 1 || arrays.terms.length !== pairs || arrays.counts.length !== pairs || arrays.terms instanceof Uint32Array !== wide)
  ) {
    throw new Error('the forward index arrays given do not fit the field');
  }
  const offsets = arrays?.offsets.fill(0) ?? new Uint32Array(passages + 1);
  for (let at = 0; at < field.postings.length; at += 2) offsets[field.postings[at]! + 1]!++;
  for (let doc = 0; doc < passages; doc++) offsets[doc + 1]! += offsets[doc]!;
  const next = offsets.slice(0, passages);
  const terms = arrays?.terms ?? (wide ? new Uint32Array(pairs) : new Uint16Array(pairs));
  const counts = arrays?.counts ?? new Uint8Array(pairs);
  const cursor = field.offsets.slice(0, field.terms.length);
  for (let start = 0; start < passages; start += block) {
    const end = start + block;
    for (let term = 0; term < field.terms.length; term++) {
      const stop = field.offsets[term + 1]!;
      let at = cursor[term]!;
      for (; at < stop && field.postings[at]! < end; at += 2) {
        const slot = next[field.postings[at]!]!++;
        terms[slot] = term;
        counts[slot] = Math.min(field.postings[at + 1]!, COUNT_ESCAPE);
      }
      cursor[term] = at;
    }
  }
  return { offsets, terms, counts };
}

/**
 * Passage `doc`'s terms in ascending id and their exact counts (an escaped count read from the
 * term's postings in `field`, the field the index was built from), each given to `visit`.
 */
export function forEachPassageTerm(index: CompactForwardIndex, field: PostingsField, doc: number, visit: (term: number, count: number) => void): void {
  for (let at = index.offsets[doc]!; at < index.offsets[doc + 1]!; at++) {
    const term = index.terms[at]!;
    const count = index.counts[at]!;
    visit(term, count < COUNT_ESCAPE ? count : countIn(field.postings.subarray(field.offsets[term]!, field.offsets[term + 1]!), doc));
  }
}

/** The pairs the given passages hold: what scoring them through this index reads. */
export function forwardPairs(index: CompactForwardIndex, docs: ArrayLike<number>): number {
  let total = 0;
  for (let i = 0; i < docs.length; i++) total += index.offsets[docs[i]! + 1]! - index.offsets[docs[i]!]!;
  return total;
}
