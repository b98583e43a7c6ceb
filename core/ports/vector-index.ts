/**
 * An approximate nearest-neighbour index over the search's chunk vectors, keyed by chunk
 * number. The core only asks it for a shortlist and re-scores that shortlist on the stored
 * float vectors itself (core/search/search-index.ts), so the index may be quantised and its
 * order or distances need not be exact. The implementation is an adapter in providers/.
 */
export interface ApproximateVectorIndex {
  /** How many vectors it holds. */
  readonly size: number;
  readonly dims: number;
  /** Adds rows of `dims` floats under the given keys, one a row, or under firstKey, firstKey + 1, … */
  add(vectors: Float32Array, keys: number | ArrayLike<number>): void;
  /**
   * Up to `k` keys, nearest to `query` (by inner product) first. With `allowed`, only keys
   * whose entry is 1; fewer than `k` then means the allowed keys are too rare for the index
   * to find them, and the caller should scan them exactly instead.
   */
  search(query: Float32Array, k: number, allowed?: Uint8Array): Uint32Array;
}
