/**
 * Putting the two sides of hybrid retrieval on one scale before they are mixed (fuse() in
 * search-index.ts). Scores are indexed by record; `allowed` lists the records that count.
 */

/**
 * Standard scores: (score − mean) / standard deviation over the allowed records (NaN
 * elsewhere). Unlike dividing by the best score, where one outlier (a record that
 * repeats the question) sets the scale of all the others, an outlier among many records
 * weighs on it by its share of the variance; a side whose scores are all equal
 * gives 0 everywhere, so it cannot reorder the other side.
 */
export function standardScores(scores: ArrayLike<number>, allowed: Uint32Array): Float64Array {
  const standard = new Float64Array(scores.length).fill(Number.NaN);
  let sum = 0;
  let squares = 0;
  for (const index of allowed) {
    sum += scores[index]!;
    squares += scores[index]! * scores[index]!;
  }
  const count = allowed.length || 1;
  const mean = sum / count;
  const deviation = Math.sqrt(Math.max(0, squares / count - mean * mean));
  for (const index of allowed) standard[index] = deviation > 0 ? (scores[index]! - mean) / deviation : 0;
  return standard;
}

/**
 * The allowed records' scores scaled in place to [0, 1]: the best 1, the mean record 0 and
 * those below it 0 too (all 1 when none is above the mean). The API reports relevance in
 * [0, 1], and the diversity penalty and the Atlas admission ratio multiply it, so it must not
 * be negative; anchoring 0 at the mean rather than at the worst record keeps ratios between
 * good records apart, as the Atlas admission ratio needs.
 */
export function scaleToUnit(scores: Float64Array, allowed: Uint32Array): Float64Array {
  let sum = 0;
  for (const index of allowed) sum += scores[index]!;
  const mean = sum / (allowed.length || 1);
  let best = -Infinity;
  for (const index of allowed) best = Math.max(best, scores[index]!);
  const span = best - mean;
  for (const index of allowed) scores[index] = span > 0 ? Math.max(0, scores[index]! - mean) / span : 1;
  return scores;
}
