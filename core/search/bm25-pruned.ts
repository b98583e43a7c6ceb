/**
 * BM25 without scoring every posting (issue 30): the k best records by MaxScore, and the exact
 * scores of given records by galloping through the postings. Both give, for the records they
 * return, the same floating-point number as the exhaustive `scores()` in bm25.ts: each
 * passage's terms are added in the query's order, from 0, with the same expression.
 *
 * MaxScore (Turtle and Flood 1995): each query term has an upper bound, its largest
 * contribution to any passage. Sorted by that bound, the terms whose bounds together cannot
 * reach the k-th best record so far are "non-essential": a passage containing only those
 * cannot enter the top k, so only the essential terms' postings are walked, and the
 * non-essential ones are looked up (galloping) for the passages walked, stopping as soon as
 * what remains cannot lift the passage over the k-th best. On long queries (ArguAna's are
 * arguments of ~200 words) most terms are common words with small bounds, so the walk covers
 * the rare terms' postings and the cost follows the question's postings, not the corpus.
 *
 * A record's score is its best passage plus `titleBoost` times its title's score (0 when no
 * passage matches). Each record is thus the best of "virtual passages": its real passages
 * (passage score + its title score, bounded by the title terms' bounds) and its title alone.
 * Both fields are walked into one heap of records; a record's best virtual passage is either
 * scored exactly or skipped because its bound fell below the k-th best, which makes the top k
 * exact.
 */

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

interface FieldTerm {
  /** Position among the field's query terms in query order: the order the exact sum adds in. */
  order: number;
  list: Uint32Array;
  factor: number;
  upper: number;
}

/** Per term and per (k1, b), the largest saturation tf / (tf + norm) in its postings. */
type SaturationCache = Map<string, Map<string, number>>;

function norm(field: LoadedField, { k1, b }: PrunedParameters, doc: number): number {
  return k1 * (1 - b + (b * field.lengths[doc]!) / field.average);
}

/** The query's terms present in the field, in query order, with bm25.ts's factor and a bound. */
function fieldTerms(field: LoadedField, terms: ReadonlyMap<string, number>, parameters: PrunedParameters, cache: SaturationCache): FieldTerm[] {
  const n = field.lengths.length;
  const key = `${parameters.k1},${parameters.b}`;
  let saturations = cache.get(key);
  if (!saturations) cache.set(key, (saturations = new Map()));
  const out: FieldTerm[] = [];
  for (const [term, weight] of terms) {
    const list = field.postings.get(term);
    if (!list) continue;
    const df = list.length / 2;
    const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
    const factor = weight * idf * (parameters.k1 + 1);
    let saturation = saturations.get(term);
    if (saturation === undefined) {
      saturation = 0;
      for (let i = 0; i < list.length; i += 2) {
        const tf = list[i + 1]!;
        saturation = Math.max(saturation, tf / (tf + norm(field, parameters, list[i]!)));
      }
      saturations.set(term, saturation);
    }
    out.push({ order: out.length, list, factor, upper: factor * saturation });
  }
  return out;
}

/** The first pair position at or after `from` whose document is ≥ target (list.length if none). */
export function seek(list: Uint32Array, from: number, target: number): number {
  if (from >= list.length || list[from]! >= target) return from;
  let low = from >> 1; // pair index whose doc is < target
  let step = 1;
  let high = low + step;
  const pairs = list.length >> 1;
  while (high < pairs && list[high * 2]! < target) {
    low = high;
    step *= 2;
    high = low + step;
  }
  if (high > pairs) high = pairs;
  while (low + 1 < high) {
    const middle = (low + high) >> 1;
    if (list[middle * 2]! < target) low = middle;
    else high = middle;
  }
  return high * 2;
}

/** The k best (record, score) pairs seen, as a min-heap whose root is the k-th best. */
function createRecordHeap(k: number) {
  const records = new Int32Array(k);
  const scores = new Float64Array(k);
  const position = new Map<number, number>();
  let size = 0;
  const worse = (a: number, b: number) => scores[a]! < scores[b]! || (scores[a] === scores[b] && records[a]! > records[b]!);
  const swap = (a: number, b: number) => {
    const record = records[a]!;
    const score = scores[a]!;
    records[a] = records[b]!;
    scores[a] = scores[b]!;
    records[b] = record;
    scores[b] = score;
    position.set(records[a]!, a);
    position.set(records[b]!, b);
  };
  const down = (at: number) => {
    for (;;) {
      const left = 2 * at + 1;
      let least = at;
      if (left < size && worse(left, least)) least = left;
      if (left + 1 < size && worse(left + 1, least)) least = left + 1;
      if (least === at) return;
      swap(at, least);
      at = least;
    }
  };
  const up = (at: number) => {
    while (at > 0 && worse(at, (at - 1) >> 1)) {
      swap(at, (at - 1) >> 1);
      at = (at - 1) >> 1;
    }
  };
  return {
    /** A bound below this cannot enter; 0 until k records are held (every match scores > 0). */
    threshold: () => (size < k ? 0 : scores[0]!),
    offer(record: number, score: number): void {
      const at = position.get(record);
      if (at !== undefined) {
        if (score > scores[at]!) {
          scores[at] = score;
          down(at);
        }
        return;
      }
      if (size < k) {
        records[size] = record;
        scores[size] = score;
        position.set(record, size);
        up(size++);
        return;
      }
      if (score < scores[0]! || (score === scores[0] && record > records[0]!)) return;
      position.delete(records[0]!);
      records[0] = record;
      scores[0] = score;
      position.set(record, 0);
      down(0);
    },
    /** Best first, ties by lower record index. */
    sorted(): { records: Uint32Array; scores: Float64Array } {
      const order = Array.from({ length: size }, (_, i) => i).sort((a, b) => scores[b]! - scores[a]! || records[a]! - records[b]!);
      return { records: Uint32Array.from(order, (i) => records[i]!), scores: Float64Array.from(order, (i) => scores[i]!) };
    },
  };
}

type RecordHeap = ReturnType<typeof createRecordHeap>;

interface FieldWalk {
  field: LoadedField;
  parameters: PrunedParameters;
  /** The field's query terms, any order (sorted here by bound). */
  terms: FieldTerm[];
  /** A candidate's value is scale · (field score) + extra; `extraUpper` bounds extra. */
  scale: number;
  extraUpper: number;
  admit: (doc: number) => boolean;
  /** Offers the document's value, given its exact field score (summed in query order). */
  finish: (doc: number, fieldScore: number) => void;
  heap: RecordHeap;
}

/** MaxScore over one field's postings (see the file comment); returns the postings read. */
function walkField(walk: FieldWalk): number {
  const { field, parameters, scale, extraUpper, heap } = walk;
  const terms = [...walk.terms].sort((a, b) => a.upper - b.upper);
  const count = terms.length;
  const cumulative = new Float64Array(count);
  terms.forEach((term, i) => (cumulative[i] = (i > 0 ? cumulative[i - 1]! : 0) + term.upper));
  const cursors = new Int32Array(count);
  const contributions = new Float64Array(count);
  const stamps = new Int32Array(count).fill(-1);
  const canReach = (partial: number, upTo: number) => (scale * (partial + (upTo >= 0 ? cumulative[upTo]! : 0)) + extraUpper) * SLACK >= heap.threshold();
  let read = 0;
  let essential = 0;
  for (;;) {
    while (essential < count && !canReach(0, essential)) essential++;
    if (essential === count) break;
    let doc = Infinity;
    for (let i = essential; i < count; i++) {
      const list = terms[i]!.list;
      if (cursors[i]! < list.length) doc = Math.min(doc, list[cursors[i]!]!);
    }
    if (doc === Infinity) break;
    const admitted = walk.admit(doc);
    let partial = 0;
    for (let i = essential; i < count; i++) {
      const term = terms[i]!;
      const at = cursors[i]!;
      if (term.list[at] !== doc) continue;
      read++;
      cursors[i] = at + 2;
      if (!admitted) continue;
      const tf = term.list[at + 1]!;
      const contribution = (term.factor * tf) / (tf + norm(field, parameters, doc));
      contributions[term.order] = contribution;
      stamps[term.order] = doc;
      partial += contribution;
    }
    if (!admitted) continue;
    let reachable = true;
    for (let i = essential - 1; i >= 0; i--) {
      if (!canReach(partial, i)) {
        reachable = false;
        break;
      }
      const term = terms[i]!;
      const before = cursors[i]!;
      const at = seek(term.list, before, doc);
      read += at === before ? 1 : Math.max(1, Math.ceil(Math.log2((at - before) / 2 + 1)));
      cursors[i] = at;
      if (term.list[at] !== doc) continue;
      const tf = term.list[at + 1]!;
      const contribution = (term.factor * tf) / (tf + norm(field, parameters, doc));
      contributions[term.order] = contribution;
      stamps[term.order] = doc;
      partial += contribution;
    }
    if (!reachable || !canReach(partial, -1)) continue;
    let exact = 0;
    for (let order = 0; order < count; order++) if (stamps[order] === doc) exact = exact + contributions[order]!;
    walk.finish(doc, exact);
  }
  return read;
}

/** Exact field scores of the given documents (ascending, distinct), summed in query order. */
function exactField(field: LoadedField, terms: FieldTerm[], parameters: PrunedParameters, docs: Uint32Array): Float64Array {
  const out = new Float64Array(docs.length);
  for (const term of terms) {
    let at = 0;
    for (let i = 0; i < docs.length; i++) {
      const doc = docs[i]!;
      at = seek(term.list, at, doc);
      if (at >= term.list.length) break;
      if (term.list[at] !== doc) continue;
      const tf = term.list[at + 1]!;
      out[i] = out[i]! + (term.factor * tf) / (tf + norm(field, parameters, doc));
    }
  }
  return out;
}

const postingsOf = (terms: readonly FieldTerm[]) => terms.reduce((sum, term) => sum + term.list.length / 2, 0);

export interface PrunedSearch {
  top(terms: ReadonlyMap<string, number>, options: PrunedQueryOptions, k: number, allowed?: Uint8Array): LexicalTop;
  scoresOf(terms: ReadonlyMap<string, number>, options: PrunedQueryOptions, records: ArrayLike<number>): Float64Array;
}

export function createPrunedSearch(text: LoadedField, title: LoadedField, chunkRecords: Uint32Array): PrunedSearch {
  const textCache: SaturationCache = new Map();
  const titleCache: SaturationCache = new Map();
  let recordChunks: { starts: Uint32Array; chunks: Uint32Array } | undefined;

  /** A record's title score, summed in query order (bm25.ts's titleScores[record]). */
  function titleScore(terms: FieldTerm[], parameters: PrunedParameters, record: number): number {
    let score = 0;
    for (const term of terms) {
      const at = seek(term.list, 0, record);
      if (term.list[at] !== record) continue;
      const tf = term.list[at + 1]!;
      score = score + (term.factor * tf) / (tf + norm(title, parameters, record));
    }
    return score;
  }

  return {
    top(terms, options, k, allowed) {
      if (k <= 0) return { records: new Uint32Array(0), scores: new Float64Array(0), postingsRead: 0, postingsTotal: 0 };
      const heap = createRecordHeap(k);
      const textTerms = fieldTerms(text, terms, options.text, textCache);
      const boost = options.titleBoost;
      const titleTerms = boost > 0 ? fieldTerms(title, terms, options.title, titleCache) : [];
      const titleUpper = titleTerms.reduce((sum, term) => sum + term.upper, 0);
      const titles = new Map<number, number>();
      let read = walkField({
        field: text,
        parameters: options.text,
        terms: textTerms,
        scale: 1,
        extraUpper: boost * titleUpper,
        admit: (chunk) => !allowed || allowed[chunkRecords[chunk]!] === 1,
        finish: (chunk, score) => {
          const record = chunkRecords[chunk]!;
          if (boost <= 0) return heap.offer(record, score);
          let recordTitle = titles.get(record);
          if (recordTitle === undefined) titles.set(record, (recordTitle = titleScore(titleTerms, options.title, record)));
          heap.offer(record, recordTitle > 0 ? score + boost * recordTitle : score);
        },
        heap,
      });
      if (boost > 0) {
        read += walkField({
          field: title,
          parameters: options.title,
          terms: titleTerms,
          scale: boost,
          extraUpper: 0,
          admit: (record) => !allowed || allowed[record] === 1,
          finish: (record, score) => heap.offer(record, 0 + boost * score),
          heap,
        });
      }
      return { ...heap.sorted(), postingsRead: read, postingsTotal: postingsOf(textTerms) + postingsOf(titleTerms) };
    },

    scoresOf(terms, options, records) {
      recordChunks ??= chunksByRecord(chunkRecords, title.lengths.length);
      const textTerms = fieldTerms(text, terms, options.text, textCache);
      const chunks: number[] = [];
      for (let i = 0; i < records.length; i++) {
        const record = records[i]!;
        for (let at = recordChunks.starts[record]!; at < recordChunks.starts[record + 1]!; at++) chunks.push(recordChunks.chunks[at]!);
      }
      const sortedChunks = Uint32Array.from(new Set(chunks)).sort();
      const chunkScores = exactField(text, textTerms, options.text, sortedChunks);
      const best = new Map<number, number>();
      sortedChunks.forEach((chunk, i) => {
        const record = chunkRecords[chunk]!;
        if (chunkScores[i]! > (best.get(record) ?? 0)) best.set(record, chunkScores[i]!);
      });
      const titleTerms = options.titleBoost > 0 ? fieldTerms(title, terms, options.title, titleCache) : [];
      return Float64Array.from({ length: records.length }, (_, i) => {
        const record = records[i]!;
        const score = best.get(record) ?? 0;
        const recordTitle = titleTerms.length > 0 ? titleScore(titleTerms, options.title, record) : 0;
        return recordTitle > 0 ? score + options.titleBoost * recordTitle : score;
      });
    },
  };
}

/** The chunks of each record: record r's are chunks[starts[r] .. starts[r + 1]), ascending. */
function chunksByRecord(chunkRecords: Uint32Array, recordCount: number): { starts: Uint32Array; chunks: Uint32Array } {
  const starts = new Uint32Array(recordCount + 1);
  for (let chunk = 0; chunk < chunkRecords.length; chunk++) starts[chunkRecords[chunk]! + 1] = starts[chunkRecords[chunk]! + 1]! + 1;
  for (let record = 0; record < recordCount; record++) starts[record + 1] = starts[record + 1]! + starts[record]!;
  const filled = starts.slice(0, recordCount);
  const chunks = new Uint32Array(chunkRecords.length);
  for (let chunk = 0; chunk < chunkRecords.length; chunk++) {
    const record = chunkRecords[chunk]!;
    chunks[filled[record]!] = chunk;
    filled[record] = filled[record]! + 1;
  }
  return { starts, chunks };
}
