/**
 * The vector side of the search: the best cosine per record and the chunk that gave it.
 * Two paths give it (docs/decisions/0018-vector-index.md):
 *   - exact: every allowed chunk's dot product (vector-scan.ts), the reference and the
 *     default below `approximateFrom` chunks;
 *   - approximate: a shortlist of chunks from the approximate index plus the chunks of the
 *     records that words rank best, all re-scored exactly on the stored float vectors. A
 *     record outside the shortlist has no cosine (-2), as a record outside the filters does.
 *     A filter so selective that the index cannot find enough allowed chunks falls back to
 *     the exact scan; a filter that leaves few chunks is scanned exactly at once.
 */
import type { ApproximateVectorIndex } from '../ports/vector-index.ts';
import { dotAt, type VectorScanner } from './vector-scan.ts';

/** Below this many chunks the exact scan is the default (measured by bench/ann.ts; ADR 0018). */
export const APPROXIMATE_FROM = 50_000;

/** The approximate index is built and used only from `approximateFrom` chunks on. */
export function approximatePathApplies(chunkCount: number, approximateFrom: number): boolean {
  return chunkCount > 0 && chunkCount >= approximateFrom;
}

export interface RecordCosines {
  /** Best cosine per record; -2 where the record is not allowed or not in the shortlist. */
  best: Float32Array;
  /** The chunk that gave it, -1 where none. */
  bestChunk: Int32Array;
}

export interface ChunkScan {
  readonly approximate: boolean;
  /** Over the records `mask` allows; `lexical` (word scores per record) adds its best records to the shortlist. */
  scan(query: Float32Array, mask: Uint8Array, lexical?: Float64Array): RecordCosines;
  /** Over the records of `pool` only, every chunk of them (the feedback's second scan). */
  scanPool(query: Float32Array, pool: Uint8Array): RecordCosines;
}

export interface ChunkScanInput {
  scanner: VectorScanner;
  chunkRecords: Uint32Array;
  recordCount: number;
  approximate?: ApproximateVectorIndex | undefined;
  approximateFrom: number;
  /** Chunks asked of the index, and records taken from the word ranking, per scan. */
  shortlist: number;
}

export function createChunkScan(input: ChunkScanInput): ChunkScan {
  const { scanner, chunkRecords, recordCount, approximate, shortlist } = input;
  const dims = scanner.dims;
  const vectors = scanner.vectors;
  const chunkCount = chunkRecords.length;
  const empty = (): RecordCosines => ({ best: new Float32Array(recordCount).fill(-2), bestChunk: new Int32Array(recordCount).fill(-1) });

  function exact(query: Float32Array, mask: Uint8Array): RecordCosines {
    const cosines = empty();
    let chunkMask: Uint8Array | undefined;
    if (mask.includes(0)) {
      chunkMask = new Uint8Array(chunkCount);
      for (let chunk = 0; chunk < chunkCount; chunk++) chunkMask[chunk] = mask[chunkRecords[chunk]!]!;
    }
    const dots = scanner.dots(query, chunkMask);
    for (let chunk = 0; chunk < chunkCount; chunk++) {
      const record = chunkRecords[chunk]!;
      if (mask[record] === 0) continue;
      keepBest(cosines, record, chunk, dots[chunk]!);
    }
    return cosines;
  }

  if (!approximate || !approximatePathApplies(chunkCount, input.approximateFrom)) {
    return { approximate: false, scan: (query, mask) => exact(query, mask), scanPool: (query, pool) => exact(query, pool) };
  }
  if (approximate.size !== chunkCount) throw new Error(`the vector index holds ${approximate.size} chunks, the search ${chunkCount}: rebuild`);
  if (approximate.dims !== dims) throw new Error(`the vector index has ${approximate.dims} dimensions, the search ${dims}: rebuild`);
  const chunksOf = recordChunks(chunkRecords, recordCount);

  /** Exact cosines of the given chunks, the best per allowed record kept. */
  function rescore(query: Float32Array, chunks: Iterable<number>, mask: Uint8Array, cosines = empty()): RecordCosines {
    for (const chunk of chunks) {
      const record = chunkRecords[chunk]!;
      if (mask[record] === 0) continue;
      keepBest(cosines, record, chunk, dotAt(vectors, chunk * dims, query, dims));
    }
    return cosines;
  }

  function allChunksOf(records: Iterable<number>): number[] {
    const chunks: number[] = [];
    for (const record of records) for (let at = chunksOf.start[record]!; at < chunksOf.start[record + 1]!; at++) chunks.push(chunksOf.chunks[at]!);
    return chunks;
  }

  return {
    approximate: true,
    scan(query, mask, lexical) {
      let allowedChunks = chunkCount;
      let chunkMask: Uint8Array | undefined;
      if (mask.includes(0)) {
        chunkMask = new Uint8Array(chunkCount);
        allowedChunks = 0;
        for (let chunk = 0; chunk < chunkCount; chunk++) allowedChunks += chunkMask[chunk] = mask[chunkRecords[chunk]!]!;
        // Few enough allowed chunks to re-score them all: exact, and cheaper than asking the index.
        if (allowedChunks <= shortlist * 4) return rescore(query, allowedChunkList(chunkMask), mask);
      }
      const near = approximate.search(query, shortlist, chunkMask);
      if (near.length < Math.min(shortlist, allowedChunks)) return exact(query, mask);
      const cosines = rescore(query, near, mask);
      return lexical ? rescore(query, allChunksOf(bestRecords(lexical, mask, shortlist)), mask, cosines) : cosines;
    },
    scanPool(query, pool) {
      const records: number[] = [];
      for (let record = 0; record < recordCount; record++) if (pool[record] === 1) records.push(record);
      return rescore(query, allChunksOf(records), pool);
    },
  };
}

function keepBest(cosines: RecordCosines, record: number, chunk: number, cosine: number): void {
  if (cosine > cosines.best[record]!) {
    cosines.best[record] = cosine;
    cosines.bestChunk[record] = chunk;
  }
}

/** Each record's chunks, as offsets into one list (chunks need not be contiguous per record). */
function recordChunks(chunkRecords: Uint32Array, recordCount: number): { start: Uint32Array; chunks: Uint32Array } {
  const start = new Uint32Array(recordCount + 1);
  for (const record of chunkRecords) start[record + 1]!++;
  for (let record = 0; record < recordCount; record++) start[record + 1]! += start[record]!;
  const next = start.slice(0, recordCount);
  const chunks = new Uint32Array(chunkRecords.length);
  chunkRecords.forEach((record, chunk) => (chunks[next[record]!++] = chunk));
  return { start, chunks };
}

function allowedChunkList(chunkMask: Uint8Array): number[] {
  const chunks: number[] = [];
  for (let chunk = 0; chunk < chunkMask.length; chunk++) if (chunkMask[chunk] === 1) chunks.push(chunk);
  return chunks;
}

/** The allowed records with the `count` highest positive word scores (ties at the last included; no order among them). */
function bestRecords(lexical: Float64Array, mask: Uint8Array, count: number): number[] {
  const scored: number[] = [];
  for (let record = 0; record < lexical.length; record++) if (mask[record] === 1 && lexical[record]! > 0) scored.push(record);
  if (scored.length <= count) return scored;
  const values = Float64Array.from(scored, (record) => lexical[record]!).sort();
  const threshold = values[values.length - count]!;
  return scored.filter((record) => lexical[record]! >= threshold);
}
