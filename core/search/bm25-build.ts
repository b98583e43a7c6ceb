/**
 * The full-text index (bm25.ts) built document by document into typed arrays, for corpora too
 * large for `buildBm25Data`'s per-term lists of numbers: a million passages hold about a
 * hundred million postings, which as JavaScript arrays outgrow the heap. Postings are kept as
 * (term, document, count) rows as documents arrive, then sorted by term once, stably, so each
 * term's documents stay in ascending order. The result is the same `PackedFullText` as
 * `packFullText(buildBm25Data(…))` for the same input, byte for byte once encoded.
 *
 * A passage a previous build already indexed (the same record and text) can be carried over
 * from that build's index instead of being tokenised again (`carryOver`): an incremental build
 * then tokenises only the new passages.
 */
import type { PackedField, PackedFullText } from './bm25.ts';
import { compactForwardIndex, forEachPassageTerm, type CompactForwardIndex } from './forward-index.ts';

/** A Uint32Array that grows as values are pushed. */
class GrowingUint32 {
  values = new Uint32Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.values.length) {
      const grown = new Uint32Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = value;
  }
}

/** One field's postings, a document at a time (documents numbered in the order they are added). */
export class FieldBuilder {
  private readonly ids = new Map<string, number>();
  private readonly terms: string[] = [];
  private readonly lengths = new GrowingUint32();
  private readonly rowTerms = new GrowingUint32();
  private readonly rowDocs = new GrowingUint32();
  private readonly rowCounts = new GrowingUint32();
  private readonly counts = new Map<number, number>();

  /** The builder's id of a term, given one if new. */
  termId(term: string): number {
    let id = this.ids.get(term);
    if (id === undefined) {
      id = this.terms.push(term) - 1;
      this.ids.set(term, id);
    }
    return id;
  }

  /** The next document, from its tokens (repeats counted). */
  addTokens(tokens: readonly string[]): void {
    this.counts.clear();
    for (const token of tokens) {
      const id = this.termId(token);
      this.counts.set(id, (this.counts.get(id) ?? 0) + 1);
    }
    const doc = this.lengths.length;
    this.lengths.push(tokens.length);
    for (const [id, count] of this.counts) this.row(id, doc, count);
  }

  /** The next document, from term ids of this builder and their counts (a carried-over passage). */
  addCounted(ids: ArrayLike<number>, counts: ArrayLike<number>, length: number): void {
    const doc = this.lengths.length;
    this.lengths.push(length);
    for (let at = 0; at < ids.length; at++) this.row(ids[at]!, doc, counts[at]!);
  }

  private row(id: number, doc: number, count: number): void {
    this.rowTerms.push(id);
    this.rowDocs.push(doc);
    this.rowCounts.push(count);
  }

  finish(): PackedField {
    const rows = this.rowTerms.length;
    const perTerm = new Uint32Array(this.terms.length);
    for (let row = 0; row < rows; row++) perTerm[this.rowTerms.values[row]!]!++;
    // Terms some document holds, in sorted order (as buildBm25Data has them); a term carried
    // over from a previous index whose passages are all gone is left out.
    const order = this.terms
      .map((_, id) => id)
      .filter((id) => perTerm[id]! > 0)
      .sort((a, b) => (this.terms[a]! < this.terms[b]! ? -1 : this.terms[a]! > this.terms[b]! ? 1 : 0));
    const offsets = new Uint32Array(order.length + 1);
    const next = new Uint32Array(this.terms.length);
    order.forEach((id, position) => {
      offsets[position + 1] = offsets[position]! + perTerm[id]! * 2;
      next[id] = offsets[position]!;
    });
    // Rows arrive in document order: placing them in that order keeps each term's documents ascending.
    const postings = new Uint32Array(rows * 2);
    for (let row = 0; row < rows; row++) {
      const id = this.rowTerms.values[row]!;
      const at = next[id]!;
      next[id] = at + 2;
      postings[at] = this.rowDocs.values[row]!;
      postings[at + 1] = this.rowCounts.values[row]!;
    }
    return { lengths: this.lengths.values.slice(0, this.lengths.length), terms: order.map((id) => this.terms[id]!), offsets, postings };
  }
}

export interface PackedBuildInput {
  /** Records, whose indices chunkRecords names. */
  recordCount: number;
  /** Record index of each passage. */
  chunkRecords: Uint32Array;
  /** Adds passage `chunk` to the text field: its tokens, or its terms carried over from a previous index. */
  passage(chunk: number, text: FieldBuilder): void;
  stemming: boolean;
  stopWords: boolean;
}

export function buildPackedFullText(input: PackedBuildInput): PackedFullText {
  const text = new FieldBuilder();
  for (let chunk = 0; chunk < input.chunkRecords.length; chunk++) input.passage(chunk, text);
  return {
    stemming: input.stemming,
    stopWords: input.stopWords,
    recordCount: input.recordCount,
    chunkRecords: input.chunkRecords,
    text: text.finish(),
  };
}

/** Passages of a previous index, added to a new text field without tokenising them again. */
export function carryOver(previous: PackedFullText): (previousChunk: number, text: FieldBuilder) => void {
  let forward: CompactForwardIndex | undefined;
  let ids: Uint32Array | undefined;
  let bound: FieldBuilder | undefined;
  return (previousChunk, text) => {
    forward ??= compactForwardIndex(previous.text);
    if (bound !== text) {
      bound = text;
      ids = Uint32Array.from(previous.text.terms, (term) => text.termId(term));
    }
    const terms: number[] = [];
    const counts: number[] = [];
    forEachPassageTerm(forward, previous.text, previousChunk, (term, count) => {
      terms.push(ids![term]!);
      counts.push(count);
    });
    text.addCounted(terms, counts, previous.text.lengths[previousChunk]!);
  };
}

/** Whether the previous documents that stay (`newDocOf`: their numbers now, -1 where gone) keep their order: growField's condition. */
export function keepsOrder(newDocOf: Int32Array): boolean {
  let last = -1;
  for (const doc of newDocOf) {
    if (doc < 0) continue;
    if (doc <= last) return false;
    last = doc;
  }
  return true;
}

/**
 * A previous index's field grown by a few documents without taking it apart: each term's
 * postings are the previous ones renumbered (`newDocOf`: a previous document's number now, or -1
 * where it is gone) merged with the added documents' (`added`, a field over the added documents
 * alone, numbered in the order of `addedDocs`, their numbers now, ascending). The same field, byte
 * for byte, as adding every document again; undefined when the previous documents that stay do
 * not keep their order (the caller then carries them over one by one).
 */
export function growField(previous: PackedField, newDocOf: Int32Array, docCount: number, added: PackedField, addedDocs: Uint32Array): PackedField | undefined {
  if (!keepsOrder(newDocOf)) return undefined;
  const lengths = new Uint32Array(docCount);
  newDocOf.forEach((doc, old) => {
    if (doc >= 0) lengths[doc] = previous.lengths[old]!;
  });
  addedDocs.forEach((doc, at) => (lengths[doc] = added.lengths[at]!));

  const terms: string[] = [];
  const offsets: number[] = [0];
  const postings = new Uint32Array(previous.postings.length + added.postings.length);
  let out = 0;
  let a = 0;
  let b = 0;
  while (a < previous.terms.length || b < added.terms.length) {
    const termA = previous.terms[a];
    const termB = added.terms[b];
    const fromA = termA !== undefined && (termB === undefined || termA <= termB);
    const fromB = termB !== undefined && (termA === undefined || termB <= termA);
    const start = out;
    let i = fromA ? previous.offsets[a]! : 0;
    const endA = fromA ? previous.offsets[a + 1]! : 0;
    let j = fromB ? added.offsets[b]! : 0;
    const endB = fromB ? added.offsets[b + 1]! : 0;
    while (i < endA || j < endB) {
      // The next kept previous posting, renumbered.
      while (i < endA && newDocOf[previous.postings[i]!]! < 0) i += 2;
      const docA = i < endA ? newDocOf[previous.postings[i]!]! : Number.POSITIVE_INFINITY;
      const docB = j < endB ? addedDocs[added.postings[j]!]! : Number.POSITIVE_INFINITY;
      if (docA === Number.POSITIVE_INFINITY && docB === Number.POSITIVE_INFINITY) break;
      if (docA < docB) {
        postings[out++] = docA;
        postings[out++] = previous.postings[i + 1]!;
        i += 2;
      } else {
        postings[out++] = docB;
        postings[out++] = added.postings[j + 1]!;
        j += 2;
      }
    }
    if (out > start) {
      terms.push((fromA ? termA : termB)!);
      offsets.push(out);
    }
    if (fromA) a++;
    if (fromB) b++;
  }
  return { lengths, terms, offsets: Uint32Array.from(offsets), postings: postings.subarray(0, out) };
}
