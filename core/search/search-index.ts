/**
 * Hybrid retrieval over works and Atlas records: a flat Float32 cosine scan over chunk
 * vectors plus BM25 (bm25.ts), fused per record, filtered before ranking, then re-ranked
 * for diversity of voices. Pure given its inputs (vectors, index, query embedder).
 */
import type { Embedder } from '../ports/embedder.ts';
import type { ApproximateVectorIndex } from '../ports/vector-index.ts';
import type { Bm25Parameters, FullTextIndex } from './bm25.ts';
import { createLexicalSide } from './lexical-side.ts';
import { APPROXIMATE_FROM, createChunkScan, type CosinePopulation } from './chunk-scan.ts';
import type { ScoredRecord, SearchFilters, SearchMeta, SearchRecord } from './types.ts';
import { nthLargest } from './select.ts';
import { embeddingModel } from './embedding-model.ts';
import { calibratedRelevance, DEFAULT_RELEVANCE_MODEL, signalsOf, type RelevanceModel } from './relevance.ts';
import { createVectorScanner, type ScanKernel, type VectorSource } from './vector-scan.ts';
import { feedbackQuery } from './lexical-feedback.ts';
import { scaleToUnit, standardScores } from './score-normalisation.ts';

export { nthLargest } from './select.ts';
export { embeddingModel } from './embedding-model.ts';

export interface SearchOptions {
  filters?: SearchFilters;
  limit?: number;
  /** Overrides the tuning's similarity floor for this call (glyphs widen or narrow it). */
  similarityFloor?: number;
}

export interface SearchTuning {
  /** Weight of the vector side in the fused score; the rest is the BM25 side. */
  vectorWeight: number;
  /**
   * How the two sides are put on one scale before mixing:
   * - `max`: cosine as is, BM25 divided by the best BM25 of the query;
   * - `minmax`: each side min-max scaled over the allowed records;
   * - `rrf`: reciprocal ranks 1 / (rrfK + rank), scaled so rank 1 on both sides is 1;
   * - `zscore`: each side as standard scores over the allowed records, the mix then scaled
   *   to [0, 1] over them (score-normalisation.ts).
   */
  fusion: 'max' | 'minmax' | 'rrf' | 'zscore';
  rrfK: number;
  /** BM25 of passages. */
  bm25: Bm25Parameters;
  /** BM25 of titles, and the title score's weight (0 ignores titles). */
  titleBm25: Bm25Parameters;
  titleBoost: number;
  /** How a word repeated in the query counts for BM25. */
  queryTermWeight: 'count' | 'log' | 'once';
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
   * Chunks asked of the approximate index per scan. Deep enough for the feedback pool: the
   * first ranking's best `feedbackPool` records are chosen by their cosines too, and with the
   * cosines of fewer chunks the pool (and so the ranking) drifts from the exact scan's; ArguAna
   * through this path equals the exact one at 4,000 and is 0.004 below at 256 (bench/README.md).
   */
  approximateShortlist: number;
  /** The best records by words whose chunks are re-scored too, per scan (their cosines are never guessed). */
  approximateWordRecords: number;
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
   * Passages above which BM25 is the pruned top k plus the exact scores of the vector side's
   * best records (lexical-side.ts), k = max(candidates, feedbackPool); up to it, every record's
   * exhaustive score. Off by default: the exhaustive scores measured faster up to 1M passages
   * (bench/README.md, "Lexical side at scale"); 0 turns the pruned path on.
   */
  lexicalTopAbove: number;
  /**
   * Apply the similarity floors (default). A benchmark run turns them off: it ranks every
   * document, while the API must be able to answer "nothing relevant".
   */
  floors: boolean;
}

/**
 * Tuned on BEIR ArguAna dev (bench/README.md, "Retrieval quality"): z-score fusion at 0.6 with
 * 80 lexical feedback terms, nDCG@10 0.60 against 0.58 with `max` at 0.5 (and 0.47 before
 * that), chosen on one half of the dev queries and reported on the other; the same weight is
 * best on short questions under z-scores. The floors are the service's own and not measured
 * there; calibrated relevance (relevance.ts) reads the query's own cosine and BM25, whatever
 * the fusion.
 */
export const DEFAULT_TUNING: SearchTuning = {
  vectorWeight: 0.6,
  fusion: 'zscore',
  rrfK: 60,
  bm25: { k1: 1.5, b: 1 },
  titleBm25: { k1: 1.2, b: 0.75 },
  titleBoost: 0,
  queryTermWeight: 'count',
  feedbackDocs: 3,
  feedbackWeight: 1,
  lexicalFeedbackTerms: 80,
  lexicalFeedbackWeight: 0.3,
  feedbackPool: 2000,
  approximateWordRecords: 256,
  approximateFrom: APPROXIMATE_FROM,
  approximateShortlist: 4000,
  similarityFloor: 0.3,
  assistedFloor: 0.22,
  lexicalFloor: 0.5,
  diversityPenalty: 0.85,
  candidates: 100,
  lexicalTopAbove: Number.POSITIVE_INFINITY,
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
  byId(id: string): SearchRecord | undefined;
  search(query: string, options?: SearchOptions): Promise<ScoredRecord[]>;
  /** Cosine scan alone, used by the Atlas search endpoint. */
  similar(query: string, predicate: (record: SearchRecord) => boolean, k: number): Promise<{ record: SearchRecord; score: number }[]>;
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
}

/** What the first ranking of a search leaves for the feedback ranking. */
interface FirstRanking {
  queryVector: Float32Array;
  queryTerms: ReadonlyMap<string, number>;
  similarity: Float32Array;
  lexical: Float64Array;
  /** Per record, the chunk of its best cosine (-1 where none). */
  bestChunk: Int32Array;
  fused: Float64Array;
  mask: Uint8Array;
  allowed: Uint32Array;
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

/** A mask of the `size` best records by `scores` (NaN never; ties at the threshold included). */
function poolMask(scores: Float64Array, size: number): Uint8Array {
  let count = 0;
  const values = new Float64Array(scores.length);
  for (const score of scores) if (!Number.isNaN(score)) values[count++] = score;
  const threshold = nthLargest(values.subarray(0, count), Math.min(size, count));
  const pool = new Uint8Array(scores.length);
  for (let index = 0; index < scores.length; index++) if (scores[index]! >= threshold) pool[index] = 1;
  return pool;
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
  const scanner = createVectorScanner(input.vectors, dims, { kernel: input.kernel });
  const vectors = scanner.vectors;
  const fullTextOptions = {
    text: tuning.bm25,
    title: tuning.titleBm25,
    titleBoost: tuning.titleBoost,
    queryTermWeight: tuning.queryTermWeight,
  };
  const lexicalSide = createLexicalSide({
    fullText,
    options: fullTextOptions,
    recordCount: records.length,
    topAbove: tuning.lexicalTopAbove,
    pool: Math.max(tuning.candidates, tuning.feedbackPool),
  });

  const chunkScan = createChunkScan({
    scanner,
    chunkRecords,
    recordCount: records.length,
    approximate: input.approximate,
    approximateFrom: tuning.approximateFrom,
    shortlist: tuning.approximateShortlist,
    wordRecords: tuning.approximateWordRecords,
    chunkKeys: meta.chunk_keys ? Uint32Array.from(meta.chunk_keys) : undefined,
  });

  /**
   * The second ranking of pseudo-relevance feedback, from the first one's best records' best
   * passages: on the vector side (Rocchio) the query vector moved towards them, on the BM25
   * side (RM3) the query with their likeliest words added. It covers the first ranking's best
   * `feedbackPool` records only: a record ranked below them is not pulled into the results
   * by feedback, and on a large corpus this halves the scanning.
   */
  function rankWithFeedback(first: FirstRanking): Float64Array {
    const { fused, mask, allowed } = first;
    const top = topIndices(records, fused, tuning.feedbackDocs).filter((index) => first.bestChunk[index]! >= 0);
    const chunks = top.map((index) => first.bestChunk[index]!);
    const pool = allowed.length > tuning.feedbackPool ? poolMask(fused, tuning.feedbackPool) : mask;
    const similarity =
      tuning.feedbackWeight > 0
        ? chunkScan.scanPool(feedbackVector(first.queryVector, vectors, dims, chunks, tuning.feedbackWeight), pool).best
        : first.similarity;
    const lexical =
      tuning.lexicalFeedbackTerms > 0 && tuning.lexicalFeedbackWeight > 0
        ? poolScores(feedbackQuery(fullText, chunks, first.queryTerms, tuning.lexicalFeedbackTerms, tuning.lexicalFeedbackWeight), pool, pool === mask)
        : first.lexical;
    const rescored = fuse(tuning, similarity, lexical, pool === mask ? allowed : allowedList(pool));
    if (pool !== mask) for (const index of allowed) if (pool[index] === 0) rescored[index] = fused[index]! - 2; // stays below every pooled record
    return rescored;
  }

  /**
   * BM25 of the expanded query over the pool: every posting of its terms where the pool is every
   * allowed record, else the pool's records alone (galloping through the postings: the expanded
   * query's many frequent words would otherwise read most of the index). The same scores.
   */
  function poolScores(terms: ReadonlyMap<string, number>, pool: Uint8Array, whole: boolean): Float64Array {
    if (whole) return fullText.scores(terms, fullTextOptions, pool);
    const members = allowedList(pool);
    const scores = new Float64Array(records.length);
    fullText.scoresOf(terms, fullTextOptions, members).forEach((score, at) => (scores[members[at]!] = score));
    return scores;
  }

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
    byId: (id) => {
      const index = indexById.get(id);
      return index === undefined ? undefined : records[index];
    },

    async search(query, options = {}) {
      const limit = options.limit ?? 8;
      const floor = options.similarityFloor ?? tuning.similarityFloor;
      // The question is embedded (on a worker thread, in the server) while the words are scored here.
      const embedding = embedQuery(query);
      embedding.catch(() => undefined); // awaited below; this only keeps a failure from being reported twice
      const mask = allowedMask(records, options.filters);
      const allowed = allowedList(mask);
      const queryTerms = fullText.queryTerms(query, fullTextOptions);
      const lexicalStart = lexicalSide.start(query, mask);
      const queryVector = await embedding;
      const { best: similarity, bestChunk, population } = chunkScan.scan(queryVector, mask, lexicalSide.provisional(lexicalStart));
      const lexical = lexicalSide.finish(lexicalStart, query, similarity);
      let fused = fuse(tuning, similarity, lexical, allowed, population);
      if (tuning.feedbackDocs > 0 && (tuning.feedbackWeight > 0 || tuning.lexicalFeedbackTerms > 0)) {
        fused = rankWithFeedback({ queryVector, queryTerms, similarity, lexical, bestChunk, fused, mask, allowed });
      }

      const candidates = scoredCandidates(
        records,
        allowed,
        { similarity, lexical, fused },
        fullText.ceiling(queryTerms, fullTextOptions),
        (cosine, lexicalScore) => tuning.floors && cosine < floor && !(cosine >= Math.min(floor, tuning.assistedFloor) && lexicalScore >= tuning.lexicalFloor),
        Math.max(tuning.candidates, limit),
      );
      candidates.sort((a, b) => b.relevanceScore - a.relevanceScore || (a.record.id < b.record.id ? -1 : 1));
      // Calibrated relevance for the records returned only: the rest are ranked on the fused score.
      return diversify(candidates.slice(0, Math.max(tuning.candidates, limit)), limit, tuning.diversityPenalty).map((hit) => ({
        ...hit,
        relevanceScore: round(hit.relevanceScore),
        similarity: round(hit.similarity),
        lexical: round(hit.lexical),
        coverage: round(hit.coverage),
        calibrated: round(calibratedRelevance(relevance, hit.similarity, hit.coverage)),
        signals: signalsOf(relevance, hit.similarity, hit.coverage),
      }));
    },

    async similar(query, predicate, k) {
      const mask = new Uint8Array(records.length);
      records.forEach((record, index) => (mask[index] = predicate(record) ? 1 : 0));
      const { best: similarity } = chunkScan.scan(await embedQuery(query), mask);
      const hits: { record: SearchRecord; score: number }[] = [];
      similarity.forEach((score, index) => {
        if (mask[index] === 1) hits.push({ record: records[index]!, score });
      });
      hits.sort((a, b) => b.score - a.score || (a.record.id < b.record.id ? -1 : 1));
      return hits.slice(0, k).map((hit) => ({ ...hit, score: round(hit.score) }));
    },
  };
}

/** A record retrieval ranks, before its calibrated relevance is read (only the returned ones get it). */
type Candidate = Omit<ScoredRecord, 'calibrated' | 'signals'>;

/**
 * The allowed records that pass the similarity floors, each with its ranking score and its two
 * signals. `belowFloors(cosine, lexical)` says when a record is off-topic: words alone never
 * admit one ("baked into you" must not answer a bread recipe).
 */
function scoredCandidates(
  records: readonly SearchRecord[],
  allowed: Uint32Array,
  scores: { similarity: Float32Array; lexical: Float64Array; fused: Float64Array },
  ceiling: number,
  belowFloors: (cosine: number, lexical: number) => boolean,
  keep: number,
): Candidate[] {
  const maxLexical = maxOf(scores.lexical);
  const cosineOf = (index: number) => Math.max(0, scores.similarity[index]!);
  const lexicalOf = (index: number) => (maxLexical > 0 ? scores.lexical[index]! / maxLexical : 0);
  const passing: number[] = [];
  for (const index of allowed) if (!belowFloors(cosineOf(index), lexicalOf(index))) passing.push(index);
  // Only the `keep` best by the fused score (ties at the cut included) can be returned: a
  // million records do not become a million objects to sort.
  const cut =
    passing.length > keep
      ? nthLargest(
          Float64Array.from(passing, (index) => scores.fused[index]!),
          keep,
        )
      : -Infinity;
  const candidates: Candidate[] = [];
  for (const index of passing) {
    if (scores.fused[index]! < cut) continue;
    candidates.push({
      record: records[index]!,
      relevanceScore: scores.fused[index]!,
      similarity: cosineOf(index),
      lexical: lexicalOf(index),
      coverage: ceiling > 0 ? Math.min(1, scores.lexical[index]! / ceiling) : 0,
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

/** Fused scores in [0, 1] for the allowed records (NaN elsewhere); `allowed` lists them. */
function fuse(tuning: SearchTuning, cosine: Float32Array, lexical: Float64Array, allowed: Uint32Array, population?: CosinePopulation): Float64Array {
  const fused = new Float64Array(cosine.length).fill(Number.NaN);
  const w = tuning.vectorWeight;
  if (tuning.fusion === 'rrf') {
    const rankOf = (score: (index: number) => number, present: (index: number) => boolean) => {
      const ranks = new Map<number, number>();
      [...allowed]
        .filter(present)
        .sort((a, b) => score(b) - score(a) || a - b)
        .forEach((index, rank) => ranks.set(index, rank + 1));
      return ranks;
    };
    const vectorRanks = rankOf(
      (index) => cosine[index]!,
      () => true,
    );
    const lexicalRanks = rankOf(
      (index) => lexical[index]!,
      (index) => lexical[index]! > 0,
    );
    const top = 1 / (tuning.rrfK + 1);
    for (const index of allowed) {
      const v = 1 / (tuning.rrfK + vectorRanks.get(index)!);
      const l = lexicalRanks.has(index) ? 1 / (tuning.rrfK + lexicalRanks.get(index)!) : 0;
      fused[index] = (w * v + (1 - w) * l) / top;
    }
    return fused;
  }
  const maxLexical = maxOf(lexical);
  if (tuning.fusion === 'zscore') {
    const v = cosineStandardScores(cosine, allowed, population);
    const l = standardScores(lexical, allowed);
    for (const index of allowed) fused[index] = w * v[index]! + (1 - w) * l[index]!;
    return scaleToUnit(fused, allowed);
  }
  if (tuning.fusion === 'minmax') {
    let lo = Infinity;
    let hi = -Infinity;
    for (const index of allowed) {
      lo = Math.min(lo, cosine[index]!);
      hi = Math.max(hi, cosine[index]!);
    }
    const span = hi - lo || 1;
    for (const index of allowed) {
      const v = (cosine[index]! - lo) / span;
      const l = maxLexical > 0 ? lexical[index]! / maxLexical : 0;
      fused[index] = w * v + (1 - w) * l;
    }
    return fused;
  }
  for (const index of allowed) {
    const v = Math.max(0, cosine[index]!);
    const l = maxLexical > 0 ? lexical[index]! / maxLexical : 0;
    fused[index] = w * v + (1 - w) * l;
  }
  return fused;
}

/**
 * Standard scores of the cosine side over the records that have one. On the approximate path
 * (chunk-scan.ts) a record outside the shortlist has none (-2): the mean and the spread are then
 * the population's as the shortlist's sample estimates them (`population`), which is the scale
 * the exact scan gives, and such a record is read as the population's mean cosine or the
 * lowest cosine found, whichever is less (it is not among the nearest). Without an estimate,
 * over the records that have one, and such a record as the worst of them. On the exact path
 * every allowed record has one.
 */
function cosineStandardScores(cosine: Float32Array, allowed: Uint32Array, population?: CosinePopulation): Float64Array {
  const known = allowed.filter((index) => cosine[index]! > -2);
  if (population && known.length < allowed.length) {
    const { mean, deviation } = population;
    let lowest = Infinity;
    for (const index of known) lowest = Math.min(lowest, cosine[index]!);
    const imputed = Math.min(mean, lowest);
    const standard = new Float64Array(cosine.length).fill(Number.NaN);
    for (const index of allowed) {
      const value = cosine[index]! > -2 ? cosine[index]! : imputed;
      standard[index] = deviation > 0 ? (value - mean) / deviation : 0;
    }
    return standard;
  }
  const standard = standardScores(cosine, known);
  if (known.length === allowed.length) return standard;
  let worst = 0;
  for (const index of known) worst = Math.min(worst, standard[index]!);
  for (const index of allowed) if (cosine[index]! <= -2) standard[index] = worst;
  return standard;
}

/** The k best-scoring records (NaN skipped), best first; ties by id. Linear for small k. */
function topIndices(records: readonly SearchRecord[], scores: Float64Array, k: number): number[] {
  const better = (a: number, b: number) => scores[a]! > scores[b]! || (scores[a] === scores[b] && records[a]!.id < records[b]!.id);
  const top: number[] = [];
  for (let index = 0; index < scores.length; index++) {
    if (Number.isNaN(scores[index]!)) continue;
    if (top.length === k && !better(index, top[k - 1]!)) continue;
    let at = top.length === k ? k - 1 : top.length;
    while (at > 0 && better(index, top[at - 1]!)) at--;
    top.splice(at, 0, index);
    if (top.length > k) top.pop();
  }
  return top;
}

/** The query vector moved towards the given chunks by `weight` (shared among them), unit length again. */
function feedbackVector(queryVector: Float32Array, vectors: Float32Array, dims: number, chunks: readonly number[], weight: number): Float32Array {
  const expanded = Float32Array.from(queryVector);
  for (const chunk of chunks) {
    const offset = chunk * dims;
    for (let d = 0; d < dims; d++) expanded[d] = expanded[d]! + (weight / chunks.length) * vectors[offset + d]!;
  }
  let norm = 0;
  for (let d = 0; d < dims; d++) norm += expanded[d]! * expanded[d]!;
  norm = Math.sqrt(norm) || 1;
  for (let d = 0; d < dims; d++) expanded[d] = expanded[d]! / norm;
  return expanded;
}

function maxOf(values: Float64Array): number {
  let max = 0;
  for (let index = 0; index < values.length; index++) if (values[index]! > max) max = values[index]!;
  return max;
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
