/** Selection over score arrays, shared by the vector side's pools and the lexical top k. */

/**
 * From this many values on, a selection first keeps only those that can be among the n largest
 * (at 25,000 records, a 100k-passage corpus, the ranking by words 2.1 → 0.5 ms against 32,768).
 */
export const SAMPLED_FROM = 8192;
const SAMPLE = 1024;

/**
 * The n-th largest value (1-based); may reorder `values`. On many values and a small n, the
 * values at or above a threshold read off an even sample of them (sampledThreshold) are kept
 * first, a few times n of them, and the selection runs on those: the same value, since it is
 * kept only when at least n values reach the threshold (else it runs on every value).
 */
export function nthLargest(values: Float64Array, n: number): number {
  if (values.length >= SAMPLED_FROM && n * 8 <= values.length) {
    const threshold = sampledThreshold(values, n);
    let count = 0;
    for (let i = 0; i < values.length; i++) count += values[i]! >= threshold ? 1 : 0;
    if (count >= n) {
      const kept = new Float64Array(count);
      for (let i = 0, at = 0; i < values.length; i++) if (values[i]! >= threshold) kept[at++] = values[i]!;
      return quickselect(kept, n);
    }
  }
  return quickselect(values, n);
}

/**
 * A value that about 2n of `values` (of `values[at]` for each `at` of `positions`, when given)
 * reach, read off an even sample of 1,024 of them: the n-th largest's rank in the sample,
 * lowered by three deviations of it and 4. Fewer than n may reach it: the caller counts.
 */
export function sampledThreshold(values: Float64Array, n: number, positions?: Uint32Array): number {
  const length = positions ? positions.length : values.length;
  const step = Math.max(1, Math.floor(length / SAMPLE));
  const sample = new Float64Array(Math.min(SAMPLE, length));
  for (let i = 0; i < sample.length; i++) sample[i] = values[positions ? positions[i * step]! : i * step]!;
  sample.sort();
  const rank = Math.ceil((n * sample.length) / length);
  return sample[Math.max(0, sample.length - 1 - rank - Math.ceil(3 * Math.sqrt(rank)) - 4)]!;
}

/**
 * `values[at]` for each of `positions`, in a plain loop: a typed array's `from` with a mapping
 * walks an iterator, an object a value, and a search's young garbage is what sends the
 * collector through the server's heap.
 */
export function gather(values: ArrayLike<number>, positions: ArrayLike<number>): Float64Array {
  const out = new Float64Array(positions.length);
  for (let i = 0; i < positions.length; i++) out[i] = values[positions[i]!]!;
  return out;
}

/** The values of a plain list in a typed array, in a loop (see gather). */
export function toUint32(list: ArrayLike<number>): Uint32Array {
  const out = new Uint32Array(list.length);
  for (let i = 0; i < list.length; i++) out[i] = list[i]!;
  return out;
}

/** The n-th largest value (1-based) by quickselect; reorders `values`. */
export function quickselect(values: Float64Array, n: number): number {
  let lo = 0;
  let hi = values.length - 1;
  const target = n - 1; // position in descending order
  while (lo < hi) {
    const pivot = values[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i]! > pivot) i++;
      while (values[j]! < pivot) j--;
      if (i <= j) {
        const swap = values[i]!;
        values[i] = values[j]!;
        values[j] = swap;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else break;
  }
  return values[target]!;
}
