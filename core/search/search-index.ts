/**
 * Hybrid retrieval over works and Atlas records: a flat Float32 cosine scan over chunk
 * vectors plus BM25 (bm25.ts), fused per record, filtered before ranking, then re-ranked
 * for diversity of voices. Pure given its inputs (vectors, index, query embedder).
 */
import type { Embedder } from '../ports/embedder.ts';
import type { ApproximateVectorIndex, RemoteCodes, RemoteNear } from '../ports/vector-index.ts';
import type { SharedCodes } from './binary-scan.ts';
import type { Bm25Parameters, FullTextIndex, FullTextQueryOptions } from './bm25.ts';
import { APPROXIMATE_FROM, approximatePathApplies, CODES_BELOW, createChunkScan, QUANTIZE_FROM, type ChunkScan, type CosinePopulation } from './chunk-scan.ts';
import type { ScoredRecord, SearchFilters, SearchMeta, SearchRecord } from './types.ts';
import { gather, nthLargest } from './select.ts';
import { embeddingModel } from './embedding-model.ts';
import { calibratedRelevance, DEFAULT_RELEVANCE_MODEL, signalsOf, type RelevanceModel } from './relevance.ts';
import { createVectorScanner, type ScanKernel, type SharedScan, type VectorScanner, type VectorSource } from './vector-scan.ts';
import { feedbackQuery } from './lexical-feedback.ts';
import { createAdmission, DEFAULT_SEARCH_SLOTS } from './admission.ts';
import { bestOf, fuseScope, gatherScope, rankByWords, sparseScope, type FusionScope, type WordRanking } from './fusion.ts';
import { vectorsUnavailable, type VectorsUnavailable } from './vectors.ts';

export { nthLargest } from './select.ts';
export { embeddingModel } from './embedding-model.ts';

export interface SearchOptions {
  filters?: SearchFilters;
  limit?: number;
  /** Overrides the tuning's similarity floor for this call (glyphs widen or narrow it). */
  similarityFloor?: number;
  /**
   * Called, instead of the search failing, when the question's embedding fails or misses its
   * deadline: the search then answers from the words alone (`searchByWords`, vectors.ts). Without
   * it such a failure rejects the search, as it always did: the build's probe and the relevance
   * calibration must not measure a words-only search unawares.
   */
  onVectorsUnavailable?: (unavailable: VectorsUnavailable) => void;
}

export interface SearchTuning {
  /** Weight of the vector side in the fused score; the rest is the BM25 side. */
  vectorWeight: number;
  /**
   * How the two sides are put on one scale before mixing:
   * - `zscore` (the default at every size): each side as standard scores over the allowed
   *   records, the mix then scaled to [0, 1] over them (score-normalisation.ts);
   * - `max`: cosine as is, BM25 divided by the best BM25 of the query. Each record's score reads
   *   its own cosine only, so the approximate path's re-scored shortlist gives the exact scan's
   *   scores: the reference the tests compare the two paths by. Min-max and reciprocal-rank
   *   fusion, measured below z-scores on ArguAna (bench/README.md), left the tree (issue 44).
   */
  fusion: 'max' | 'zscore';
  /**
   * BM25 of passages (a work's begin with its title). A field of titles alone, weighted into the
   * record's score, was 0 at every size measured and left the tree (issue 44).
   */
  bm25: Bm25Parameters;
  /**
   * Pseudo-relevance feedback on the vector side (Rocchio): the query vector plus `weight`
   * times the mean vector of the first `docs` records of a first fused ranking; 0 docs = off.
   * The reported similarity and the floors always use the query's own cosine.
   */
  feedbackDocs: number;
  feedbackWeight: number;
  /**
   * Pseudo-relevance feedback on the BM25 side (RM3, lexical-feedback.ts): the likeliest
   * `lexicalFeedbackTerms` words of the same first records' best passages join the query with
   * `lexicalFeedbackWeight` of its weight; 0 terms = off. The floors keep the query's own BM25.
   */
  lexicalFeedbackTerms: number;
  lexicalFeedbackWeight: number;
  /** The feedback scan rescores the first ranking's best this-many records (all on a smaller corpus). */
  feedbackPool: number;
  /**
   * From this many chunks on, the vector side takes a shortlist from the approximate index
   * (when the artifacts hold one) and re-scores it exactly; below, it scans every chunk.
   */
  approximateFrom: number;
  /**
   * From this many chunks on, where the approximate path applies, the rows are held as int8 with a
   * scale each (vector-scan.ts): a quarter of float32's memory; cosines within a few thousandths,
   * recall@10 measured (bench/README.md). Below, float32: the exact scan's cosines bit for bit.
   */
  quantizeFrom: number;
  /**
   * Chunks asked of the approximate index per scan. Deep enough for the feedback pool: the
   * first ranking's best `feedbackPool` records are chosen by their cosines too, and with the
   * cosines of fewer chunks the pool (and so the ranking) drifts from the exact scan's; ArguAna
   * through this path equals the exact one at 4,000 and is 0.004 below at 256 (bench/README.md).
   */
  approximateShortlist: number;
  /** The best records by words whose chunks are re-scored too, per scan (their cosines are never guessed). */
  approximateWordRecords: number;
  /**
   * Below this many chunks the approximate path's shortlist is the nearest binary codes by a whole
   * scan rather than the index's graph (binary-scan.ts); 0 always asks the graph.
   */
  approximateCodesBelow: number;
  /** Records whose cosine similarity is below this are off-topic unless lexically strong. */
  similarityFloor: number;
  /** Below the floor, a record still passes with this much cosine and a strong word match. */
  assistedFloor: number;
  /** BM25 relative to the query's best that counts as a strong word match. */
  lexicalFloor: number;
  /** Multiplier applied per already-chosen record sharing the first contributor. */
  diversityPenalty: number;
  candidates: number;
  /**
   * On the approximate path under z-scores, fuse only the records either side ranks (the
   * index's shortlist and BM25's best k) and the rest through their totals, when that gives the
   * same ranking (fusion.ts); off fuses every allowed record, the reference it is tested against.
   */
  sparseFusion: boolean;
  /**
   * Apply the similarity floors (default). A benchmark run turns them off: it ranks every
   * document, while the API must be able to answer "nothing relevant".
   */
  floors: boolean;
}

/**
 * The engine's default, for a corpus the build could not probe (ADR 0023): the build chooses
 * `vectorWeight` and whether the feedback runs per corpus (retrieval-choice.ts) and the loader
 * sets them over these. Chosen on half A of BEIR ArguAna dev (z-score fusion at 0.6, 80 lexical
 * feedback terms); on half B, never tuned on, nDCG@10 0.5970 (BM25 alone 0.5512), and on
 * SciFact train's half B 0.6474, below BM25 alone (0.6611) — why the choice is per corpus
 * (bench/README.md, "Retrieval quality across corpora"). The floors are the service's own and
 * not measured there; calibrated relevance (relevance.ts) reads the query's own cosine and
 * BM25, whatever the fusion.
 */
export const DEFAULT_TUNING: SearchTuning = {
  vectorWeight: 0.6,
  fusion: 'zscore',
  bm25: { k1: 1.5, b: 1 },
  feedbackDocs: 3,
  feedbackWeight: 1,
  lexicalFeedbackTerms: 80,
  lexicalFeedbackWeight: 0.3,
  feedbackPool: 2000,
  approximateWordRecords: 256,
  approximateFrom: APPROXIMATE_FROM,
  quantizeFrom: QUANTIZE_FROM,
  approximateShortlist: 4000,
  approximateCodesBelow: CODES_BELOW,
  similarityFloor: 0.3,
  assistedFloor: 0.22,
  lexicalFloor: 0.5,
  diversityPenalty: 0.85,
  candidates: 100,
  sparseFusion: true,
  floors: true,
};

export interface SearchIndex {
  readonly records: readonly SearchRecord[];
  readonly chunkCount: number;
  readonly embedder: Embedder;
  /** Which vector scan kernel runs (vector-scan.ts). */
  readonly kernel: ScanKernel;
  /** How calibrated relevance is read from the signals, and its floors (relevance.ts). */
  readonly relevance: RelevanceModel;
  /** Whether the vector side goes through the approximate index (chunk-scan.ts). */
  readonly approximate: boolean;
  /** On the approximate path, where its shortlist comes from: the index's graph, or a scan of binary codes. */
  readonly shortlistFrom: 'index' | 'codes' | undefined;
  /** Questions waiting their turn to be scored (admission.ts): a backlog an operator watches. */
  readonly waiting: number;
  byId(id: string): SearchRecord | undefined;
  search(query: string, options?: SearchOptions): Promise<ScoredRecord[]>;
  /**
   * Cosine scan alone, used by the Atlas search endpoint. With `onVectorsUnavailable`, a failed
   * or late question embedding gives the records' BM25 relative to the best one's instead.
   */
  similar(
    query: string,
    predicate: (record: SearchRecord) => boolean,
    k: number,
    options?: Pick<SearchOptions, 'onVectorsUnavailable'>,
  ): Promise<{ record: SearchRecord; score: number }[]>;
}

export interface SearchIndexInput {
  meta: SearchMeta;
  /** Chunk vectors in meta.chunk_records order, or a source that reads them (a file). */
  vectors: Float32Array | VectorSource;
  fullText: FullTextIndex;
  embedder: Embedder;
  tuning?: Partial<SearchTuning>;
  /** Force the scan kernel (benchmarks); default: WebAssembly SIMD where it runs. */
  kernel?: ScanKernel;
  /** The calibration of relevance (relevance.ts); default DEFAULT_RELEVANCE_MODEL. */
  relevance?: RelevanceModel;
  /** The approximate index over the same chunk vectors (keys = chunk numbers), when the build made one. */
  approximate?: ApproximateVectorIndex;
  /** Questions scored at once, the others waiting their turn (admission.ts); default DEFAULT_SEARCH_SLOTS. */
  searchSlots?: number;
}

/** Lets the event loop take what came meanwhile (a message from a worker), then goes on. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** What the first ranking of a search leaves for the feedback ranking. */
interface FirstRanking {
  queryVector: Float32Array;
  queryTerms: ReadonlyMap<string, number>;
  similarity: Float32Array;
  lexical: Float64Array;
  /** Per record, the chunk of its best cosine (-1 where none). */
  bestChunk: Int32Array;
  mask: Uint8Array;
  allowed: Uint32Array;
  population: CosinePopulation | undefined;
  /** On the approximate path: the records with a cosine, and the ranking by words. */
  scored?: Uint32Array | undefined;
  words?: WordRanking | undefined;
}

/** The build's pieces must describe the same passages, embedded by the query's model. */
function checkInputs(input: SearchIndexInput, chunks: number): void {
  const dims = input.meta.embedder.dims;
  const floats = input.vectors instanceof Float32Array ? input.vectors.length : input.vectors.floats;
  if (floats !== chunks * dims) throw new Error(`search vectors hold ${floats / dims} chunks, meta lists ${chunks}`);
  if (embeddingModel(input.embedder.id) !== embeddingModel(input.meta.embedder.id)) {
    throw new Error(`index was embedded with ${input.meta.embedder.id}, the query embedder is ${input.embedder.id}: rebuild`);
  }
  if (input.fullText.passages !== chunks) throw new Error(`full-text index holds ${input.fullText.passages} passages, meta lists ${chunks}: rebuild`);
}

/** Every record allowed, computed once (most searches have no filters), or the filters' records. */
function allowedRecordsOf(
  records: readonly SearchRecord[],
): (filters: SearchFilters | undefined) => { mask: Uint8Array; allowed: Uint32Array; every: boolean } {
  let unfiltered: { mask: Uint8Array; allowed: Uint32Array; every: boolean } | undefined;
  return (filters) => {
    const filtered = filters && (filters.layers || filters.rings || filters.evidence || (filters.excludeIds && filters.excludeIds.size > 0));
    if (!filtered) return (unfiltered ??= { mask: new Uint8Array(records.length).fill(1), allowed: Uint32Array.from(records.keys()), every: true });
    const mask = allowedMask(records, filters);
    const allowed = allowedList(mask);
    return { mask, allowed, every: allowed.length === records.length };
  };
}

/**
 * Whether the first ranking may take a sparse scope (fusion.ts; z-scores, tuning.sparseFusion).
 * A record outside it has no cosine: it can only be a candidate where the floors let a record
 * without one through, and then only above the feedback's pool or the first `keep`, which the
 * scope's check covers when the pool holds the candidates.
 */
function sparseApplies(tuning: SearchTuning, query: { allowed: number; keep: number; floor: number; feedback: boolean }): boolean {
  return (
    tuning.sparseFusion &&
    tuning.fusion === 'zscore' &&
    query.allowed > Math.max(tuning.feedbackPool, query.keep) &&
    (!tuning.floors || Math.min(query.floor, tuning.assistedFloor) > 0) &&
    (!query.feedback || tuning.feedbackPool >= query.keep)
  );
}

/**
 * The first fused ranking, over a sparse scope where it gives the same ranking (fusion.ts):
 * on the approximate path under z-scores, when the `needed` best (the feedback's pool, or the
 * candidates) are all in the scope and above every record outside it. Otherwise, and whenever
 * that check fails, over every allowed record.
 */
function firstRanking(tuning: SearchTuning, first: FirstRanking, sparse: boolean, needed: number): { scope: FusionScope; fused: Float64Array } {
  if (sparse && first.population && first.scored && first.words) {
    const scope = sparseScope(first.allowed.length, first.scored, first.words, first.similarity, first.lexical);
    const fused = fuseScope(tuning, scope, first.population);
    const n = scope.members.length;
    if (scope.rest?.count === 0 || (n >= needed && nthLargest(fused.scores.slice(), needed) > fused.restBound)) return { scope, fused: fused.scores };
  }
  const scope = gatherScope(first.allowed, first.similarity, first.lexical);
  return { scope, fused: fuseScope(tuning, scope, first.population).scores };
}

/**
 * The feedback's pool: the members of the `size` best first scores (ties at the cut included),
 * or every member (`size` undefined), as positions among the members, records, and a mask.
 */
function feedbackPool(
  members: Uint32Array,
  fused: Float64Array,
  size: number | undefined,
  mask: Uint8Array,
): { poolAt: number[]; poolRecords: Uint32Array; pool: Uint8Array } {
  const threshold = size === undefined ? -Infinity : nthLargest(fused.slice(), Math.min(size, fused.length));
  const poolAt: number[] = [];
  fused.forEach((score, at) => {
    if (score >= threshold) poolAt.push(at);
  });
  const poolRecords = new Uint32Array(poolAt.length);
  poolAt.forEach((at, i) => (poolRecords[i] = members[at]!));
  if (size === undefined) return { poolAt, poolRecords, pool: mask };
  const pool = new Uint8Array(mask.length);
  for (const record of poolRecords) pool[record] = 1;
  return { poolAt, poolRecords, pool };
}

export function createSearchIndex(input: SearchIndexInput): SearchIndex {
  const { meta, fullText, embedder } = input;
  const relevance = input.relevance ?? DEFAULT_RELEVANCE_MODEL;
  const tuning: SearchTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const dims = meta.embedder.dims;
  const chunkRecords = Uint32Array.from(meta.chunk_records);
  const records = meta.records;
  const indexById = new Map(records.map((record, index) => [record.id, index]));
  checkInputs(input, chunkRecords.length);
  const admission = createAdmission(input.searchSlots ?? DEFAULT_SEARCH_SLOTS);
  // From quantizeFrom on, the approximate path holds its rows as int8 (vector-scan.ts): a quarter of the memory.
  const quantized =
    input.approximate !== undefined && approximatePathApplies(chunkRecords.length, tuning.approximateFrom) && chunkRecords.length >= tuning.quantizeFrom;
  const scanner = createVectorScanner(input.vectors, dims, { kernel: input.kernel, precision: quantized ? 'i8' : 'f32' });
  const fullTextOptions = { text: tuning.bm25 };
  // Records the ranking by words keeps: the first ranking's pool and candidates, the shortlist's word records.
  const wordsRanked = Math.max(tuning.candidates, tuning.feedbackPool, tuning.approximateWordRecords);
  const chunkScan = createChunkScan({
    scanner,
    chunkRecords,
    recordCount: records.length,
    approximate: input.approximate,
    approximateFrom: tuning.approximateFrom,
    shortlist: tuning.approximateShortlist,
    wordRecords: tuning.approximateWordRecords,
    codesBelow: tuning.approximateCodesBelow,
    chunkKeys: meta.chunk_keys ? Uint32Array.from(meta.chunk_keys) : undefined,
    // Where the index answers from another thread, that thread scores the feedback's vectors too.
    remoteDots: scanner.shared && input.approximate?.shareScan?.(scanner.shared),
    shareCodes: sharedCodes(input.approximate, scanner.shared),
    shareNear: sharedNear(input.approximate, scanner.shared),
  });

  // Every allowed record's BM25 (bm25.ts `scores()`). Only where the approximate index serves (it
  // may answer from another thread) is there something to pause for while the passages are scored.
  const scoreWords = (query: string, allowed: Uint8Array | undefined) =>
    chunkScan.approximate
      ? fullText.scoresPausing(query, fullTextOptions, allowed, nextTurn)
      : Promise.resolve(fullText.scores(query, fullTextOptions, allowed));

  const allowedRecords = allowedRecordsOf(records);
  const feedbackContext: FeedbackContext = { records, tuning, chunkScan, scanner, fullText, fullTextOptions };

  async function embedQuery(query: string): Promise<Float32Array> {
    const [vector] = await embedder.embed([query]);
    return vector!;
  }

  return {
    records,
    chunkCount: chunkRecords.length,
    embedder,
    kernel: scanner.kernel,
    relevance,
    approximate: chunkScan.approximate,
    shortlistFrom: chunkScan.shortlistFrom,
    get waiting() {
      return admission.waiting;
    },
    byId: (id) => {
      const index = indexById.get(id);
      return index === undefined ? undefined : records[index];
    },

    async search(query, options = {}) {
      const limit = options.limit ?? 8;
      const floor = options.similarityFloor ?? tuning.similarityFloor;
      const keep = Math.max(tuning.candidates, limit);
      // The question is embedded (on a worker thread, in the server) while the words are scored here.
      const embedding = embedQuery(query);
      embedding.catch(() => undefined); // awaited below; this only keeps a failure from being reported twice
      // One turn of the microtask queue first: the worker pool sends what was asked together from
      // a microtask (providers/embedder.ts), which would otherwise wait for the scoring below and
      // embed after it, not beside it (bench/README.md, "The embedding beside the words").
      await Promise.resolve();
      // The question waits its turn here, its embedding under way (batched with the others waiting).
      return admission.run(async () => {
        const { mask, allowed, every } = allowedRecords(options.filters);
        // The approximate index is asked as soon as the vector comes: where it answers from another
        // thread (the server's), it searches while the words are scored here, which pauses for it.
        const shortlist = chunkScan.approximate ? embedding.then((vector) => chunkScan.shortlist(vector, mask)) : undefined;
        shortlist?.catch(() => undefined);
        const queryTerms = fullText.queryTerms(query);
        const lexical = await scoreWords(query, every ? undefined : mask);
        // The best records by words, for the vector side's shortlist and the first ranking's scope.
        const words = chunkScan.approximate ? rankByWords(allowed, lexical, wordsRanked) : undefined;
        const queryVector = await embedding.catch((error: unknown) => {
          if (!options.onVectorsUnavailable) throw error;
          options.onVectorsUnavailable(vectorsUnavailable(error));
          return undefined;
        });
        if (!queryVector) return searchByWords(records, allowed, lexical, fullText.ceiling(queryTerms, fullTextOptions), { keep, limit, tuning, relevance });
        const cosines = await chunkScan.scan(queryVector, mask, words && bestOf(words, lexical, tuning.approximateWordRecords), shortlist);
        const { best: similarity, bestChunk, population } = cosines;
        const feedback = tuning.feedbackDocs > 0 && (tuning.feedbackWeight > 0 || tuning.lexicalFeedbackTerms > 0);
        const first: FirstRanking = {
          queryVector,
          queryTerms,
          similarity,
          lexical,
          bestChunk,
          mask,
          allowed,
          population,
          scored: cosines.scored,
          words,
        };
        const sparse = sparseApplies(tuning, { allowed: allowed.length, keep, floor, feedback });
        const { scope, fused: firstFused } = firstRanking(tuning, first, sparse, feedback ? tuning.feedbackPool : keep);
        const fused = feedback ? await rankWithFeedback(feedbackContext, first, scope, firstFused) : firstFused;

        const candidates = scoredCandidates(
          records,
          scope,
          fused,
          fullText.ceiling(queryTerms, fullTextOptions),
          (cosine, lexicalScore) =>
            tuning.floors && cosine < floor && !(cosine >= Math.min(floor, tuning.assistedFloor) && lexicalScore >= tuning.lexicalFloor),
          keep,
        );
        return returned(candidates, keep, limit, tuning.diversityPenalty, relevance);
      });
    },

    async similar(query, predicate, k, options = {}) {
      const mask = new Uint8Array(records.length);
      records.forEach((record, index) => (mask[index] = predicate(record) ? 1 : 0));
      const queryVector = await embedQuery(query).catch((error: unknown) => {
        if (!options.onVectorsUnavailable) throw error;
        options.onVectorsUnavailable(vectorsUnavailable(error));
        return undefined;
      });
      if (!queryVector) return similarByWords(records, mask, fullText.scores(query, fullTextOptions, mask), k);
      const { best: similarity } = await chunkScan.scan(queryVector, mask);
      return bestHits(records, mask, similarity, k, () => true);
    },
  };
}

/** The `k` best of the masked records by `scores` (those `keep` admits), ties by id, rounded. */
function bestHits(
  records: readonly SearchRecord[],
  mask: Uint8Array,
  scores: ArrayLike<number>,
  k: number,
  keep: (score: number) => boolean,
): { record: SearchRecord; score: number }[] {
  const hits: { record: SearchRecord; score: number }[] = [];
  for (let index = 0; index < records.length; index++)
    if (mask[index] === 1 && keep(scores[index]!)) hits.push({ record: records[index]!, score: scores[index]! });
  hits.sort((a, b) => b.score - a.score || (a.record.id < b.record.id ? -1 : 1));
  return hits.slice(0, k).map((hit) => ({ ...hit, score: round(hit.score) }));
}

/** `similar` without the question's vector: the records' BM25 over the best one's (1), records no word matches left out. */
function similarByWords(records: readonly SearchRecord[], mask: Uint8Array, lexical: Float64Array, k: number): { record: SearchRecord; score: number }[] {
  let best = 0;
  for (let index = 0; index < lexical.length; index++) if (mask[index] === 1 && lexical[index]! > best) best = lexical[index]!;
  const relative = lexical.map((score) => (best > 0 ? score / best : 0));
  return bestHits(records, mask, relative, k, (score) => score > 0);
}

/**
 * A search without the question's vector (vectors.ts): the vector side weighted 0, so the ranking
 * is BM25's (relative to the question's best word match, what z-scores of one side come to), no
 * feedback (the words' feedback reads the best passages by cosine), no shortlist, every cosine 0
 * (not measured). A record no word of the question matches is not returned: without a cosine, a
 * shared word is the only evidence there is. Its calibrated relevance reads the words alone (a
 * cosine of 0); the floors on it are the caller's to skip (retrieve.ts).
 */
function searchByWords(
  records: readonly SearchRecord[],
  allowed: Uint32Array,
  lexical: Float64Array,
  ceiling: number,
  options: { keep: number; limit: number; tuning: SearchTuning; relevance: RelevanceModel },
): ScoredRecord[] {
  const matching = allowed.filter((record) => lexical[record]! > 0);
  const scope = gatherScope(matching, new Float32Array(records.length), lexical);
  let best = 0;
  for (const score of scope.lexical) if (score > best) best = score;
  const fused = scope.lexical.map((score) => score / best);
  const candidates = scoredCandidates(records, scope, fused, ceiling, () => false, options.keep);
  return returned(candidates, options.keep, options.limit, options.tuning.diversityPenalty, options.relevance);
}

/** The index's thread's scan of the binary codes, over the scan kernel's memory, where it offers one. */
function sharedCodes(approximate: ApproximateVectorIndex | undefined, shared: SharedScan | undefined): ((codes: SharedCodes) => RemoteCodes) | undefined {
  const share = approximate?.shareCodes?.bind(approximate);
  return share && shared ? (codes) => share(codes, shared) : undefined;
}

function sharedNear(approximate: ApproximateVectorIndex | undefined, shared: SharedScan | undefined): (() => RemoteNear) | undefined {
  const share = approximate?.shareNear?.bind(approximate);
  return share && shared ? () => share(shared) : undefined;
}

/** What the feedback ranking reads of its search index. */
interface FeedbackContext {
  records: readonly SearchRecord[];
  tuning: SearchTuning;
  chunkScan: ChunkScan;
  scanner: VectorScanner;
  fullText: FullTextIndex;
  fullTextOptions: FullTextQueryOptions;
}

/**
 * The second ranking of pseudo-relevance feedback, from the first one's best records' best
 * passages: on the vector side (Rocchio) the query vector moved towards them, on the BM25
 * side (RM3) the query with their likeliest words added. It covers the first ranking's best
 * `feedbackPool` records only: a record ranked below them is not pulled into the results
 * by feedback (it keeps its first score, less 2), and on a large corpus this halves the
 * scanning. Scores per member of the scope.
 */
async function rankWithFeedback(index: FeedbackContext, first: FirstRanking, scope: FusionScope, fused: Float64Array): Promise<Float64Array> {
  const { records, tuning, chunkScan, scanner, fullText, fullTextOptions } = index;
  const { members } = scope;
  const top = topIndices(records, members, fused, tuning.feedbackDocs).filter((at) => first.bestChunk[members[at]!]! >= 0);
  const chunks = top.map((at) => first.bestChunk[members[at]!]!);
  const whole = first.allowed.length <= tuning.feedbackPool;
  const { poolAt, poolRecords, pool } = feedbackPool(members, fused, whole ? undefined : tuning.feedbackPool, first.mask);
  // The vectors' side asked first: where the index's thread takes it, the words are scored meanwhile.
  const vectorSide =
    tuning.feedbackWeight > 0
      ? chunkScan.scanPool(feedbackVector(first.queryVector, scanner.rowsOf(chunks), chunks.length, tuning.feedbackWeight), pool, poolRecords)
      : undefined;
  vectorSide?.catch(() => undefined); // awaited below; this only keeps a failure from being reported twice
  const lexical = feedbackLexical(fullText, tuning, fullTextOptions, { chunks, queryTerms: first.queryTerms, whole, pool, poolRecords });
  const similarity = vectorSide ? (await vectorSide).best : first.similarity;
  const poolScope = gatherScope(poolRecords, similarity, lexical && whole ? lexical : first.lexical);
  if (lexical && !whole) poolScope.lexical = lexical;
  const rescored = fuseScope(tuning, poolScope).scores;
  const second = lowered(fused); // each stays below every pooled record
  poolAt.forEach((at, i) => (second[at] = rescored[i]!));
  return second;
}

/**
 * BM25 of the feedback's expanded query (RM3: the likeliest words of the first ranking's best
 * passages added), over every record when the pool is all of them, else over the pool's records
 * alone (galloping through the postings: its many frequent words would otherwise read most of
 * the index; the same scores). Nothing when the lexical feedback is off.
 */
function feedbackLexical(
  fullText: FullTextIndex,
  tuning: SearchTuning,
  options: FullTextQueryOptions,
  feedback: { chunks: readonly number[]; queryTerms: ReadonlyMap<string, number>; whole: boolean; pool: Uint8Array; poolRecords: Uint32Array },
): Float64Array | undefined {
  if (tuning.lexicalFeedbackTerms <= 0 || tuning.lexicalFeedbackWeight <= 0) return undefined;
  const expanded = feedbackQuery(fullText, feedback.chunks, feedback.queryTerms, tuning.lexicalFeedbackTerms, tuning.lexicalFeedbackWeight);
  return feedback.whole ? fullText.scores(expanded, options, feedback.pool) : fullText.scoresOf(expanded, options, feedback.poolRecords);
}

/** A record retrieval ranks, before its calibrated relevance is read (only the returned ones get it). */
type Candidate = Omit<ScoredRecord, 'calibrated' | 'signals'>;

/** The best `keep` candidates diversified down to `limit`, rounded, with calibrated relevance (read for these only). */
function returned(candidates: Candidate[], keep: number, limit: number, diversityPenalty: number, relevance: RelevanceModel): ScoredRecord[] {
  candidates.sort((a, b) => b.relevanceScore - a.relevanceScore || (a.record.id < b.record.id ? -1 : 1));
  return diversify(candidates.slice(0, keep), limit, diversityPenalty).map((hit) => ({
    ...hit,
    relevanceScore: round(hit.relevanceScore),
    similarity: round(hit.similarity),
    lexical: round(hit.lexical),
    coverage: round(hit.coverage),
    calibrated: round(calibratedRelevance(relevance, hit.similarity, hit.coverage)),
    signals: signalsOf(relevance, hit.similarity, hit.coverage),
  }));
}

/**
 * The allowed records that pass the similarity floors, each with its ranking score and its two
 * signals. `belowFloors(cosine, lexical)` says when a record is off-topic: words alone never
 * admit one ("baked into you" must not answer a bread recipe).
 */
function scoredCandidates(
  records: readonly SearchRecord[],
  scope: FusionScope,
  fused: Float64Array,
  ceiling: number,
  belowFloors: (cosine: number, lexical: number) => boolean,
  keep: number,
): Candidate[] {
  const { members, cosine, lexical } = scope;
  let maxLexical = 0;
  for (const score of lexical) if (score > maxLexical) maxLexical = score;
  const cosineOf = (at: number) => Math.max(0, cosine[at]!);
  const lexicalOf = (at: number) => (maxLexical > 0 ? lexical[at]! / maxLexical : 0);
  const passing: number[] = [];
  for (let at = 0; at < members.length; at++) if (!belowFloors(cosineOf(at), lexicalOf(at))) passing.push(at);
  // Only the `keep` best by the fused score (ties at the cut included) can be returned: a
  // million records do not become a million objects to sort.
  const cut = passing.length > keep ? nthLargest(gather(fused, passing), keep) : -Infinity;
  const candidates: Candidate[] = [];
  for (const at of passing) {
    if (fused[at]! < cut) continue;
    candidates.push({
      record: records[members[at]!]!,
      relevanceScore: fused[at]!,
      similarity: cosineOf(at),
      lexical: lexicalOf(at),
      coverage: ceiling > 0 ? Math.min(1, lexical[at]! / ceiling) : 0,
    });
  }
  return candidates;
}

/** 1 for each record the filters allow, 0 elsewhere. */
function allowedMask(records: readonly SearchRecord[], filters: SearchFilters | undefined): Uint8Array {
  const mask = new Uint8Array(records.length);
  records.forEach((record, index) => {
    const ok =
      (!filters?.layers || filters.layers.includes(record.layer)) &&
      (!filters?.rings || filters.rings.includes(record.ring)) &&
      (!filters?.evidence || filters.evidence.includes(record.evidence)) &&
      !filters?.excludeIds?.has(record.id);
    mask[index] = ok ? 1 : 0;
  });
  return mask;
}

/** The indices of a mask's 1s. */
function allowedList(mask: Uint8Array): Uint32Array {
  let count = 0;
  for (let index = 0; index < mask.length; index++) count += mask[index]!;
  const list = new Uint32Array(count);
  for (let index = 0, at = 0; index < mask.length; index++) if (mask[index] === 1) list[at++] = index;
  return list;
}

/** Positions of the k best-scoring members, best first; ties by record id. Linear for small k. */
function topIndices(records: readonly SearchRecord[], members: Uint32Array, scores: Float64Array, k: number): number[] {
  const better = (a: number, b: number) => scores[a]! > scores[b]! || (scores[a] === scores[b] && records[members[a]!]!.id < records[members[b]!]!.id);
  const top: number[] = [];
  for (let at = 0; at < scores.length; at++) {
    if (top.length === k && !better(at, top[k - 1]!)) continue;
    let position = top.length === k ? k - 1 : top.length;
    while (position > 0 && better(at, top[position - 1]!)) position--;
    top.splice(position, 0, at);
    if (top.length > k) top.pop();
  }
  return top;
}

/** The query vector moved towards the `count` given chunk vectors (one after another) by `weight` (shared among them), unit length again. */
function feedbackVector(queryVector: Float32Array, vectors: Float32Array, count: number, weight: number): Float32Array {
  const expanded = Float32Array.from(queryVector);
  const dims = queryVector.length;
  for (let chunk = 0; chunk < count; chunk++) {
    const offset = chunk * dims;
    for (let d = 0; d < dims; d++) expanded[d] = expanded[d]! + (weight / count) * vectors[offset + d]!;
  }
  let norm = 0;
  for (let d = 0; d < dims; d++) norm += expanded[d]! * expanded[d]!;
  norm = Math.sqrt(norm) || 1;
  for (let d = 0; d < dims; d++) expanded[d] = expanded[d]! / norm;
  return expanded;
}

/** Each score less 2 (in a loop: see gather). */
function lowered(scores: Float64Array): Float64Array {
  const out = new Float64Array(scores.length);
  for (let at = 0; at < scores.length; at++) out[at] = scores[at]! - 2;
  return out;
}

function round(value: number): number {
  return Math.round(value * 10000) / 10000;
}

/**
 * Greedy re-ranking: each pick lowers the score of candidates whose lead contributor was
 * already chosen, so five passages from one voice do not crowd out the others.
 */
export function diversify<T extends Pick<ScoredRecord, 'record' | 'relevanceScore'>>(candidates: readonly T[], limit: number, penalty: number): T[] {
  const pool = [...candidates];
  const chosen: T[] = [];
  const voiceCount = new Map<string, number>();
  while (chosen.length < limit && pool.length > 0) {
    let bestIndex = 0;
    let bestScore = -Infinity;
    pool.forEach((candidate, index) => {
      const voice = candidate.record.kind === 'divergence' ? `atlas:${candidate.record.id}` : (candidate.record.contributors[0] ?? '');
      const adjusted = candidate.relevanceScore * penalty ** (voiceCount.get(voice) ?? 0);
      if (adjusted > bestScore) {
        bestScore = adjusted;
        bestIndex = index;
      }
    });
    const [picked] = pool.splice(bestIndex, 1);
    const voice = picked!.record.kind === 'divergence' ? `atlas:${picked!.record.id}` : (picked!.record.contributors[0] ?? '');
    voiceCount.set(voice, (voiceCount.get(voice) ?? 0) + 1);
    chosen.push(picked!);
  }
  return chosen;
}
