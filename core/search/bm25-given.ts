/**
 * BM25 of given records (the feedback's pool, search-index.ts): each listed record's exact
 * score, the same floating-point number as the exhaustive `scores()` in bm25.ts (each
 * passage's terms added in the query's order, from 0, with the same expression), reading
 * only what those records need: each term's postings galloped through to their passages, or
 * walked where the passages are many beside them, or the passages' own terms read through the
 * forward index, whichever reads least (in the WebAssembly kernels where they run).
 *
 * A record's value is its best passage's.
 *
 * A term-at-a-time MaxScore top k lived here until issue 44: it read 38-70% of the exhaustive
 * path's postings at 1M passages yet measured slower in time at 100k and 1M, so it was never
 * the default and left the tree (bench/README.md, "Lexical side at scale"; git history has it).
 */
import { gather } from './select.ts';
import { COUNT_ESCAPE, forwardPairs, type CompactForwardIndex } from './forward-index.ts';
import type { ForwardKernel } from './forward-kernel.ts';
import type { PassageKernel } from './passage-kernel.ts';
import { countIn, seek } from './postings.ts';
import { passagesOf, recordChunks, type RecordChunks } from './record-chunks.ts';

/** Lucene's BM25 idf of a term in `df` of `n` documents (0 documents: the most a term can weigh). */
export function bm25Idf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/** A field as bm25.ts loads it: document lengths, their mean, and each term's [doc, tf, ...]. */
export interface LoadedField {
  lengths: Float64Array;
  average: number;
  postings: Map<string, Uint32Array>;
}

export interface FieldParameters {
  k1: number;
  b: number;
}

export interface GivenQueryOptions {
  text: FieldParameters;
}

/**
 * A gallop probes about log2 of the gap it skips, each probe a likely cache miss: when a term
 * has fewer than this many postings per candidate, walking them is cheaper. A rough figure.
 */
const GALLOP_COST = 8;
/**
 * The passage kernel's costs (passage-kernel.ts's scoresOf), in postings read: it gallops to
 * the passages from 32 pairs per passage (the walk reads a pair in about 2.4 ns, a gallop about
 * 30 ns at 100k passages), and a pair of the forward index costs about three postings
 * (forward-kernel.ts: ~7 ns). Measured on the feedback's pools at 100k and 1M passages
 * (bench/README.md, session 16): they choose the postings at 100k, the forward index at 1M.
 */
const KERNEL_GALLOP_COST = 32;
const KERNEL_FORWARD_PAIR_COST = 3;

interface FieldTerm {
  term: string;
  list: Uint32Array;
  factor: number;
  /** Per document, bm25.ts's k1 · (1 - b + b · length / average): the same number, computed once. */
  norms: Float64Array;
}

/** What names a field's norms for one (k1, b): the cache's key, and the passage kernel's (passage-kernel.ts). */
export const normsKey = ({ k1, b }: FieldParameters): string => `${k1},${b}`;

/** Per (k1, b) of a field: each document's norm. */
export type FieldCache = Map<string, { norms: Float64Array }>;

/**
 * A field's per-document BM25 length norms for these parameters, computed once per index:
 * k1 · (1 - b + b · length / average), the expression bm25.ts's exhaustive scoring uses.
 */
export function fieldCacheOf(field: LoadedField, { k1, b }: FieldParameters, cache: FieldCache): { norms: Float64Array } {
  const key = normsKey({ k1, b });
  let cached = cache.get(key);
  if (!cached) {
    const norms = Float64Array.from(field.lengths, (length) => k1 * (1 - b + (b * length) / field.average));
    cache.set(key, (cached = { norms }));
  }
  return cached;
}

/** The query's terms present in the field, in query order, with bm25.ts's factor. */
export function fieldTerms(field: LoadedField, terms: ReadonlyMap<string, number>, { k1, b }: FieldParameters, cache: FieldCache): FieldTerm[] {
  const n = field.lengths.length;
  const { norms } = fieldCacheOf(field, { k1, b }, cache);
  const out: FieldTerm[] = [];
  for (const [term, weight] of terms) {
    const list = field.postings.get(term);
    if (!list) continue;
    const df = list.length / 2;
    const idf = bm25Idf(n, df);
    const factor = weight * idf * (k1 + 1);
    out.push({ term, list, factor, norms });
  }
  return out;
}

/**
 * Exact field scores of the given documents (ascending, distinct), summed in query order:
 * each term's postings galloped through, or, when the documents are many beside them, walked
 * whole — looking each posting's document up in `slots` (document → position among `docs`,
 * -1 elsewhere; filled here and reset before returning) when given, else merged with the list.
 */
function exactScores(terms: readonly FieldTerm[], docs: Uint32Array, slots?: Int32Array): Float64Array {
  if (!slots) return scoreTerms(terms, docs);
  for (let i = 0; i < docs.length; i++) slots[docs[i]!] = i;
  try {
    return scoreTerms(terms, docs, slots);
  } finally {
    for (let i = 0; i < docs.length; i++) slots[docs[i]!] = -1; // the map is shared by the index's calls
  }
}

function scoreTerms(terms: readonly FieldTerm[], docs: Uint32Array, slots?: Int32Array): Float64Array {
  const out = new Float64Array(docs.length);
  for (const { list, factor, norms } of terms) {
    const merge = list.length / 2 < docs.length * GALLOP_COST;
    if (merge && slots) {
      for (let at = 0; at < list.length; at += 2) {
        const i = slots[list[at]!]!;
        if (i < 0) continue;
        const tf = list[at + 1]!;
        out[i] = out[i]! + (factor * tf) / (tf + norms[list[at]!]!);
      }
      continue;
    }
    let at = 0;
    for (let i = 0; i < docs.length && at < list.length; i++) {
      const doc = docs[i]!;
      if (merge) while (at < list.length && list[at]! < doc) at += 2;
      else at = seek(list, at, doc);
      if (list[at] !== doc) continue;
      const tf = list[at + 1]!;
      out[i] = out[i]! + (factor * tf) / (tf + norms[doc]!);
    }
  }
  return out;
}

/** What scoring `docs` passages through the postings reads: each term's list walked, or a gallop per passage. */
function postingsCost(terms: readonly FieldTerm[], docs: number): number {
  let cost = 0;
  for (const { list } of terms) cost += Math.min(list.length / 2, docs * GALLOP_COST);
  return cost;
}

/** The text field's forward index and each term's id in it (its position among the field's terms). */
export interface TextForward {
  index: CompactForwardIndex;
  termIds: ReadonlyMap<string, number>;
  /** The index in the WebAssembly kernel's memory, which scores it (forward-kernel.ts); without it, the JavaScript loop. */
  kernel?: ForwardKernel | undefined;
}

/**
 * scoreTerms' scores of the given passages read through the forward index: per passage, its
 * own terms looked up among the query's, the matches summed in query order — the same sums,
 * bit for bit. In the kernel where there is one (a passage holding an escaped count scored
 * again here), else in the JavaScript loop.
 */
function forwardScores(terms: readonly FieldTerm[], docs: Uint32Array, forward: TextForward, termSlots: Int32Array): Float64Array {
  if (!forward.kernel || terms.length === 0) return loopForwardScores(terms, docs, forward, termSlots);
  // One field, one set of parameters: every term's norms are the same array.
  const norms = terms[0]!.norms;
  const { scores, escaped } = forward.kernel.scores(
    terms.map((term) => forward.termIds.get(term.term)!),
    Float64Array.from(terms, (term) => term.factor),
    docs,
    gather(norms, docs),
  );
  if (escaped.length === 0) return scores;
  const again = loopForwardScores(
    terms,
    Uint32Array.from(escaped, (at) => docs[at]!),
    forward,
    termSlots,
  );
  escaped.forEach((at, i) => (scores[at] = again[i]!));
  return scores;
}

/** forwardScores in JavaScript. `termSlots` (term id → query position, -1 elsewhere) is filled and reset here. */
function loopForwardScores(terms: readonly FieldTerm[], docs: Uint32Array, forward: TextForward, termSlots: Int32Array): Float64Array {
  const { offsets, terms: ids, counts } = forward.index;
  const out = new Float64Array(docs.length);
  if (terms.length === 0) return out;
  terms.forEach((term, j) => (termSlots[forward.termIds.get(term.term)!] = j));
  // One field, one set of parameters: every term's norms are the same array.
  const norms = terms[0]!.norms;
  const factors = Float64Array.from(terms, (term) => term.factor);
  const order = new Int32Array(terms.length);
  const values = new Float64Array(terms.length);
  try {
    for (let i = 0; i < docs.length; i++) {
      const doc = docs[i]!;
      const norm = norms[doc]!;
      let matched = 0;
      for (let at = offsets[doc]!, end = offsets[doc + 1]!; at < end; at++) {
        const j = termSlots[ids[at]!]!;
        if (j < 0) continue;
        let tf = counts[at]!;
        if (tf === COUNT_ESCAPE) tf = countIn(terms[j]!.list, doc);
        const value = (factors[j]! * tf) / (tf + norm);
        // Insertion by query position: the exact path adds the terms in query order.
        let k = matched++;
        while (k > 0 && order[k - 1]! > j) {
          order[k] = order[k - 1]!;
          values[k] = values[k - 1]!;
          k--;
        }
        order[k] = j;
        values[k] = value;
      }
      let sum = 0;
      for (let k = 0; k < matched; k++) sum = sum + values[k]!;
      out[i] = sum;
    }
    return out;
  } finally {
    for (const term of terms) termSlots[forward.termIds.get(term.term)!] = -1;
  }
}

export interface GivenRecordScores {
  scoresOf(terms: ReadonlyMap<string, number>, options: GivenQueryOptions, records: ArrayLike<number>): Float64Array;
}

export function createGivenRecordScores(
  text: LoadedField,
  chunkRecords: Uint32Array,
  recordCount: number,
  textCache: FieldCache = new Map(),
  forward?: TextForward,
  kernel?: PassageKernel,
): GivenRecordScores {
  let chunksOf: RecordChunks | undefined;
  /** Passage → position among the passages being scored, for scoresOf (-1 between calls). */
  let slots: Int32Array | undefined;
  /** Term id → position among the query's terms, for scoring through the forward index (-1 between calls). */
  let termSlots: Int32Array | undefined;

  return {
    scoresOf(terms, options, records) {
      chunksOf ??= recordChunks(chunkRecords, recordCount);
      const textTerms = fieldTerms(text, terms, options.text, textCache);
      const { chunks: sortedChunks, owners } = passagesOf(chunksOf, records);
      const pairCost = kernel ? KERNEL_FORWARD_PAIR_COST : 1;
      let chunkScores: Float64Array;
      if (forward && forwardPairs(forward.index, sortedChunks) * pairCost < postingsCost(textTerms, sortedChunks.length)) {
        termSlots ??= new Int32Array(text.postings.size).fill(-1);
        chunkScores = forwardScores(textTerms, sortedChunks, forward, termSlots);
      } else {
        // The kernel's walk of the postings where it runs (the same sums), else JavaScript's.
        const norms = fieldCacheOf(text, options.text, textCache).norms;
        const lists = textTerms.map((term) => term.list);
        const inKernel = kernel?.scoresOf(
          lists,
          textTerms.map((term) => term.factor),
          norms,
          normsKey(options.text),
          sortedChunks,
          KERNEL_GALLOP_COST,
        );
        chunkScores = inKernel ?? exactScores(textTerms, sortedChunks, (slots ??= new Int32Array(chunkRecords.length).fill(-1)));
      }
      return bestPerRecord(chunkScores, sortedChunks, owners, chunkRecords, records);
    },
  };
}

/**
 * Each listed record's best passage score (0 where none scores): through the passages' positions
 * among the records where passagesOf gave them, else by record.
 */
function bestPerRecord(
  scores: Float64Array,
  chunks: Uint32Array,
  owners: Uint32Array | undefined,
  chunkRecords: Uint32Array,
  records: ArrayLike<number>,
): Float64Array {
  const best = new Float64Array(records.length);
  if (owners) {
    owners.forEach((i, at) => (best[i] = Math.max(best[i]!, scores[at]!)));
    return best;
  }
  const byRecord = new Map<number, number>();
  chunks.forEach((chunk, at) => {
    const record = chunkRecords[chunk]!;
    if (scores[at]! > (byRecord.get(record) ?? 0)) byRecord.set(record, scores[at]!);
  });
  for (let i = 0; i < records.length; i++) best[i] = byRecord.get(records[i]!) ?? 0;
  return best;
}
