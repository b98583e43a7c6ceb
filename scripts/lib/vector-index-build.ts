/**
 * The approximate vector index of the search (docs/decisions/0018-vector-index.md), built
 * beside vectors.f32 when the passages reach the threshold; below it the server scans them
 * all and no index is written.
 *
 * A build over a previous one grows the previous index instead of building it again when few
 * passages changed: a passage the previous build had (the same record, the same text, so the
 * same vector from the embedding cache) keeps its key in the index, a new one is added under a
 * new key, a gone one is removed; meta.json's `chunk_keys` then says which key each chunk has.
 *
 * From QUANTIZE_FROM passages on, the vectors are written as int8 too (vectors.i8), as the server holds them there.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { approximatePathApplies } from '../../core/search/chunk-scan.ts';
import { quantizedCodesAt, quantizeRow } from '../../core/search/vector-scan.ts';
import { createVectorIndex, loadVectorIndex } from '../../providers/vector-index.ts';
import { matchPassages } from './passage-match.ts';

/** Above this share of the passages added or removed, the index is built again: a graph patched that much is worse than a new one. */
export const REBUILD_SHARE = 0.2;

/** What the previous build's index holds: each of its chunks' identity (previous-search.ts) and key. */
export interface PreviousIndex {
  file: string;
  embedderId: string;
  dims: number;
  identities: readonly string[];
  keys: Uint32Array;
}

export interface IndexWritten {
  /** Each chunk's key, when not its own number (an index grown from a previous build's). */
  chunkKeys?: Uint32Array;
  /** Grown from the previous build's index: passages added and removed. */
  grown?: { added: number; removed: number };
}

export async function writeVectorIndex(
  file: string,
  vectors: Float32Array,
  dims: number,
  approximateFrom: number,
  log: (line: string) => void,
  grow?: { previous: PreviousIndex | undefined; embedderId: string; identities: readonly string[]; matched?: Int32Array },
): Promise<IndexWritten | undefined> {
  const chunks = vectors.length / dims;
  if (!approximatePathApplies(chunks, approximateFrom)) return undefined;
  const started = Date.now();
  const previous = grow?.previous;
  if (grow && previous && previous.embedderId === grow.embedderId && previous.dims === dims) {
    const plan = planKeys(previous, grow.identities, grow.matched);
    if (plan.added.length + plan.removed.length <= REBUILD_SHARE * chunks) {
      const index = await loadVectorIndex(previous.file, dims);
      index.remove(plan.removed);
      const rows = new Float32Array(plan.added.length * dims);
      plan.added.forEach((chunk, row) => rows.set(vectors.subarray(chunk * dims, (chunk + 1) * dims), row * dims));
      index.add(
        rows,
        Uint32Array.from(plan.added, (chunk) => plan.keys[chunk]!),
      );
      if (index.size !== chunks) throw new Error(`the grown vector index holds ${index.size} passages, the search ${chunks}`);
      index.save(file);
      log(
        `grew the approximate index of ${previous.keys.length} passages: ${plan.added.length} added, ${plan.removed.length} removed, in ${Date.now() - started} ms`,
      );
      const identity = plan.keys.every((key, chunk) => key === chunk);
      return { ...(identity ? {} : { chunkKeys: plan.keys }), grown: { added: plan.added.length, removed: plan.removed.length } };
    }
    log(`${plan.added.length} passages added and ${plan.removed.length} removed: more than ${REBUILD_SHARE * 100} % of the index, built again`);
  }
  const index = await createVectorIndex(dims);
  index.add(vectors, 0);
  index.save(file);
  log(`indexed ${chunks} passage vectors for approximate search in ${Date.now() - started} ms`);
  return {};
}

/**
 * Keys for the new chunks: a previous passage's key where it is still there (`matched`: each
 * chunk's previous chunk, or -1), new keys after the previous largest for the rest.
 */
export function planKeys(
  previous: Pick<PreviousIndex, 'identities' | 'keys'>,
  identities: readonly string[],
  matched: Int32Array = matchPassages(identities, previous.identities),
): { keys: Uint32Array; added: number[]; removed: number[] } {
  let next = 0;
  for (const key of previous.keys) next = Math.max(next, key + 1);
  const taken = new Uint8Array(previous.keys.length);
  const keys = new Uint32Array(identities.length);
  const added: number[] = [];
  matched.forEach((from, chunk) => {
    if (from < 0) {
      keys[chunk] = next++;
      added.push(chunk);
    } else {
      keys[chunk] = previous.keys[from]!;
      taken[from] = 1;
    }
  });
  const removed: number[] = [];
  taken.forEach((kept, from) => {
    if (!kept) removed.push(previous.keys[from]!);
  });
  return { keys, added, removed };
}

/** SEARCH_APPROXIMATE_FROM: the threshold of the build's environment, when set (benchmarks force 0). */
export function approximateFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const value = env.SEARCH_APPROXIMATE_FROM;
  if (value === undefined || value === '') return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`SEARCH_APPROXIMATE_FROM must be a whole number of passages, not ${JSON.stringify(value)}`);
  return parsed;
}

/** Rows quantized and written together. */
const QUANTIZED_BLOCK = 4096;

/**
 * The vectors as the approximate path holds them from QUANTIZE_FROM passages on (vector-scan.ts):
 * each row's scale (float32, all rows first), then each row's int8 codes. The server reads this
 * quarter of vectors.f32 straight into its scan memory, quantizing nothing.
 */
export function writeQuantizedVectors(file: string, vectors: Float32Array, dims: number): void {
  const count = vectors.length / dims;
  const scales = new Float32Array(count);
  const codes = new Int8Array(Math.min(count, QUANTIZED_BLOCK) * dims);
  const fd = openSync(file, 'w');
  try {
    for (let first = 0; first < count; first += QUANTIZED_BLOCK) {
      const rows = Math.min(QUANTIZED_BLOCK, count - first);
      for (let row = 0; row < rows; row++) scales[first + row] = quantizeRow(vectors, first + row, dims, codes, row * dims);
      writeAll(fd, new Uint8Array(codes.buffer, 0, rows * dims), quantizedCodesAt(count) + first * dims);
    }
    writeAll(fd, new Uint8Array(scales.buffer), 0);
  } finally {
    closeSync(fd);
  }
}

function writeAll(fd: number, bytes: Uint8Array, position: number): void {
  for (let written = 0; written < bytes.length;) written += writeSync(fd, bytes, written, bytes.length - written, position + written);
}
