/**
 * The full-text side of retrieval: Okapi BM25 (Lucene's formula) over the passages (chunks), a
 * record scoring its best passage's, with whole-word stemmed terms from Orama's English
 * tokenizer (tokenizer.ts). A work's passages begin with its title ("<title>. ", for the
 * embedder); a second field of titles alone, added to the record's score by a weight, was never
 * the default at any size measured (bench/README.md, "BM25 (alone, default passages)") and
 * left the index in issue 44 (its postings, its parameters and the title weight).
 *
 * Why not Orama's own search: Orama 3.1 deduplicates a document's tokens before counting,
 * so every term of a document gets the same frequency (1 / distinct terms), counts a
 * repeated term's occurrences as documents in its idf, and drops repeats from the query.
 * On BEIR ArguAna textbook BM25 ranks clearly better (bench/README.md, "BM25 that counts";
 * `npm run eval:beir` measures it).
 *
 * Built as `FullTextData` (per field, the document lengths and, per term, a flat postings
 * list [doc, tf, doc, tf, ...]) and stored as the binary file described below
 * (fulltext.bin), which loads as views of its bytes.
 */
import { bm25Idf, createGivenRecordScores, fieldCacheOf, fieldTerms, normsKey, type FieldCache, type LoadedField } from './bm25-given.ts';
import { compactForwardIndex, forEachPassageTerm } from './forward-index.ts';
import { createPassageKernel } from './passage-kernel.ts';
import { createForwardKernel } from './forward-kernel.ts';
import { createTermTokenizer } from './tokenizer.ts';

export const FULL_TEXT_FORMAT = 'polyphony-bm25@2';

export interface FieldData {
  /** Terms per document of this field (after stop words). */
  lengths: number[];
  terms: string[];
  /** postings[i] belongs to terms[i]: [doc, tf, doc, tf, ...], docs ascending. */
  postings: number[][];
}

export interface FullTextData {
  format: typeof FULL_TEXT_FORMAT;
  stemming: boolean;
  stopWords: boolean;
  /** Records scored (a record may have no passage); chunkRecords[chunk] is the record index. */
  recordCount: number;
  chunkRecords: number[];
  /** One document per chunk. */
  text: FieldData;
}

export interface Bm25Parameters {
  k1: number;
  b: number;
}

export interface FullTextQueryOptions {
  /** BM25 parameters of the passages. */
  text: Bm25Parameters;
}

export interface FullTextIndex {
  /** Passages (chunks) indexed. The loaded index keeps typed postings, not the JSON data. */
  readonly passages: number;
  /** A query's terms and their weights (how often the query says each): what `scores` sums over. */
  queryTerms(query: string): Map<string, number>;
  /**
   * BM25 per record, indexed by record: its best passage's; 0 where no term matches or the
   * record is not allowed. Weighted terms (`queryTerms`, or
   * an expanded query) are scored with the weights given.
   */
  scores(query: string | ReadonlyMap<string, number>, options: FullTextQueryOptions, allowed?: Uint8Array): Float64Array;
  /**
   * The same scores, with `pause()` awaited between blocks of passages (every
   * PAUSE_PASSAGES or so): the thread can take a message meanwhile (the question's vector,
   * for the index in another thread; search-index.ts).
   */
  scoresPausing(
    query: string | ReadonlyMap<string, number>,
    options: FullTextQueryOptions,
    allowed: Uint8Array | undefined,
    pause: () => Promise<void>,
  ): Promise<Float64Array>;
  /**
   * `scores()` of the given records only, in their order (the filter is the caller's): each
   * term's postings galloped through, not read whole, so a few thousand records cost little
   * even for terms that most passages hold (the feedback's expanded query).
   */
  scoresOf(query: string | ReadonlyMap<string, number>, options: FullTextQueryOptions, records: ArrayLike<number>): Float64Array;
  /**
   * The most BM25 a query (its `queryTerms`) can score on a passage: each term at full saturation (idf ·
   * (k1 + 1), times its query weight), a term no passage holds counted at the idf of a term in
   * no document. A record's score over this is how much of the question it covers (relevance.ts).
   */
  ceiling(terms: ReadonlyMap<string, number>, options: FullTextQueryOptions): number;
  /** A passage's terms with their counts, and its length in terms (for pseudo-relevance feedback). */
  passageTerms(chunk: number): { terms: Map<string, number>; length: number };
}

function buildField(documents: readonly string[][]): FieldData {
  const index = new Map<string, number[]>();
  const lengths: number[] = [];
  documents.forEach((tokens, doc) => {
    lengths.push(tokens.length);
    const counts = new Map<string, number>();
    for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
    for (const [term, tf] of counts) {
      let list = index.get(term);
      if (!list) index.set(term, (list = []));
      list.push(doc, tf);
    }
  });
  const terms = [...index.keys()].sort();
  return { lengths, terms, postings: terms.map((term) => index.get(term)!) };
}

export interface FullTextBuildInput {
  /** Records, whose indices the passages name. */
  recordCount: number;
  /** Passages: record index and text. */
  chunks: readonly { record: number; text: string }[];
  stemming?: boolean;
  stopWords?: boolean;
}

export async function buildBm25Data(input: FullTextBuildInput): Promise<FullTextData> {
  const stemming = input.stemming ?? true;
  const stopWords = input.stopWords ?? true;
  const tokenize = await createTermTokenizer({ stemming, stopWords });
  return {
    format: FULL_TEXT_FORMAT,
    stemming,
    stopWords,
    recordCount: input.recordCount,
    chunkRecords: input.chunks.map((chunk) => chunk.record),
    text: buildField(input.chunks.map((chunk) => tokenize(chunk.text))),
  };
}

/** A field in typed arrays: term i's postings are postings[offsets[i] .. offsets[i + 1]). */
export interface PackedField {
  lengths: Uint32Array;
  terms: string[];
  offsets: Uint32Array;
  postings: Uint32Array;
}

/** The index as typed arrays: what the binary file holds, and what the server keeps. */
export interface PackedFullText {
  stemming: boolean;
  stopWords: boolean;
  recordCount: number;
  chunkRecords: Uint32Array;
  text: PackedField;
}

function packField(field: FieldData): PackedField {
  const offsets = new Uint32Array(field.terms.length + 1);
  field.postings.forEach((list, i) => (offsets[i + 1] = offsets[i]! + list.length));
  const postings = new Uint32Array(offsets[field.terms.length]!);
  field.postings.forEach((list, i) => postings.set(list, offsets[i]!));
  return { lengths: Uint32Array.from(field.lengths), terms: field.terms, offsets, postings };
}

export function packFullText(data: FullTextData): PackedFullText {
  return {
    stemming: data.stemming,
    stopWords: data.stopWords,
    recordCount: data.recordCount,
    chunkRecords: Uint32Array.from(data.chunkRecords),
    text: packField(data.text),
  };
}

/**
 * The artifact file (data/search/fulltext.bin): "PBM25\0\0\2", a little-endian u32 header
 * length, the header as JSON (format, flags, records, terms, array lengths), zero padding to a
 * multiple of 4, then the u32 arrays one after the other: chunkRecords, and the passages'
 * lengths, offsets, postings. Loading makes views of the file's bytes: no JSON arrays of
 * numbers, no copies. Version 1 also held a title field: it is refused (rebuild), and a build
 * over it indexes every passage again.
 */
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;
const MAGIC = Buffer.from('PBM25\0\0\u0002', 'latin1');
export const FULL_TEXT_BINARY_FORMAT = 'polyphony-bm25-bin@2';

interface BinaryHeader {
  format: typeof FULL_TEXT_BINARY_FORMAT;
  stemming: boolean;
  stopWords: boolean;
  recordCount: number;
  textTerms: string[];
  /** Element counts of the u32 arrays, in file order. */
  arrays: number[];
}

export function encodeFullText(data: FullTextData | PackedFullText): Uint8Array {
  const packed = isFullTextData(data) ? packFullText(data) : data;
  const arrays = [packed.chunkRecords, packed.text.lengths, packed.text.offsets, packed.text.postings];
  const header: BinaryHeader = {
    format: FULL_TEXT_BINARY_FORMAT,
    stemming: packed.stemming,
    stopWords: packed.stopWords,
    recordCount: packed.recordCount,
    textTerms: packed.text.terms,
    arrays: arrays.map((array) => array.length),
  };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const start = Math.ceil((MAGIC.length + 4 + json.length) / 4) * 4;
  const out = Buffer.alloc(start + arrays.reduce((sum, array) => sum + array.length * 4, 0));
  MAGIC.copy(out, 0);
  out.writeUInt32LE(json.length, MAGIC.length);
  json.copy(out, MAGIC.length + 4);
  let at = start;
  for (const array of arrays) {
    // The file is little-endian: on a little-endian machine (all Node runs on, in practice) the bytes copy as they are.
    if (LITTLE_ENDIAN) out.set(new Uint8Array(array.buffer, array.byteOffset, array.byteLength), at);
    else for (let i = 0; i < array.length; i++) out.writeUInt32LE(array[i]!, at + i * 4);
    at += array.length * 4;
  }
  return out;
}

/** Reads the artifact file's bytes (see encodeFullText) into typed views of them. */
export function decodeFullText(bytes: Uint8Array): PackedFullText {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.length < MAGIC.length + 4 || !buffer.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new Error('the full-text index is not in the current format: rebuild with `npm run build:data`');
  }
  const length = buffer.readUInt32LE(MAGIC.length);
  const header = JSON.parse(buffer.subarray(MAGIC.length + 4, MAGIC.length + 4 + length).toString('utf8')) as BinaryHeader;
  if (header.format !== FULL_TEXT_BINARY_FORMAT) throw new Error(`full-text index format ${String(header.format)} is not ${FULL_TEXT_BINARY_FORMAT}: rebuild`);
  let at = Math.ceil((MAGIC.length + 4 + length) / 4) * 4;
  const total = header.arrays.reduce((sum, count) => sum + count * 4, 0);
  if (at + total !== buffer.length) throw new Error('the full-text index file is truncated or corrupt: rebuild');
  // Little-endian u32 views need 4-byte alignment; copy once when the bytes are not aligned.
  const aligned = (buffer.byteOffset + at) % 4 === 0 ? buffer : Buffer.from(buffer);
  const views = header.arrays.map((count) => {
    const view = new Uint32Array(aligned.buffer, aligned.byteOffset + at, count);
    at += count * 4;
    return view;
  });
  const [chunkRecords, textLengths, textOffsets, textPostings] = views as [Uint32Array, Uint32Array, Uint32Array, Uint32Array];
  return {
    stemming: header.stemming,
    stopWords: header.stopWords,
    recordCount: header.recordCount,
    chunkRecords,
    text: { lengths: textLengths, terms: header.textTerms, offsets: textOffsets, postings: textPostings },
  };
}

function loadField(field: PackedField): LoadedField {
  const lengths = Float64Array.from(field.lengths);
  const total = lengths.reduce((sum, length) => sum + length, 0);
  const postings = new Map<string, Uint32Array>();
  field.terms.forEach((term, i) => postings.set(term, field.postings.subarray(field.offsets[i]!, field.offsets[i + 1]!)));
  return { lengths, average: lengths.length > 0 ? total / lengths.length || 1 : 1, postings };
}

/** Passages scored at a time by the exhaustive path: their scores and norms fit a core's cache (256 KB). */
const PASSAGE_BLOCK = 16_384;

/** scoresPausing pauses after this many passages (about a millisecond of scoring). */
export const PAUSE_PASSAGES = 4 * PASSAGE_BLOCK;

export function isFullTextData(value: unknown): value is FullTextData {
  return typeof value === 'object' && value !== null && (value as { format?: unknown }).format === FULL_TEXT_FORMAT;
}

/**
 * A searchable index from the in-memory data (the build, experiments) or the packed file.
 * A passage's terms come from a compact forward index of every passage, built here
 * (forward-index.ts; about 0.36 of the postings' bytes): its text is not read again.
 */
export async function loadBm25Index(source: FullTextData | PackedFullText): Promise<FullTextIndex> {
  const data = isFullTextData(source) ? packFullText(source) : source;
  const tokenize = await createTermTokenizer({ stemming: data.stemming, stopWords: data.stopWords });
  const text = loadField(data.text);
  const chunkRecords = data.chunkRecords;
  const recordCount = data.recordCount;
  // What each passage holds, for the feedback: its likeliest words and the expanded query's
  // scores over a pool of passages (forward-index.ts).
  // Built in the WebAssembly kernel's memory where it runs, which then scores it (forward-kernel.ts).
  const kernel = createForwardKernel(data.text);
  const forward = { index: kernel?.index ?? compactForwardIndex(data.text), termIds: new Map(data.text.terms.map((term, id) => [term, id])), kernel };
  let passageScratch: Float64Array | undefined;
  // Length norms per parameters, shared by the exhaustive scores and those of given records.
  const norms: FieldCache = new Map();
  // The exhaustive scores, and the listed passages' through the postings, in the WebAssembly
  // kernel where it runs (passage-kernel.ts): the same sums.
  const passageKernel = createPassageKernel({ postings: data.text.postings, chunkRecords, recordCount, block: PASSAGE_BLOCK });
  const given = createGivenRecordScores(text, chunkRecords, recordCount, norms, forward, passageKernel);

  /**
   * Each allowed record's best passage score into `best`: the passages' sums (each term's
   * share added in query order), a block of passages at a time — every term's postings in the
   * block, then the block's best per record — so the block's scores and norms stay in cache
   * while a million passages' would not (about half the time at 1M; bench/README.md). A step
   * of the generator is a block: between two, the shared buffer of passage scores is all 0.
   */
  function* bestPassages(
    terms: ReadonlyMap<string, number>,
    parameters: Bm25Parameters,
    best: Float64Array,
    allowed: Uint8Array | undefined,
  ): Generator<void, void> {
    const lists = fieldTerms(text, terms, parameters, norms);
    const passageNorms = fieldCacheOf(text, parameters, norms).norms;
    const run = passageKernel?.begin(
      lists.map((term) => term.list),
      lists.map((term) => term.factor),
      passageNorms,
      normsKey(parameters),
      allowed,
    );
    if (run) {
      try {
        for (let start = 0; start < chunkRecords.length; start += PASSAGE_BLOCK) {
          run.step(start, Math.min(chunkRecords.length, start + PASSAGE_BLOCK));
          yield;
        }
        run.finish(best);
      } finally {
        run.release();
      }
      return;
    }
    const cursor = new Uint32Array(lists.length);
    // One buffer of passage scores for every query, zeroed as it is read: a fresh one the size
    // of the corpus costs more than the scoring on a large one.
    const chunkScores = (passageScratch ??= new Float64Array(chunkRecords.length));
    for (let start = 0; start < chunkRecords.length; start += PASSAGE_BLOCK) {
      const end = Math.min(chunkRecords.length, start + PASSAGE_BLOCK);
      for (let j = 0; j < lists.length; j++) {
        const { list, factor } = lists[j]!;
        let i = cursor[j]!;
        if (allowed) {
          for (; i < list.length && list[i]! < end; i += 2) {
            const doc = list[i]!;
            if (allowed[chunkRecords[doc]!] !== 1) continue;
            const tf = list[i + 1]!;
            chunkScores[doc] = chunkScores[doc]! + (factor * tf) / (tf + passageNorms[doc]!);
          }
        } else {
          for (; i < list.length && list[i]! < end; i += 2) {
            const doc = list[i]!;
            const tf = list[i + 1]!;
            chunkScores[doc] = chunkScores[doc]! + (factor * tf) / (tf + passageNorms[doc]!);
          }
        }
        cursor[j] = i;
      }
      // The block's best per record, kept in a register while a record's passages run on
      // (they are consecutive but for a grown index's, which this reads correctly too).
      let record = chunkRecords[start]!;
      let most = best[record]!;
      for (let chunk = start; chunk < end; chunk++) {
        if (chunkRecords[chunk] !== record) {
          best[record] = most;
          record = chunkRecords[chunk]!;
          most = best[record]!;
        }
        const score = chunkScores[chunk]!;
        most = score > most ? score : most;
      }
      best[record] = most;
      chunkScores.fill(0, start, end);
      yield;
    }
  }

  const queryTerms = (query: string) => weightedQueryTerms(tokenize(query));

  return {
    passages: chunkRecords.length,
    scoresOf: (query, options, records) => given.scoresOf(typeof query === 'string' ? queryTerms(query) : query, options, records),
    ceiling(terms, options) {
      let total = 0;
      for (const [term, weight] of terms) total += weight * bm25Idf(text.lengths.length, (text.postings.get(term)?.length ?? 0) / 2) * (options.text.k1 + 1);
      return total;
    },
    queryTerms,
    passageTerms(chunk) {
      const terms = new Map<string, number>();
      forEachPassageTerm(forward.index, data.text, chunk, (term, count) => terms.set(data.text.terms[term]!, count));
      return { terms, length: text.lengths[chunk]! };
    },
    scores(query, options, allowed) {
      const terms = typeof query === 'string' ? queryTerms(query) : query;
      const best = new Float64Array(recordCount);
      if (terms.size === 0) return best;
      const blocks = bestPassages(terms, options.text, best, allowed);
      while (!blocks.next().done);
      return best;
    },
    async scoresPausing(query, options, allowed, pause) {
      const terms = typeof query === 'string' ? queryTerms(query) : query;
      const best = new Float64Array(recordCount);
      if (terms.size === 0) return best;
      // Another question's run paused between its blocks holds the kernel: this one waits its
      // turn rather than score in JavaScript on the same thread, twice as slow (1M passages, 8
      // questions at a time over HTTP, their embeddings cached, every one let in: 21.6 → 23.2
      // answered a second; bench/README.md, session 16).
      while (passageKernel?.busy) await passageKernel.released();
      const blocks = bestPassages(terms, options.text, best, allowed);
      try {
        for (let passages = PASSAGE_BLOCK; !blocks.next().done; passages += PASSAGE_BLOCK) if (passages % PAUSE_PASSAGES === 0) await pause();
      } finally {
        blocks.return(); // a pause that failed leaves no run holding the kernel
      }
      return best;
    },
  };
}

/**
 * A query's distinct terms, each weighted by how often the query says it, in query order (one
 * weight a term once or 1 + ln(count) were measured below it on ArguAna and left the tree, issue 44).
 */
function weightedQueryTerms(tokens: readonly string[]): Map<string, number> {
  const terms = new Map<string, number>();
  for (const term of tokens) terms.set(term, (terms.get(term) ?? 0) + 1);
  return terms;
}
