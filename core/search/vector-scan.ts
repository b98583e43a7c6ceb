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

/**
 * How the rows are held: float32 as the build wrote them, or int8 with a scale per row (a
 * quarter of the memory: 512 MB rather than 2 GB at a million passages of 512 dimensions),
 * their products taken with the question quantized to int16 (quantizeRow, quantizeQuery). The
 * approximate path holds int8 (search-index.ts); int8 needs the WebAssembly kernel.
 */
export type ScanPrecision = 'f32' | 'i8';

export interface VectorScanner {
  readonly kernel: ScanKernel;
  readonly precision: ScanPrecision;
  readonly count: number;
  readonly dims: number;
  /** The listed rows as float32, one after another (under int8, as its codes give them back). */
  rowsOf(rows: ArrayLike<number>): Float32Array;
  /** A scanner of the listed rows only, in their order: the same kernel and precision, the same products. */
  subset(rows: ArrayLike<number>): VectorScanner;
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
 * and calls, for float32 rows, its `dotsOf(vectorsAt, dims, queryAt, rowsAt, n, outAt)`, and for
 * int8 rows `dotsOf8(vectorsAt, scalesAt, dims, queryAt, qscale, rowsAt, n, outAt)` with the
 * question quantized by quantizeQuery (providers/vector-index-worker.ts).
 */
export interface SharedScan {
  module: WebAssembly.Module;
  memory: WebAssembly.Memory;
  precision: ScanPrecision;
  dims: number;
  count: number;
  /** The rows: float32, or int8 codes with their scales (f32 per row) at scalesAt. */
  vectorsAt: number;
  scalesAt: number;
  /** The second thread's regions: the query, up to `count` rows, their dot products. */
  queryAt: number;
  rowsAt: number;
  outAt: number;
}

/** Vectors to be read straight into the scanner's memory (a file), without a copy in between. */
export interface VectorSource {
  /** Number of floats (rows × dims). */
  readonly floats: number;
  /** Fills `target` with the little-endian float32 data from byte `fromByte` on (0: the start). */
  readInto(target: Uint8Array, fromByte?: number): void;
  /**
   * The same rows already quantized (a build's vectors.i8: quantizedCodesAt), read straight into an
   * int8 scanner's codes and scales; without it, an int8 scanner quantizes the floats as it reads them.
   */
  readQuantized?(codes: Uint8Array, scales: Uint8Array): void;
}

export interface VectorScannerOptions {
  /** Force a kernel (benchmarks and tests); default: WebAssembly SIMD when it can run. */
  kernel?: ScanKernel;
  /** int8 rows (where the WebAssembly kernel runs; float32 otherwise); default float32. */
  precision?: ScanPrecision;
}

interface DotExports {
  dots(vectors: number, count: number, dims: number, query: number, mask: number, out: number): void;
  dotsOf(vectors: number, dims: number, query: number, rows: number, n: number, out: number): void;
  dots8(codes: number, scales: number, count: number, dims: number, query: number, qscale: number, mask: number, out: number): void;
  dotsOf8(codes: number, scales: number, dims: number, query: number, qscale: number, rows: number, n: number, out: number): void;
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

/** The largest int8 code, and the largest int16 a quantized question holds (two products of them summed stay far inside an int32 lane). */
const CODE_MAX = 127;
const QUERY_MAX = 16383;

/**
 * Row `row` of `source` (dims floats from `row * dims`) as int8 codes into `codes` at `at`:
 * each component over the row's largest magnitude, times 127, rounded. Returns the row's
 * scale (what a code times gives the component back); 0 for a row of zeros.
 */
export function quantizeRow(source: Float32Array, row: number, dims: number, codes: Int8Array, at: number): number {
  const from = row * dims;
  let largest = 0;
  for (let d = 0; d < dims; d++) largest = Math.max(largest, Math.abs(source[from + d]!));
  if (largest === 0) {
    codes.fill(0, at, at + dims);
    return 0;
  }
  const factor = CODE_MAX / largest;
  for (let d = 0; d < dims; d++) codes[at + d] = Math.round(source[from + d]! * factor);
  return largest / CODE_MAX;
}

/** Where a quantized vectors file's codes begin: after each row's scale (float32), all rows' first (scripts/lib/vector-index-build.ts). */
export const quantizedCodesAt = (count: number): number => count * 4;

/** The bytes of a quantized vectors file of `count` rows. */
export const quantizedFileBytes = (count: number, dims: number): number => quantizedCodesAt(count) + count * dims;

/** The question as int16 into `target` (its largest magnitude at 16383); returns its scale. */
export function quantizeQuery(query: Float32Array, target: Int16Array): number {
  let largest = 0;
  for (let d = 0; d < query.length; d++) largest = Math.max(largest, Math.abs(query[d]!));
  if (largest === 0) {
    target.fill(0, 0, query.length);
    return 0;
  }
  const factor = QUERY_MAX / largest;
  for (let d = 0; d < query.length; d++) target[d] = Math.round(query[d]! * factor);
  return largest / QUERY_MAX;
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
  const wanted = options.kernel ?? 'wasm-simd';
  const module = wanted === 'wasm-simd' && dims % 16 === 0 ? dotModule() : null;
  if (!module) return jsScanner(source instanceof Float32Array ? source : readWhole(source), count, dims);
  if (options.precision === 'i8') {
    return int8Scanner(module, count, dims, (codes, scales) =>
      !(source instanceof Float32Array) && source.readQuantized
        ? source.readQuantized(
            new Uint8Array(codes.buffer, codes.byteOffset, codes.byteLength),
            new Uint8Array(scales.buffer, scales.byteOffset, scales.byteLength),
          )
        : quantizeSource(source, dims, codes, scales),
    );
  }
  return float32Scanner(module, count, dims, (target) => {
    if (source instanceof Float32Array) target.set(source);
    else source.readInto(new Uint8Array(target.buffer, target.byteOffset, target.byteLength));
  });
}

function readWhole(source: VectorSource): Float32Array {
  const vectors = new Float32Array(source.floats);
  source.readInto(new Uint8Array(vectors.buffer));
  return vectors;
}

/** Rows read (from a file, in blocks of this many) and quantized into the int8 scanner's memory. */
const QUANTIZE_BLOCK = 4096;

function quantizeSource(source: Float32Array | VectorSource, dims: number, codes: Int8Array, scales: Float32Array): void {
  const count = scales.length;
  if (source instanceof Float32Array) {
    for (let row = 0; row < count; row++) scales[row] = quantizeRow(source, row, dims, codes, row * dims);
    return;
  }
  const block = new Float32Array(Math.min(count, QUANTIZE_BLOCK) * dims);
  for (let first = 0; first < count; first += QUANTIZE_BLOCK) {
    const rows = Math.min(QUANTIZE_BLOCK, count - first);
    source.readInto(new Uint8Array(block.buffer, 0, rows * dims * 4), first * dims * 4);
    for (let row = 0; row < rows; row++) scales[first + row] = quantizeRow(block, row, dims, codes, (first + row) * dims);
  }
}

/**
 * The kernel's memory: [rows][scales][query][mask][out][rows][rows' out], then the second
 * thread's [query][rows][rows' out], each 16-byte aligned. Shared, so another thread can read
 * the rows as they are; pages never written (most of the second thread's) take no memory.
 */
function kernelMemory(module: WebAssembly.Module, count: number, dims: number, rowBytes: number, scaleBytes: number) {
  const vectorsAt = 0;
  const scalesAt = align16(count * rowBytes);
  const queryAt = scalesAt + align16(count * scaleBytes);
  const maskAt = queryAt + align16(dims * 4);
  const outAt = maskAt + align16(count);
  const rowsAt = outAt + align16(count * 4);
  const rowsOutAt = rowsAt + align16(count * 4);
  const second = { queryAt: rowsOutAt + align16(count * 4), rowsAt: 0, outAt: 0 };
  second.rowsAt = second.queryAt + align16(dims * 4);
  second.outAt = second.rowsAt + align16(count * 4);
  const pages = Math.ceil((second.outAt + align16(count * 4)) / PAGE);
  if (pages > MAX_PAGES) throw new Error(`${count} vectors of ${dims} dimensions do not fit the scan kernel's 4 GB memory`);
  const memory = new WebAssembly.Memory({ initial: Math.max(1, pages), maximum: MAX_PAGES, shared: true });
  const exports = new WebAssembly.Instance(module, { env: { memory } }).exports as unknown as DotExports;
  const buffer = memory.buffer;
  return {
    exports,
    at: { vectorsAt, scalesAt, queryAt, maskAt, outAt, rowsAt, rowsOutAt },
    second,
    mask: new Uint8Array(buffer, maskAt, count),
    out: new Float32Array(buffer, outAt, count),
    rowList: new Uint32Array(buffer, rowsAt, count),
    rowsOut: new Float32Array(buffer, rowsOutAt, count),
    shared: (precision: ScanPrecision): SharedScan => ({ module, memory, precision, dims, count, vectorsAt, scalesAt, ...second }),
  };
}

function float32Scanner(module: WebAssembly.Module, count: number, dims: number, fill: (target: Float32Array) => void): VectorScanner {
  const kernel = kernelMemory(module, count, dims, dims * 4, 0);
  const { exports, at, mask, out, rowList, rowsOut } = kernel;
  const vectors = new Float32Array(kernel.shared('f32').memory.buffer, at.vectorsAt, count * dims);
  fill(vectors);
  const query = new Float32Array(vectors.buffer, at.queryAt, dims);
  const rowsOf = (rows: ArrayLike<number>) => gatherRows(vectors, dims, rows);
  return {
    kernel: 'wasm-simd',
    precision: 'f32',
    count,
    dims,
    rowsOf,
    subset: (rows) => float32Scanner(module, rows.length, dims, (target) => target.set(rowsOf(rows))),
    shared: kernel.shared('f32'),
    dots(queryVector, chunkMask) {
      checkQuery(queryVector, dims);
      query.set(queryVector);
      if (chunkMask) mask.set(chunkMask);
      else mask.fill(1);
      exports.dots(at.vectorsAt, count, dims, at.queryAt, at.maskAt, at.outAt);
      return out;
    },
    dotsOf(queryVector, rows) {
      checkQuery(queryVector, dims);
      checkRows(rows, count);
      query.set(queryVector);
      rowList.set(rows);
      exports.dotsOf(at.vectorsAt, dims, at.queryAt, at.rowsAt, rows.length, at.rowsOutAt);
      return rowsOut.subarray(0, rows.length);
    },
  };
}

function int8Scanner(module: WebAssembly.Module, count: number, dims: number, fill: (codes: Int8Array, scales: Float32Array) => void): VectorScanner {
  const kernel = kernelMemory(module, count, dims, dims, 4);
  const { exports, at, mask, out, rowList, rowsOut } = kernel;
  const buffer = kernel.shared('i8').memory.buffer;
  const codes = new Int8Array(buffer, at.vectorsAt, count * dims);
  const scales = new Float32Array(buffer, at.scalesAt, count);
  fill(codes, scales);
  const query = new Int16Array(buffer, at.queryAt, dims);
  function rowsOf(rows: ArrayLike<number>): Float32Array {
    const values = new Float32Array(rows.length * dims);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      if (row >= count) throw new Error(`no row ${row} among ${count}`);
      for (let d = 0; d < dims; d++) values[i * dims + d] = codes[row * dims + d]! * scales[row]!;
    }
    return values;
  }
  return {
    kernel: 'wasm-simd',
    precision: 'i8',
    count,
    dims,
    rowsOf,
    subset: (rows) =>
      int8Scanner(module, rows.length, dims, (subsetCodes, subsetScales) => {
        for (let i = 0; i < rows.length; i++) {
          const row = rows[i]!;
          subsetCodes.set(codes.subarray(row * dims, (row + 1) * dims), i * dims);
          subsetScales[i] = scales[row]!;
        }
      }),
    shared: kernel.shared('i8'),
    dots(queryVector, chunkMask) {
      checkQuery(queryVector, dims);
      const qscale = quantizeQuery(queryVector, query);
      if (chunkMask) mask.set(chunkMask);
      else mask.fill(1);
      exports.dots8(at.vectorsAt, at.scalesAt, count, dims, at.queryAt, qscale, at.maskAt, at.outAt);
      return out;
    },
    dotsOf(queryVector, rows) {
      checkQuery(queryVector, dims);
      checkRows(rows, count);
      const qscale = quantizeQuery(queryVector, query);
      rowList.set(rows);
      exports.dotsOf8(at.vectorsAt, at.scalesAt, dims, at.queryAt, qscale, at.rowsAt, rows.length, at.rowsOutAt);
      return rowsOut.subarray(0, rows.length);
    },
  };
}

/** The listed rows of float32 `vectors` copied one after another. */
function gatherRows(vectors: Float32Array, dims: number, rows: ArrayLike<number>): Float32Array {
  const count = vectors.length / dims;
  const values = new Float32Array(rows.length * dims);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    if (row >= count) throw new Error(`no row ${row} among ${count}`);
    values.set(vectors.subarray(row * dims, (row + 1) * dims), i * dims);
  }
  return values;
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
  const rowsOf = (rows: ArrayLike<number>) => gatherRows(vectors, dims, rows);
  return {
    kernel: 'js',
    precision: 'f32',
    count,
    dims,
    rowsOf,
    subset: (rows) => jsScanner(rowsOf(rows), rows.length, dims),
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
