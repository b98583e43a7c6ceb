/**
 * An approximate nearest-neighbour index over the search's chunk vectors, keyed by chunk
 * number. The core only asks it for a shortlist and re-scores that shortlist on the stored
 * float vectors itself (core/search/search-index.ts), so the index may be quantised and its
 * order or distances need not be exact. The implementations are adapters in providers/: the
 * index in this thread (the build) answers at once; the server's, in a worker thread of its own
 * (vector-index-worker.ts), answers later, so that the question's words are scored meanwhile.
 */
import type { SharedCodes } from '../search/binary-scan.ts';
import type { SharedScan } from '../search/vector-scan.ts';

/** The nearest codes' chunks (ascending) and their exact products with the question, in the same order. */
export interface NearestCodes {
  near: Uint32Array;
  dots: Float32Array;
}

/** The `k` nearest codes to `code` (the question's, signCode) among the chunks `chunkMask` allows, and their products with `query`. */
export type RemoteCodes = (query: Float32Array, code: Uint8Array, k: number, chunkMask?: Uint8Array) => Promise<NearestCodes>;

export interface ApproximateVectorIndex {
  /** How many vectors it holds. */
  readonly size: number;
  readonly dims: number;
  /**
   * Up to `k` keys, nearest to `query` (by inner product) first. With `allowed`, only keys
   * whose entry is 1; fewer than `k` then means the allowed keys are too rare for the index
   * to find them, and the caller should scan them exactly instead.
   */
  search(query: Float32Array, k: number, allowed?: Uint8Array): Uint32Array | Promise<Uint32Array>;
  /**
   * Where the index answers from another thread: that thread also takes the exact products of
   * listed rows over the scan kernel's shared memory (the same kernel, the same values as the
   * scanner's dotsOf), so that the feedback's vectors are scored beside its words.
   */
  shareScan?(shared: SharedScan): (query: Float32Array, rows: Uint32Array) => Promise<Float32Array>;
  /**
   * From that thread too, the shortlist without the graph: the nearest binary codes by a whole
   * scan of them (binary-scan.ts's kernel over its shared memory, the same rows) and their exact
   * products over the scan kernel's memory, in one answer.
   */
  shareCodes?(codes: SharedCodes, shared: SharedScan): RemoteCodes;
  /**
   * From that thread too, the graph's `k` nearest (no filter) and their exact products over the
   * scan kernel's memory, in one answer: one message there and back, not two (the rows are the
   * keys, so only for an index whose keys are the chunks' numbers).
   */
  shareNear?(shared: SharedScan): RemoteNear;
}

/** The graph's `k` nearest rows to `query` (ascending) and their products with it. */
export type RemoteNear = (query: Float32Array, k: number) => Promise<NearestCodes>;
