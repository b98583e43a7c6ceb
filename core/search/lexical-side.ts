/**
 * The BM25 scores hybrid retrieval fuses (search-index.ts). On a corpus of up to
 * `lexicalTopAbove` passages, every record's exhaustive score (bm25.ts `scores()`), which is
 * fastest there. Above it, only the records that can reach the candidate pool get one: the
 * pruned top k (MaxScore, bm25-pruned.ts; k = the pool) plus the exact scores of the vector
 * side's best k records; every other record counts 0 (in fusion, the floors and the calibrated
 * coverage alike). A record outside both cannot enter the pool by either side, and the `max`
 * fusion's scale, the query's best BM25, is always in the top k. `rrf` ranks the lexical side
 * among the records scored, which is exact for the top k.
 *
 * In two steps because the first runs while the question is embedded and the second needs the
 * vector side's scores. The first pauses now and then when told to (the approximate index,
 * in another thread, is then given the question's vector as soon as it comes).
 */
import type { FullTextIndex, FullTextQueryOptions } from './bm25.ts';
import { nthLargest } from './select.ts';

export interface LexicalSide {
  /** Before the vector scan: the dense scores, or the top k (of the records `allowed` marks; every record without it). */
  start(query: string, allowed?: Uint8Array): Promise<LexicalStart>;
  /**
   * Before it too: what the words give so far, by record index (the dense scores, or the top k
   * with 0 elsewhere), for the vector side's shortlist of the best records by words (chunk-scan.ts).
   */
  provisional(started: LexicalStart): Float64Array;
  /** After it: scores by record index for fusion, given the best cosine per record (-2 where not allowed). */
  finish(started: LexicalStart, query: string, similarity: Float32Array): Float64Array;
}

export type LexicalStart = { kind: 'exhaustive'; scores: Float64Array } | { kind: 'top'; records: Uint32Array; scores: Float64Array };

export interface LexicalSideOptions {
  fullText: FullTextIndex;
  options: FullTextQueryOptions;
  recordCount: number;
  /** Passages above which the pruned path runs (SearchTuning.lexicalTopAbove). */
  topAbove: number;
  /** The candidate pool: how many records each side brings. */
  pool: number;
  /** Awaited now and then while every passage is scored (FullTextIndex.scoresPausing); without it, scored in one go. */
  pause?: (() => Promise<void>) | undefined;
}

export function createLexicalSide({ fullText, options, recordCount, topAbove, pool, pause }: LexicalSideOptions): LexicalSide {
  const pruned = fullText.passages > topAbove;
  return {
    async start(query, allowed) {
      if (!pruned) {
        const scores = pause ? await fullText.scoresPausing(query, options, allowed, pause) : fullText.scores(query, options, allowed);
        return { kind: 'exhaustive', scores };
      }
      const top = fullText.top(query, options, pool, allowed);
      return { kind: 'top', records: top.records, scores: top.scores };
    },
    provisional(started) {
      if (started.kind === 'exhaustive') return started.scores;
      const scores = new Float64Array(recordCount);
      started.records.forEach((record, i) => (scores[record] = started.scores[i]!));
      return scores;
    },
    finish(started, query, similarity) {
      if (started.kind === 'exhaustive') return started.scores;
      const scores = new Float64Array(recordCount);
      started.records.forEach((record, i) => (scores[record] = started.scores[i]!));
      const shortlist = bestRecords(similarity, pool).filter((record) => scores[record] === 0);
      const exact = fullText.scoresOf(query, options, shortlist);
      shortlist.forEach((record, i) => (scores[record] = exact[i]!));
      return scores;
    },
  };
}

/** The records of the `count` highest cosines (ties at the cut included), allowed ones only (not -2). */
function bestRecords(similarity: Float32Array, count: number): Uint32Array {
  const allowed = Float64Array.from(similarity.filter((score) => score > -2));
  if (allowed.length === 0) return new Uint32Array(0);
  const cut = nthLargest(allowed, Math.min(count, allowed.length));
  const records: number[] = [];
  similarity.forEach((score, record) => {
    if (score > -2 && score >= cut) records.push(record);
  });
  return Uint32Array.from(records);
}
