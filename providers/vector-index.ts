/**
 * The approximate vector index over USearch (HNSW, docs/decisions/0018-vector-index.md):
 * vectors reduced to binary codes (one sign bit a dimension) inside the graph, the float
 * vectors kept by the caller for the exact re-scoring of the shortlist. The native package
 * is imported here only, and only when an index is made or opened: a corpus below the
 * threshold never loads it.
 */
import { statSync } from 'node:fs';
import type { Index } from 'usearch';
import type { ApproximateVectorIndex } from '../core/ports/vector-index.ts';
import { checkQuery } from '../core/search/vector-scan.ts';

export type IndexQuantization = 'f32' | 'f16' | 'i8' | 'b1';

export interface VectorIndexParameters {
  quantization: IndexQuantization;
  /** HNSW M: links per node (twice that on the bottom layer). */
  connectivity: number;
  /** ef_construction. */
  expansionAdd: number;
  /** ef_search. */
  expansionSearch: number;
  /**
   * Threads adding vectors (0: every core, the build's default). One thread builds the same
   * graph from the same vectors every time; more do not, which tests that pin recall avoid.
   */
  addThreads?: number;
}

/**
 * Measured by bench/ann.ts (ADR 0018's table): binary codes re-scored on the floats kept
 * recall@10 at 1.000 at 1M vectors, with a third of int8's build time and half its memory.
 */
export const DEFAULT_INDEX_PARAMETERS: VectorIndexParameters = { quantization: 'b1', connectivity: 16, expansionAdd: 128, expansionSearch: 128 };

/** Oversampling stops here when a filter leaves the allowed keys rare: the caller scans them exactly instead. */
const MAX_OVERSAMPLED = 16384;

export interface PersistentVectorIndex extends ApproximateVectorIndex {
  /** Adds rows of `dims` floats under the given keys, one a row, or under firstKey, firstKey + 1, … */
  add(vectors: Float32Array, keys: number | ArrayLike<number>): void;
  /** Takes the given keys' vectors out of the graph (an incremental build's removed passages). */
  remove(keys: ArrayLike<number>): void;
  save(file: string): void;
  search(query: Float32Array, k: number, allowed?: Uint8Array): Uint32Array;
}

/** The native index's settings as plain numbers (also what the serving worker is given, vector-index-worker.ts). */
export async function nativeConfig(dims: number, parameters: VectorIndexParameters): Promise<ConstructorParameters<typeof Index>[0] & object> {
  const { MetricKind, ScalarKind } = await import('usearch');
  const SCALARS: Record<IndexQuantization, (typeof ScalarKind)[keyof typeof ScalarKind]> = {
    f32: ScalarKind.F32,
    f16: ScalarKind.F16,
    i8: ScalarKind.I8,
    b1: ScalarKind.B1,
  };
  return {
    dimensions: dims,
    // Vectors are unit length: inner product is cosine; binary codes are compared by Hamming distance.
    metric: parameters.quantization === 'b1' ? MetricKind.Hamming : MetricKind.IP,
    quantization: SCALARS[parameters.quantization],
    connectivity: parameters.connectivity,
    expansion_add: parameters.expansionAdd,
    expansion_search: parameters.expansionSearch,
    multi: false,
  };
}

async function nativeIndex(dims: number, parameters: VectorIndexParameters): Promise<Index> {
  const { Index } = await import('usearch');
  return new Index(await nativeConfig(dims, parameters));
}

/** An empty index, filled with add() (the build). */
export async function createVectorIndex(dims: number, parameters: VectorIndexParameters = DEFAULT_INDEX_PARAMETERS): Promise<PersistentVectorIndex> {
  return wrap(await nativeIndex(dims, parameters), dims, parameters.addThreads ?? 0);
}

/** An index saved by save(), memory-mapped rather than read: the pages load as searches touch them. */
export function viewVectorIndex(file: string, dims: number, parameters: VectorIndexParameters = DEFAULT_INDEX_PARAMETERS): Promise<PersistentVectorIndex> {
  return openSaved(file, dims, parameters, 'view');
}

/** An index saved by save(), read whole into memory so it can grow (an incremental build adds to it and saves it again). */
export function loadVectorIndex(file: string, dims: number, parameters: VectorIndexParameters = DEFAULT_INDEX_PARAMETERS): Promise<PersistentVectorIndex> {
  return openSaved(file, dims, parameters, 'load');
}

/**
 * Throws unless `file` is a file. Asked to open a missing one, usearch leaves the process's own
 * descriptors upset (measured: under a test runner an assertion in libuv then ends the
 * process), so it is never asked.
 */
export function checkIndexFile(file: string): void {
  const stat = statSync(file, { throwIfNoEntry: false });
  if (!stat?.isFile()) throw new Error(`no vector index at ${file}: rebuild`);
}

async function openSaved(file: string, dims: number, parameters: VectorIndexParameters, how: 'view' | 'load'): Promise<PersistentVectorIndex> {
  checkIndexFile(file);
  const native = await nativeIndex(dims, parameters);
  if (how === 'view') native.view(file);
  else native.load(file);
  if (native.dimensions() !== dims) throw new Error(`${file} holds ${native.dimensions()}-dimension vectors, the search ${dims}: rebuild`);
  return wrap(native, dims, parameters.addThreads ?? 0);
}

function wrap(native: Index, dims: number, addThreads: number): PersistentVectorIndex {
  // Floats go in as they are: the index casts them to its quantisation (b1 keeps each component's sign).
  const nearest = (query: Float32Array, k: number): BigUint64Array => native.search(query, k, 1).keys;
  return {
    get size() {
      return native.size();
    },
    dims,
    add(vectors, keys) {
      const rows = vectors.length / dims;
      if (!Number.isInteger(rows)) throw new Error(`${vectors.length} floats are not whole ${dims}-dimension rows`);
      if (typeof keys !== 'number' && keys.length !== rows) throw new Error(`${keys.length} keys for ${rows} vectors`);
      if (rows === 0) return;
      const native64 = new BigUint64Array(rows);
      for (let row = 0; row < rows; row++) native64[row] = BigInt(typeof keys === 'number' ? keys + row : keys[row]!);
      native.add(native64, vectors, addThreads);
    },
    remove(keys) {
      if (keys.length === 0) return;
      native.remove(BigUint64Array.from(Array.from(keys, BigInt)));
    },
    search(query, k, allowed) {
      checkQuery(query, dims);
      const steps = oversampled(native.size(), k, allowed);
      let step = steps.next();
      while (!step.done) step = steps.next(Uint32Array.from(nearest(query, step.value), Number));
      return step.value;
    },
    save(file) {
      native.save(file);
    },
  };
}

/**
 * The search's plan, one native search (the nearest `wanted` keys) at a time: the nearest `k`
 * keys, or with `allowed` the nearest `k` allowed ones, oversampling by the filter's selectivity
 * and again while too few allowed keys come back. The in-process index runs it at once, the
 * serving worker's adapter one message at a time (vector-index-worker.ts).
 */
export function* oversampled(size: number, k: number, allowed: Uint8Array | undefined): Generator<number, Uint32Array, Uint32Array> {
  if (size === 0 || k <= 0) return new Uint32Array(0);
  if (!allowed) return yield Math.min(k, size);
  let allowedCount = 0;
  for (let key = 0; key < allowed.length; key++) allowedCount += allowed[key]!;
  if (allowedCount === 0) return new Uint32Array(0);
  let wanted = Math.min(size, Math.ceil((k * size) / allowedCount) * 2);
  for (;;) {
    const found: number[] = [];
    for (const key of yield wanted) {
      if (allowed[key] === 1) found.push(key);
      if (found.length === k) break;
    }
    if (found.length === k || wanted >= size || wanted >= MAX_OVERSAMPLED) return Uint32Array.from(found);
    wanted = Math.min(size, MAX_OVERSAMPLED, wanted * 4);
  }
}
