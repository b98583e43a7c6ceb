/**
 * Brute-force cosine scan over unit-length chunk vectors. The default kernel is a small
 * WebAssembly SIMD module (dot.wat: four f32x4 accumulators), several times faster than a
 * scalar JavaScript loop (`npm run bench`: bench/scale.ts prints both, measured in the same
 * run); the JavaScript kernel is the fallback where WebAssembly SIMD is missing or the
 * dimension is not a multiple of 16. Both give the same dot products up to float
 * rounding (test/vector-scan.test.ts).
 */
import { DOT_WASM_BASE64 } from './dot-wasm.ts';

export type ScanKernel = 'wasm-simd' | 'js';

export interface VectorScanner {
  readonly kernel: ScanKernel;
  readonly count: number;
  readonly dims: number;
  /** The stored vectors, row after row (a view into the kernel's memory when it has one). */
  readonly vectors: Float32Array;
  /**
   * Dot product of `query` with every stored vector; -2 where `chunkMask[chunk]` is 0.
   * The array may be the kernel's own output buffer: read it before the next call.
   */
  dots(query: Float32Array, chunkMask?: Uint8Array): Float32Array;
  /**
   * Dot products of `query` with the listed rows only, in their order: the same values `dots`
   * gives them (the same kernel). The array may be the kernel's own buffer: read it before the next call.
   */
  dotsOf(query: Float32Array, rows: Uint32Array): Float32Array;
  /**
   * What another thread needs to run the same kernel over the same vectors (the WebAssembly
   * kernel only, whose memory is shared): its own query, rows and output regions are set apart
   * here. The JavaScript kernel has none.
   */
  readonly shared?: SharedScan | undefined;
}

/**
 * The kernel and its memory for a second thread, which instantiates the module over the memory
 * and calls its `dotsOf(vectorsAt, dims, queryAt, rowsAt, n, outAt)` (providers/vector-index-worker.ts).
 */
export interface SharedScan {
  module: WebAssembly.Module;
  memory: WebAssembly.Memory;
  dims: number;
  count: number;
  vectorsAt: number;
  /** The second thread's regions: the query, up to `count` rows, their dot products. */
  queryAt: number;
  rowsAt: number;
  outAt: number;
}

/** Vectors to be read straight into the scanner's memory (a file), without a copy in between. */
export interface VectorSource {
  /** Number of floats (rows × dims). */
  readonly floats: number;
  /** Fills `target` (floats × 4 bytes) with the little-endian float32 data. */
  readInto(target: Uint8Array): void;
}

export interface VectorScannerOptions {
  /** Force a kernel (benchmarks and tests); default: WebAssembly SIMD when it can run. */
  kernel?: ScanKernel;
}

interface DotExports {
  dots(vectors: number, count: number, dims: number, query: number, mask: number, out: number): void;
  dotsOf(vectors: number, dims: number, query: number, rows: number, n: number, out: number): void;
}

let compiled: WebAssembly.Module | null | undefined;

/** The compiled kernel (dot.wat), or null where WebAssembly SIMD does not run. */
export function dotModule(): WebAssembly.Module | null {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(Buffer.from(DOT_WASM_BASE64, 'base64'));
    } catch {
      compiled = null; // no WebAssembly SIMD on this runtime
    }
  }
  return compiled;
}

/** Throws unless `query` has `dims` dimensions (every scan, and the index's search). */
export function checkQuery(query: Float32Array, dims: number): void {
  if (query.length !== dims) throw new Error(`query has ${query.length} dimensions, the index ${dims}`);
}

/** Throws unless every listed row is one of `count`, and there are no more of them than rows. */
export function checkRows(rows: Uint32Array, count: number): void {
  if (rows.length > count) throw new Error(`${rows.length} rows asked of ${count}`);
  for (const row of rows) if (row >= count) throw new Error(`no row ${row} among ${count}`);
}

const PAGE = 65536;
/** The kernel's memory at most (its declared maximum): 4 GB. */
const MAX_PAGES = 65536;
const align16 = (bytes: number) => Math.ceil(bytes / 16) * 16;

export function createVectorScanner(source: Float32Array | VectorSource, dims: number, options: VectorScannerOptions = {}): VectorScanner {
  const floats = source instanceof Float32Array ? source.length : source.floats;
  if (dims <= 0 || floats % dims !== 0) throw new Error(`vector data of ${floats} floats is not a whole number of ${dims}-dimension rows`);
  const count = floats / dims;
  const fill = (target: Float32Array) => {
    if (source instanceof Float32Array) target.set(source);
    else source.readInto(new Uint8Array(target.buffer, target.byteOffset, target.byteLength));
  };
  const wanted = options.kernel ?? 'wasm-simd';
  const module = wanted === 'wasm-simd' && dims % 16 === 0 ? dotModule() : null;
  if (!module) {
    if (source instanceof Float32Array) return jsScanner(source, count, dims);
    const vectors = new Float32Array(floats);
    fill(vectors);
    return jsScanner(vectors, count, dims);
  }

  // Memory layout: [vectors][query][mask][out][rows][rows' out], then the second thread's
  // [query][rows][rows' out], each 16-byte aligned. Shared, so another thread can read the
  // vectors as they are; pages never written (most of the second thread's) take no memory.
  const vectorsAt = 0;
  const queryAt = align16(floats * 4);
  const maskAt = queryAt + align16(dims * 4);
  const outAt = maskAt + align16(count);
  const rowsAt = outAt + align16(count * 4);
  const rowsOutAt = rowsAt + align16(count * 4);
  const second = { queryAt: rowsOutAt + align16(count * 4), rowsAt: 0, outAt: 0 };
  second.rowsAt = second.queryAt + align16(dims * 4);
  second.outAt = second.rowsAt + align16(count * 4);
  const total = second.outAt + align16(count * 4);
  const pages = Math.ceil(total / PAGE);
  if (pages > MAX_PAGES) throw new Error(`${count} vectors of ${dims} dimensions do not fit the scan kernel's 4 GB memory`);
  const memory = new WebAssembly.Memory({ initial: pages, maximum: MAX_PAGES, shared: true });
  const instance = new WebAssembly.Instance(module, { env: { memory } });
  const exports = instance.exports as unknown as DotExports;
  const buffer = memory.buffer;
  const vectors = new Float32Array(buffer, vectorsAt, floats);
  fill(vectors);
  const query = new Float32Array(buffer, queryAt, dims);
  const mask = new Uint8Array(buffer, maskAt, count);
  const out = new Float32Array(buffer, outAt, count);
  const rowList = new Uint32Array(buffer, rowsAt, count);
  const rowsOut = new Float32Array(buffer, rowsOutAt, count);

  return {
    kernel: 'wasm-simd',
    count,
    dims,
    vectors,
    shared: { module, memory, dims, count, vectorsAt, ...second },
    dots(queryVector, chunkMask) {
      checkQuery(queryVector, dims);
      query.set(queryVector);
      if (chunkMask) mask.set(chunkMask);
      else mask.fill(1);
      exports.dots(vectorsAt, count, dims, queryAt, maskAt, outAt);
      return out;
    },
    dotsOf(queryVector, rows) {
      checkQuery(queryVector, dims);
      checkRows(rows, count);
      query.set(queryVector);
      rowList.set(rows);
      exports.dotsOf(vectorsAt, dims, queryAt, rowsAt, rows.length, rowsOutAt);
      return rowsOut.subarray(0, rows.length);
    },
  };
}

/**
 * One row's dot product with the query, in four independent sums (the JavaScript kernel, and
 * the approximate path's exact re-scoring of a shortlist, chunk-scan.ts).
 */
export function dotAt(vectors: Float32Array, offset: number, query: Float32Array, dims: number): number {
  let d0 = 0;
  let d1 = 0;
  let d2 = 0;
  let d3 = 0;
  let d = 0;
  for (; d + 3 < dims; d += 4) {
    d0 += vectors[offset + d]! * query[d]!;
    d1 += vectors[offset + d + 1]! * query[d + 1]!;
    d2 += vectors[offset + d + 2]! * query[d + 2]!;
    d3 += vectors[offset + d + 3]! * query[d + 3]!;
  }
  for (; d < dims; d++) d0 += vectors[offset + d]! * query[d]!;
  return d0 + d1 + d2 + d3;
}

function jsScanner(vectors: Float32Array, count: number, dims: number): VectorScanner {
  return {
    kernel: 'js',
    count,
    dims,
    vectors,
    dots(query, chunkMask) {
      checkQuery(query, dims);
      const out = new Float32Array(count);
      for (let chunk = 0, offset = 0; chunk < count; chunk++, offset += dims) {
        if (chunkMask && chunkMask[chunk] === 0) {
          out[chunk] = -2;
          continue;
        }
        out[chunk] = dotAt(vectors, offset, query, dims);
      }
      return out;
    },
    dotsOf(query, rows) {
      checkQuery(query, dims);
      checkRows(rows, count);
      return Float32Array.from(rows, (row) => dotAt(vectors, row * dims, query, dims));
    },
  };
}
