/**
 * Pseudo-relevance feedback on the BM25 side (RM3, Lavrenko and Croft's relevance model
 * mixed back into the query, as Anserini does it): the words that carry the first ranking's
 * best passages join the query, each with a share of the weight, so a passage that argues
 * the same matter in other words than the question's still matches.
 */
import type { FullTextIndex } from './bm25.ts';

export interface FeedbackPassage {
  /** Term counts of the passage, terms as the index has them. */
  terms: ReadonlyMap<string, number>;
  /** The passage's length in terms. */
  length: number;
}

/**
 * The relevance model: P(t | R), the mean over the passages of each term's share of the
 * passage, kept for the `count` most likely terms (ties by term, so runs agree), summing to 1
 * over the terms kept. Passages are weighted alike: their order already says they are the
 * best, and weighting by score would let one near-copy of the query drown the others.
 */
export function relevanceModel(passages: readonly FeedbackPassage[], count: number): Map<string, number> {
  const probability = new Map<string, number>();
  for (const passage of passages) {
    if (passage.length <= 0) continue;
    for (const [term, occurrences] of passage.terms) {
      probability.set(term, (probability.get(term) ?? 0) + occurrences / passage.length / passages.length);
    }
  }
  const kept = [...probability].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, Math.max(0, count));
  return normalised(new Map(kept));
}

/**
 * RM3's interpolation: (1 − weight) × the query's term weights and weight × the relevance
 * model's, each first scaled to sum to 1, so a long question and a short one get the same
 * share of expansion.
 */
export function expandQuery(query: ReadonlyMap<string, number>, model: ReadonlyMap<string, number>, weight: number): Map<string, number> {
  const expanded = new Map<string, number>();
  for (const [term, value] of normalised(query)) expanded.set(term, (1 - weight) * value);
  for (const [term, value] of normalised(model)) expanded.set(term, (expanded.get(term) ?? 0) + weight * value);
  return expanded;
}

/** The weights scaled to sum to 1 (an empty or all-zero map stays as it is). */
function normalised(weights: ReadonlyMap<string, number>): Map<string, number> {
  let total = 0;
  for (const value of weights.values()) total += value;
  if (total <= 0) return new Map(weights);
  return new Map([...weights].map(([term, value]) => [term, value / total]));
}

/** RM3 in one step: the query's weighted terms expanded from the index's passages `chunks` (the first ranking's best). */
export function feedbackQuery(
  index: Pick<FullTextIndex, 'passageTerms'>,
  chunks: readonly number[],
  query: ReadonlyMap<string, number>,
  terms: number,
  weight: number,
): Map<string, number> {
  return expandQuery(
    query,
    relevanceModel(
      chunks.map((chunk) => index.passageTerms(chunk)),
      terms,
    ),
    weight,
  );
}
