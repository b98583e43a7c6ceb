/**
 * The approximate path's shortlist without a graph, below a few hundred thousand chunks: every
 * chunk's binary code (one sign bit a dimension, 64 bytes at 512) compared with the question's
 * by Hamming distance, the nearest `k` kept and then re-scored on the float vectors like the
 * index's shortlist (chunk-scan.ts). The graph (usearch, the same codes, ADR 0018) answers in
 * about as many comparisons as it walks, and at 100k chunks and k = 4,000 it walks a good part
 * of the corpus: the whole scan is the nearest codes themselves (not an approximation of them),
 * in a fraction of the time (bench/README.md, "The shortlist without the graph").
 *
 * Memory: the codes, dims / 8 bytes a chunk, in the kernel's own memory (dot.wat's `hamming` and
 * `nearestRows`, which also pick the nearest), and per thread that scans them 9 bytes a chunk of
 * regions (the mask, the distances, the rows picked).
 */
import { dotModule, type VectorScanner } from './vector-scan.ts';

export interface BinaryScan {
  readonly count: number;
  /**
   * The `k` chunks whose codes are nearest the query's (of those `chunkMask` allows, every
   * chunk without it), ascending by chunk; ties at the cut taken in chunk order.
   */
  nearest(query: Float32Array, k: number, chunkMask?: Uint8Array): Uint32Array;
  /** What another thread needs to run the same scan over the same codes (regions of its own): providers/vector-index-worker.ts. */
  readonly shared: SharedCodes;
}

/**
 * The codes' kernel and memory for a second thread, which instantiates the module over the
 * memory, puts the query's code (signCode) and the mask in its own regions, and calls
 * `hamming(codesAt, count, words, queryAt, maskAt, outAt, histogramAt)` then
 * `nearestRows(outAt, count, histogramAt, words * 64, k, nearestAt)`.
 */
export interface SharedCodes {
  module: WebAssembly.Module;
  memory: WebAssembly.Memory;
  count: number;
  /** 64-bit words a code. */
  words: number;
  codesAt: number;
  queryAt: number;
  maskAt: number;
  outAt: number;
  histogramAt: number;
  nearestAt: number;
}

interface HammingExports {
  hamming(codes: number, count: number, words: number, query: number, mask: number, out: number, histogram: number): void;
  nearestRows(distances: number, count: number, histogram: number, most: number, k: number, out: number): number;
}

const PAGE = 65536;
const align16 = (bytes: number) => Math.ceil(bytes / 16) * 16;

/** Whether the codes can be scanned: the WebAssembly kernel runs, and a code is whole 64-bit words. */
export function binaryScanSupported(dims: number): boolean {
  return dims > 0 && dims % 64 === 0 && dotModule() !== null;
}

/** Sign bits of `vector` (1 where a component is above 0), little-endian within each byte, into `target`. */
export function signCode(vector: Float32Array, offset: number, dims: number, target: Uint8Array, at: number): void {
  for (let byte = 0; byte < dims / 8; byte++) {
    let bits = 0;
    for (let bit = 0; bit < 8; bit++) if (vector[offset + byte * 8 + bit]! > 0) bits |= 1 << bit;
    target[at + byte] = bits;
  }
}

/** A thread's regions: the query's code, the mask, the distances, their histogram, the nearest rows (at most every row). */
function regions(at: number, count: number, dims: number) {
  const queryAt = align16(at);
  const maskAt = queryAt + align16(dims / 8);
  const outAt = maskAt + align16(count);
  const histogramAt = outAt + align16(count * 4);
  const nearestAt = histogramAt + align16((dims + 1) * 4);
  return { queryAt, maskAt, outAt, histogramAt, nearestAt, end: nearestAt + align16(count * 4) };
}

/** Rows whose codes are computed together (their floats asked of the scanner at once). */
const CODE_BLOCK = 4096;

/** The codes of the scanner's rows (float32, or int8 read back: the same signs), computed once here. */
export function createBinaryScan(rows: Pick<VectorScanner, 'count' | 'dims' | 'rowsOf'>): BinaryScan {
  const { count, dims } = rows;
  const module = dotModule();
  if (!binaryScanSupported(dims) || !module) throw new Error(`no binary scan over ${dims} dimensions here`);
  const codeBytes = dims / 8;
  // Layout: [codes], then this thread's regions and another thread's (pages it never touches take no memory).
  const codesAt = 0;
  const own = regions(count * codeBytes, count, dims);
  const second = regions(own.end, count, dims);
  const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(second.end / PAGE)), maximum: 65536, shared: true });
  const kernel = new WebAssembly.Instance(module, { env: { memory } }).exports as unknown as HammingExports;
  const bytes = new Uint8Array(memory.buffer);
  for (let first = 0; first < count; first += CODE_BLOCK) {
    const block = rows.rowsOf(Array.from({ length: Math.min(CODE_BLOCK, count - first) }, (_, at) => first + at));
    for (let at = 0; at < block.length / dims; at++) signCode(block, at * dims, dims, bytes, codesAt + (first + at) * codeBytes);
  }
  const mask = new Uint8Array(memory.buffer, own.maskAt, count);
  const nearest = new Uint32Array(memory.buffer, own.nearestAt, count);
  const words = dims / 64;

  return {
    count,
    shared: {
      module,
      memory,
      count,
      words,
      codesAt,
      queryAt: second.queryAt,
      maskAt: second.maskAt,
      outAt: second.outAt,
      histogramAt: second.histogramAt,
      nearestAt: second.nearestAt,
    },
    nearest(query, k, chunkMask) {
      if (query.length !== dims) throw new Error(`query has ${query.length} dimensions, the codes ${dims}`);
      if (chunkMask && chunkMask.length !== count) throw new Error(`a mask of ${chunkMask.length} chunks for ${count}`);
      signCode(query, 0, dims, bytes, own.queryAt);
      if (chunkMask) mask.set(chunkMask);
      else mask.fill(1);
      kernel.hamming(codesAt, count, words, own.queryAt, own.maskAt, own.outAt, own.histogramAt);
      const n = kernel.nearestRows(own.outAt, count, own.histogramAt, dims, Math.max(0, Math.min(k, count)), own.nearestAt);
      return nearest.slice(0, n);
    },
  };
}
