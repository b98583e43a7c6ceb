/**
 * The approximate path's shortlist without a graph, below a few hundred thousand chunks: every
 * chunk's binary code (one sign bit a dimension, 64 bytes at 512) compared with the question's
 * by Hamming distance, the nearest `k` kept and then re-scored on the float vectors like the
 * index's shortlist (chunk-scan.ts). The graph (usearch, the same codes, ADR 0018) answers in
 * about as many comparisons as it walks, and at 100k chunks and k = 4,000 it walks a good part
 * of the corpus: the whole scan is the nearest codes themselves (not an approximation of them),
 * in a fraction of the time (bench/README.md, "The shortlist without the graph").
 *
 * Memory: the codes, dims / 8 bytes a chunk, in the kernel's own memory (dot.wat's `hamming`).
 */
import { dotModule } from './vector-scan.ts';

export interface BinaryScan {
  readonly count: number;
  /**
   * The `k` chunks whose codes are nearest the query's (of those `chunkMask` allows, every
   * chunk without it), ascending by chunk; ties at the cut taken in chunk order.
   */
  nearest(query: Float32Array, k: number, chunkMask?: Uint8Array): Uint32Array;
}

interface HammingExports {
  hamming(codes: number, count: number, words: number, query: number, mask: number, out: number): void;
}

/** A masked-off chunk's distance in the kernel's output. */
const MASKED = 65535;
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

/** The codes of `count` rows of `dims` floats, computed once here. */
export function createBinaryScan(vectors: Float32Array, dims: number): BinaryScan {
  const module = dotModule();
  if (!binaryScanSupported(dims) || !module) throw new Error(`no binary scan over ${dims} dimensions here`);
  const count = vectors.length / dims;
  const codeBytes = dims / 8;
  // Layout: [codes][query's code][mask][distances], each 16-byte aligned.
  const codesAt = 0;
  const queryAt = align16(count * codeBytes);
  const maskAt = queryAt + align16(codeBytes);
  const outAt = maskAt + align16(count);
  const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil((outAt + count * 4) / PAGE)), maximum: 65536, shared: true });
  const kernel = new WebAssembly.Instance(module, { env: { memory } }).exports as unknown as HammingExports;
  const bytes = new Uint8Array(memory.buffer);
  for (let row = 0; row < count; row++) signCode(vectors, row * dims, dims, bytes, codesAt + row * codeBytes);
  const mask = new Uint8Array(memory.buffer, maskAt, count);
  const distances = new Int32Array(memory.buffer, outAt, count);
  const histogram = new Uint32Array(dims + 1);

  return {
    count,
    nearest(query, k, chunkMask) {
      if (query.length !== dims) throw new Error(`query has ${query.length} dimensions, the codes ${dims}`);
      if (chunkMask && chunkMask.length !== count) throw new Error(`a mask of ${chunkMask.length} chunks for ${count}`);
      signCode(query, 0, dims, bytes, queryAt);
      if (chunkMask) mask.set(chunkMask);
      else mask.fill(1);
      kernel.hamming(codesAt, count, dims / 64, queryAt, maskAt, outAt);
      histogram.fill(0);
      let allowed = 0;
      for (let row = 0; row < count; row++) {
        const distance = distances[row]!;
        if (distance === MASKED) continue;
        histogram[distance]!++;
        allowed++;
      }
      const wanted = Math.min(Math.max(0, k), allowed);
      // The cut: the least distance at which `wanted` codes are reached; below it every code is
      // taken, at it the first in chunk order.
      let cut = 0;
      let below = 0;
      while (cut <= dims && below + histogram[cut]! < wanted) below += histogram[cut++]!;
      let atCut = wanted - below;
      const out = new Uint32Array(wanted);
      let at = 0;
      for (let row = 0; row < count && at < wanted; row++) {
        const distance = distances[row]!;
        if (distance < cut) out[at++] = row;
        else if (distance === cut && atCut > 0) {
          out[at++] = row;
          atCut--;
        }
      }
      return out;
    },
  };
}
