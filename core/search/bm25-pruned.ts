/**
 * BM25 without scoring every posting (issue 30): the k best records by MaxScore, and the exact
 * scores of given records by galloping through the postings. Both give, for the records they
 * return, the same floating-point number as the exhaustive `scores()` in bm25.ts: each
 * passage's terms are added in the query's order, from 0, with the same expression.
 *
 * MaxScore (Turtle and Flood 1995), term at a time: each query term has an upper bound, its
 * largest contribution to any passage. The terms are walked by decreasing bound (rare words
 * first) into per-passage scores; once the bounds of the terms not yet walked, plus the best
 * title, add up to less than the k-th best record so far, no passage that none of the walked
 * terms reached can enter the top k. The passages seen that still can are completed by
 * galloping through the remaining postings (the common words', the longest) rather than
 * walking them. So the work follows the query's rare postings plus a few lookups per
 * candidate, not the corpus: at 1M passages it reads 38-70% of the exhaustive path's
 * postings, yet measured slower than that walk in time, which is why search-index.ts keeps
 * it off by default (bench/README.md, "Lexical side at scale"; a document-at-a-time MaxScore,
 * tried first, was slower still).
 *
 * A record's value is its best passage plus `titleBoost` times its title's score (only when
 * the title matches). Titles are short and one per record, so their scores are computed
 * exactly up front and enter the bound as the best title's.
 */
import { gather, nthLargest } from './select.ts';
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

export interface PrunedParameters {
  k1: number;
  b: number;
}

export interface PrunedQueryOptions {
  text: PrunedParameters;
  title: PrunedParameters;
  titleBoost: number;
}

/** The k best records, best first (ties: lower record index first), with their exact BM25. */
export interface LexicalTop {
  records: Uint32Array;
  scores: Float64Array;
  /** Postings read (walked or probed by the search): the pruned path's work. */
  postingsRead: number;
  /** Postings of the query's terms: what the exhaustive path reads. */
  postingsTotal: number;
}

/**
 * Bounds are compared with this relative slack: a bound and a score are sums of the same
 * terms in different orders, so they may differ in the last bits, and a record tied with the
 * k-th best must not be skipped (the lower record index wins a tie).
 */
const SLACK = 1 + 1e-9;

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
  /** Position among the field's query terms in query order: the order the exact sum adds in. */
  order: number;
  list: Uint32Array;
  factor: number;
  upper: number;
  /** Per document, bm25.ts's k1 · (1 - b + b · length / average): the same number, computed once. */
  norms: Float64Array;
}

/** What names a field's norms for one (k1, b): the cache's key, and the passage kernel's (passage-kernel.ts). */
export const normsKey = ({ k1, b }: PrunedParameters): string => `${k1},${b}`;

/** Per (k1, b) of a field: each document's norm, and per term its largest saturation tf / (tf + norm). */
export type FieldCache = Map<string, { norms: Float64Array; saturations: Map<string, number> }>;

/**
 * A field's per-document BM25 length norms for these parameters, computed once per index:
 * k1 · (1 - b + b · length / average), the expression bm25.ts's exhaustive scoring uses.
 */
export function fieldCacheOf(field: LoadedField, { k1, b }: PrunedParameters, cache: FieldCache): { norms: Float64Array; saturations: Map<string, number> } {
  const key = normsKey({ k1, b });
  let cached = cache.get(key);
  if (!cached) {
    const norms = Float64Array.from(field.lengths, (length) => k1 * (1 - b + (b * length) / field.average));
    cache.set(key, (cached = { norms, saturations: new Map() }));
  }
  return cached;
}

/** The query's terms present in the field, in query order, with bm25.ts's factor and a bound. */
export function fieldTerms(
  field: LoadedField,
  terms: ReadonlyMap<string, number>,
  { k1, b }: PrunedParameters,
  cache: FieldCache,
  withUpper = true,
): FieldTerm[] {
  const n = field.lengths.length;
  const { norms, saturations } = fieldCacheOf(field, { k1, b }, cache);
  const out: FieldTerm[] = [];
  for (const [term, weight] of terms) {
    const list = field.postings.get(term);
    if (!list) continue;
    const df = list.length / 2;
    const idf = bm25Idf(n, df);
    const factor = weight * idf * (k1 + 1);
    // The bound reads every posting once a term; exact scores of given records need none.
    let saturation = saturations.get(term);
    if (saturation === undefined && withUpper) {
      saturation = 0;
      for (let i = 0; i < list.length; i += 2) {
        const tf = list[i + 1]!;
        saturation = Math.max(saturation, tf / (tf + norms[list[i]!]!));
      }
      saturations.set(term, saturation);
    }
    out.push({ term, order: out.length, list, factor, upper: factor * (saturation ?? 1), norms });
  }
  return out;
}

/**
 * Dense arrays reused by every query of an index, each query zeroing what it touched: a
 * question then costs its postings, not an allocation the size of the corpus.
 */
interface Scratch {
  /** Score per passage; 0 when untouched. */
  passages: Float64Array;
  /** Best passage per record, within recordThreshold only. */
  records: Float64Array;
  /** The passages touched by a query (the first so many), to zero after it. */
  touched: Uint32Array;
  recordList: Uint32Array;
  values: Float64Array;
}

function createScratch(passages: number, records: number): Scratch {
  return {
    passages: new Float64Array(passages),
    records: new Float64Array(records),
    touched: new Uint32Array(passages),
    recordList: new Uint32Array(records),
    values: new Float64Array(records),
  };
}

interface TopSearch {
  /** The passage field's query terms in query order. */
  terms: FieldTerm[];
  chunkRecords: Uint32Array;
  allowed: Uint8Array | undefined;
  k: number;
  titleBoost: number;
  /** Exact title scores (query order) of the allowed records whose title matches. */
  titles: ReadonlyMap<number, number>;
  /** The largest titleBoost · title score. */
  titleUpper: number;
  scratch: Scratch;
}

/** A record's value from its best passage score (0 if none) and title score, as bm25.ts adds them. */
const recordValue = (best: number, title: number | undefined, boost: number) => (title !== undefined && title > 0 ? best + boost * title : best);

/**
 * The k-th best record value given the scores so far of `passages` (lower bounds of the final
 * ones), counting only records at or above `floor`; 0 when fewer than k are. Any k records'
 * lower bounds bound the k-th best from below, so this is a valid threshold either way.
 */
function recordThreshold(search: TopSearch, passages: Uint32Array, floor: number): number {
  const { chunkRecords, titles, titleBoost, k } = search;
  const skipBelow = floor / SLACK - search.titleUpper;
  const { records: best, recordList, values } = search.scratch;
  const scores = search.scratch.passages;
  let seen = 0;
  for (let i = 0; i < passages.length; i++) {
    const passage = passages[i]!;
    if (scores[passage]! < skipBelow) continue;
    const record = chunkRecords[passage]!;
    if (best[record] === 0) recordList[seen++] = record;
    if (scores[passage]! > best[record]!) best[record] = scores[passage]!;
  }
  let count = 0;
  if (titles.size === 0) for (let i = 0; i < seen; i++) values[count++] = best[recordList[i]!]!;
  else {
    for (let i = 0; i < seen; i++) values[count++] = recordValue(best[recordList[i]!]!, titles.get(recordList[i]!), titleBoost);
    for (const [record, title] of titles) if (best[record] === 0) values[count++] = recordValue(0, title, titleBoost);
  }
  for (let i = 0; i < seen; i++) best[recordList[i]!] = 0;
  return count < k ? 0 : nthLargest(values.subarray(0, count), k);
}

/** Keeps the passages that can still reach `threshold` with `reach` more (and their title); returns them, in order. */
function reachable(search: TopSearch, passages: Uint32Array, reach: number, threshold: number): Uint32Array {
  const { chunkRecords, titles, titleBoost } = search;
  const scores = search.scratch.passages;
  let kept = 0;
  for (let i = 0; i < passages.length; i++) {
    const passage = passages[i]!;
    const title = titles.size === 0 ? 0 : titleBoost * (titles.get(chunkRecords[passage]!) ?? 0);
    if ((scores[passage]! + reach + title) * SLACK >= threshold) passages[kept++] = passage;
  }
  return passages.subarray(0, kept);
}

/**
 * Adds the remaining terms' contributions to the candidate passages (ascending): galloping
 * through a term's postings when the candidates are few beside them, else walking them (a
 * passage scoring 0 was never touched and is not a candidate; one touched but dropped may
 * gain a contribution, unread). After each term, drops the candidates that can no longer
 * reach the k-th best record: the reach falls, and the threshold rises as their scores fill
 * in (recomputed once per as many postings read as candidates: it costs a pass over them).
 */
function completeScores(
  search: TopSearch,
  terms: readonly FieldTerm[],
  suffix: Float64Array,
  start: Uint32Array,
  startThreshold: number,
): { candidates: Uint32Array; read: number } {
  const scores = search.scratch.passages;
  let candidates = start;
  let read = 0;
  let threshold = startThreshold;
  let thresholdAfter = 0;
  terms.forEach((term, j) => {
    const { list, factor, norms } = term;
    if (list.length / 2 < candidates.length * GALLOP_COST) {
      for (let i = 0; i < list.length; i += 2) {
        const passage = list[i]!;
        if (scores[passage]! <= 0) continue;
        const tf = list[i + 1]!;
        scores[passage] = scores[passage]! + (factor * tf) / (tf + norms[passage]!);
      }
      read += list.length / 2;
    } else {
      let at = 0;
      for (let i = 0; i < candidates.length && at < list.length; i++) {
        const passage = candidates[i]!;
        const before = at;
        at = seek(list, at, passage);
        read += at === before ? 1 : Math.ceil(Math.log2((at - before) / 2 + 1));
        if (list[at] !== passage) continue;
        const tf = list[at + 1]!;
        scores[passage] = scores[passage]! + (factor * tf) / (tf + norms[passage]!);
      }
    }
    if (read >= thresholdAfter) {
      threshold = Math.max(threshold, recordThreshold(search, candidates, threshold));
      thresholdAfter = read + candidates.length;
    }
    candidates = reachable(search, candidates, suffix[j + 1]!, threshold);
  });
  return { candidates, read };
}

/**
 * The top k from complete passage scores (summed in bound order): the records near or above
 * the k-th best are rescored in query order, so their scores are bm25.ts's to the last bit,
 * then sorted (ties: lower record index first).
 */
function exactTop(search: TopSearch, candidates: Uint32Array): { records: Uint32Array; scores: Float64Array } {
  const { chunkRecords, titles, titleBoost, k } = search;
  const { records: best, recordList } = search.scratch;
  const scores = search.scratch.passages;
  const cut = recordThreshold(search, candidates, 0);
  let seen = 0;
  for (let i = 0; i < candidates.length; i++) {
    const passage = candidates[i]!;
    const record = chunkRecords[passage]!;
    if (best[record] === 0) recordList[seen++] = record;
    if (scores[passage]! > best[record]!) best[record] = scores[passage]!;
  }
  const near = (record: number, passageBest: number) => recordValue(passageBest, titles.get(record), titleBoost) * SLACK >= cut;
  const chosen: number[] = [];
  for (let i = 0; i < candidates.length; i++) if (near(chunkRecords[candidates[i]!]!, best[chunkRecords[candidates[i]!]!]!)) chosen.push(candidates[i]!);
  const exactBest = new Map<number, number>();
  for (let i = 0; i < seen; i++) {
    const record = recordList[i]!;
    if (near(record, best[record]!)) exactBest.set(record, 0);
    best[record] = 0;
  }
  for (const record of titles.keys()) if (!exactBest.has(record) && near(record, 0)) exactBest.set(record, 0);
  const passages = Uint32Array.from(chosen);
  const exact = exactScores(search.terms, passages);
  passages.forEach((passage, i) => {
    const record = chunkRecords[passage]!;
    if (exact[i]! > exactBest.get(record)!) exactBest.set(record, exact[i]!);
  });
  const ranked = [...exactBest]
    .map(([record, score]) => [record, recordValue(score, titles.get(record), titleBoost)] as const)
    .filter(([, value]) => value > 0)
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, k);
  return { records: Uint32Array.from(ranked, ([record]) => record), scores: Float64Array.from(ranked, ([, value]) => value) };
}

/** Adds a term's contributions to the passage scores, listing newly touched passages; returns how many are listed. */
function walkTerm(
  term: FieldTerm,
  scores: Float64Array,
  touched: Uint32Array,
  count: number,
  allowed: Uint8Array | undefined,
  chunkRecords: Uint32Array,
): number {
  const { list, factor, norms } = term;
  for (let i = 0; i < list.length; i += 2) {
    const passage = list[i]!;
    if (allowed && allowed[chunkRecords[passage]!] !== 1) continue;
    const tf = list[i + 1]!;
    const score = scores[passage]!;
    if (score === 0) touched[count++] = passage;
    scores[passage] = score + (factor * tf) / (tf + norms[passage]!);
  }
  return count;
}

/**
 * Term-at-a-time MaxScore (Turtle and Flood 1995): terms by decreasing bound, each walked
 * into the passage scores, until what the unwalked terms could add to an unseen passage
 * (plus the best title) falls below the k-th best record so far. The passages seen that can
 * still reach it are then completed by galloping through the remaining (common, long)
 * postings instead of walking them.
 */
function topTermAtATime(search: TopSearch): Omit<LexicalTop, 'postingsTotal'> {
  const { chunkRecords, allowed, scratch } = search;
  const terms = [...search.terms].sort((a, b) => b.upper - a.upper || a.order - b.order);
  const suffix = new Float64Array(terms.length + 1);
  for (let i = terms.length - 1; i >= 0; i--) suffix[i] = suffix[i + 1]! + terms[i]!.upper;
  const titleUpper = search.titleUpper;
  const scores = scratch.passages;
  const touched = scratch.touched;
  let count = 0;
  let read = 0;
  let threshold = 0;
  let checkAfter = 0;
  let next = 0;
  try {
    while (next < terms.length) {
      const term = terms[next++]!;
      count = walkTerm(term, scores, touched, count, allowed, chunkRecords);
      read += term.list.length / 2;
      // Stopping needs k records above what an unseen passage could reach, so only passages
      // above that count (few, late in the walk); the pass over the passages seen is taken at
      // most once per twice as many postings as there are.
      const reach = (suffix[next]! + titleUpper) * SLACK;
      if (next < terms.length && read >= checkAfter) {
        threshold = Math.max(threshold, recordThreshold(search, touched.subarray(0, count), Math.max(threshold, reach)));
        checkAfter = read + 2 * count;
        if (reach < threshold) break;
      }
    }
    const candidates = reachable(search, ascending(scores, touched, count), suffix[next]!, threshold);
    const completed = completeScores(search, terms.slice(next), suffix.subarray(next), candidates, threshold);
    return { ...exactTop(search, completed.candidates), postingsRead: read + completed.read };
  } finally {
    for (let i = 0; i < count; i++) scores[touched[i]!] = 0;
  }
}

/**
 * The first `count` passages of `touched`, ascending: sorted when they are few, read off the
 * dense scores (touched passages score above 0) when they are many, where a sort of most of a
 * million passages would cost more than the walk it follows.
 */
function ascending(scores: Float64Array, touched: Uint32Array, count: number): Uint32Array {
  if (count * Math.log2(count + 1) < scores.length) return touched.slice(0, count).sort();
  const out = new Uint32Array(count);
  for (let passage = 0, at = 0; passage < scores.length; passage++) if (scores[passage]! > 0) out[at++] = passage;
  return out;
}

/** Exact title scores of the allowed records whose title matches, summed in query order. */
function titleScores(terms: readonly FieldTerm[], allowed: Uint8Array | undefined): Map<number, number> {
  const scores = new Map<number, number>();
  for (const { list, factor, norms } of terms) {
    for (let i = 0; i < list.length; i += 2) {
      const record = list[i]!;
      if (allowed && allowed[record] !== 1) continue;
      const tf = list[i + 1]!;
      scores.set(record, (scores.get(record) ?? 0) + (factor * tf) / (tf + norms[record]!));
    }
  }
  return scores;
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

const postingsOf = (terms: readonly FieldTerm[]) => terms.reduce((sum, term) => sum + term.list.length / 2, 0);

export interface PrunedSearch {
  top(terms: ReadonlyMap<string, number>, options: PrunedQueryOptions, k: number, allowed?: Uint8Array): LexicalTop;
  scoresOf(terms: ReadonlyMap<string, number>, options: PrunedQueryOptions, records: ArrayLike<number>): Float64Array;
}

export function createPrunedSearch(
  text: LoadedField,
  title: LoadedField,
  chunkRecords: Uint32Array,
  caches: { text: FieldCache; title: FieldCache } = { text: new Map(), title: new Map() },
  forward?: TextForward,
  kernel?: PassageKernel,
): PrunedSearch {
  const { text: textCache, title: titleCache } = caches;
  let chunksOf: RecordChunks | undefined;
  let scratch: Scratch | undefined;
  /** Passage → position among the passages being scored, for scoresOf (-1 between calls). */
  let slots: Int32Array | undefined;
  /** Term id → position among the query's terms, for scoring through the forward index (-1 between calls). */
  let termSlots: Int32Array | undefined;

  /** A record's title score, summed in query order (bm25.ts's titleScores[record]). */
  function titleScore(terms: readonly FieldTerm[], record: number): number {
    let score = 0;
    for (const term of terms) {
      const at = seek(term.list, 0, record);
      if (term.list[at] !== record) continue;
      const tf = term.list[at + 1]!;
      score = score + (term.factor * tf) / (tf + term.norms[record]!);
    }
    return score;
  }

  return {
    top(terms, options, k, allowed) {
      const textTerms = fieldTerms(text, terms, options.text, textCache);
      const titleTerms = options.titleBoost > 0 ? fieldTerms(title, terms, options.title, titleCache) : [];
      const postingsTotal = postingsOf(textTerms) + postingsOf(titleTerms);
      if (k <= 0) return { records: new Uint32Array(0), scores: new Float64Array(0), postingsRead: 0, postingsTotal };
      scratch ??= createScratch(chunkRecords.length, title.lengths.length);
      const titles = titleScores(titleTerms, allowed);
      let titleUpper = 0;
      for (const score of titles.values()) titleUpper = Math.max(titleUpper, options.titleBoost * score);
      const found = topTermAtATime({
        terms: textTerms,
        chunkRecords,
        allowed,
        k,
        titleBoost: options.titleBoost,
        titles,
        titleUpper,
        scratch,
      });
      return { ...found, postingsRead: found.postingsRead + postingsOf(titleTerms), postingsTotal };
    },

    scoresOf(terms, options, records) {
      chunksOf ??= recordChunks(chunkRecords, title.lengths.length);
      const textTerms = fieldTerms(text, terms, options.text, textCache, false);
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
      const best = bestPerRecord(chunkScores, sortedChunks, owners, chunkRecords, records);
      const titleTerms = options.titleBoost > 0 ? fieldTerms(title, terms, options.title, titleCache, false) : [];
      return best.map((score, i) => recordValue(score, titleTerms.length > 0 ? titleScore(titleTerms, records[i]!) : undefined, options.titleBoost));
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
