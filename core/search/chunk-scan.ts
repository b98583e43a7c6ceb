/**
 * The vector side of the search: the best cosine per record and the chunk that gave it.
 * Two paths give it (docs/decisions/0018-vector-index.md):
 *   - exact: every allowed chunk's dot product (vector-scan.ts), the reference and the
 *     default below `approximateFrom` chunks;
 *   - approximate: a shortlist of chunks from the approximate index plus the chunks of the
 *     records that words rank best, all re-scored on the stored vectors (float32, bit for bit the
 *     exact scan's cosines; int8 from QUANTIZE_FROM chunks, within a few thousandths). A
 *     record outside the shortlist has no cosine (-2), as a record outside the filters does.
 *     A filter so selective that the index cannot find enough allowed chunks falls back to
 *     the exact scan, as does an index that fails; a filter that leaves few chunks is scanned
 *     exactly at once.
 */
import type { ApproximateVectorIndex, NearestCodes, RemoteCodes, RemoteNear } from '../ports/vector-index.ts';
import type { VectorScanner } from './vector-scan.ts';
import { binaryScanSupported, createBinaryScan, signCode, type SharedCodes } from './binary-scan.ts';
import { chunksOfRecords, passagesOf, recordChunks, type RecordChunks } from './record-chunks.ts';

/** Below this many chunks the exact scan is the default (measured by bench/ann.ts; ADR 0018). */
export const APPROXIMATE_FROM = 50_000;

/**
 * Below this many chunks the approximate path's shortlist is the nearest binary codes by a
 * whole scan (binary-scan.ts) rather than the index's graph: faster there, and the codes' memory
 * (64 bytes a chunk at 512 dimensions) small beside the vectors (bench/README.md).
 */
export const CODES_BELOW = 400_000;

/**
 * From this many chunks on, the approximate path's rows are int8 (vector-scan.ts): at 400,000
 * passages of 512 dimensions float32 would hold 800 MB, int8 200 MB; at a million 2 GB against
 * 512 MB, the difference between the server's memory and half of it (bench/README.md).
 */
export const QUANTIZE_FROM = 400_000;

/** The approximate index is built and used only from `approximateFrom` chunks on. */
export function approximatePathApplies(chunkCount: number, approximateFrom: number): boolean {
  return chunkCount > 0 && chunkCount >= approximateFrom;
}

export interface RecordCosines {
  /** Best cosine per record; -2 where the record is not allowed or not in the shortlist. */
  best: Float32Array;
  /** The chunk that gave it, -1 where none. */
  bestChunk: Int32Array;
  /**
   * Where records are left without a cosine (the approximate shortlist): the mean and standard
   * deviation of every allowed record's best cosine, estimated from a fixed sample of them
   * scored exactly, so standard scores (search-index.ts) sit on the scale the exact scan gives.
   */
  population?: CosinePopulation;
  /** On the approximate path, the records that have a cosine, ascending. */
  scored?: Uint32Array;
}

export interface CosinePopulation {
  mean: number;
  deviation: number;
}

/**
 * Allowed records scored exactly to estimate the population of cosines: the mean's error is
 * about 1.6 % of a deviation. With 1,024 (3 %) the approximate path's ArguAna nDCG@10 was
 * 0.0013 below the exact path's, 0.003 on the held-out half; with 4,096 it is the exact path's
 * (bench/README.md). Without filters the sample's vectors are kept together and scanned whole.
 */
export const POPULATION_SAMPLE = 4096;

/**
 * What the approximate index gave for a question (ChunkScan.shortlist): the nearest chunks,
 * or every allowed chunk when a filter leaves few, or word that the exact scan must serve the question.
 * The nearest chunks' exact products may be on their way from the index's thread (`products`:
 * the allowed ones among them, ascending, and their dot products with the question).
 */
export type Shortlist =
  | { kind: 'near'; chunks: Uint32Array; products?: { rows: Uint32Array; dots: Promise<Float32Array> } }
  | { kind: 'allowed'; chunks: number[] }
  | { kind: 'exact' };

export interface ChunkScan {
  readonly approximate: boolean;
  /** Where the approximate path's shortlist comes from: the index's graph, or a scan of binary codes. */
  readonly shortlistFrom?: 'index' | 'codes';
  /**
   * On the approximate path, the index's shortlist for the question over the records `mask`
   * allows. Asked as soon as the question's vector is known: the index may answer from
   * another thread while this one scores the words (search-index.ts).
   */
  shortlist(query: Float32Array, mask: Uint8Array): Promise<Shortlist>;
  /**
   * Over the records `mask` allows; `wordRecords` (the best records by words, allowed ones) join
   * the shortlist, which is `shortlist`'s answer for the same question and mask when given.
   */
  scan(query: Float32Array, mask: Uint8Array, wordRecords?: ArrayLike<number>, shortlist?: Promise<Shortlist>): Promise<RecordCosines>;
  /**
   * Over the records of `pool` only (`records`: the same records, listed), every chunk of them
   * (the feedback's second scan); on the approximate path in the index's thread when it takes
   * the products (`remoteDots`).
   */
  scanPool(query: Float32Array, pool: Uint8Array, records: Uint32Array): Promise<RecordCosines>;
}

export interface ChunkScanInput {
  scanner: VectorScanner;
  chunkRecords: Uint32Array;
  recordCount: number;
  approximate?: ApproximateVectorIndex | undefined;
  approximateFrom: number;
  /** Chunks asked of the index per scan. */
  shortlist: number;
  /** Records taken from the word ranking per scan. */
  wordRecords: number;
  /** Below this many chunks the shortlist comes from a scan of binary codes, not the index (CODES_BELOW). */
  codesBelow?: number | undefined;
  /**
   * Each chunk's key in the approximate index, when not its number: an index grown by
   * incremental builds keeps a passage's key while the passages around it are renumbered.
   */
  chunkKeys?: Uint32Array | undefined;
  /** The scanner's dotsOf, run in another thread (ApproximateVectorIndex.shareScan): the same values. */
  remoteDots?: ((query: Float32Array, rows: Uint32Array) => Promise<Float32Array>) | undefined;
  /** The codes' scan and the shortlist's products, run in another thread (ApproximateVectorIndex.shareCodes): the same rows and values. */
  shareCodes?: ((codes: SharedCodes) => RemoteCodes) | undefined;
  /** The graph's nearest and their products in one answer from another thread (ApproximateVectorIndex.shareNear): the same rows and values. */
  shareNear?: (() => RemoteNear) | undefined;
}

/** Chunk numbers and the index's keys, both ways (identity when the build numbered keys as chunks). */
interface KeyMap {
  toChunks(keys: Uint32Array): Uint32Array;
  /** A mask over the index's keys from one over chunks. */
  keyMask(chunkMask: Uint8Array): Uint8Array;
}

function keyMap(chunkKeys: Uint32Array | undefined): KeyMap {
  if (!chunkKeys) return { toChunks: (keys) => keys, keyMask: (mask) => mask };
  let keyCount = 0;
  for (const key of chunkKeys) keyCount = Math.max(keyCount, key + 1);
  const chunkOfKey = new Int32Array(keyCount).fill(-1);
  chunkKeys.forEach((key, chunk) => {
    if (chunkOfKey[key] !== -1) throw new Error(`two passages share the vector index key ${key}: rebuild`);
    chunkOfKey[key] = chunk;
  });
  return {
    toChunks(keys) {
      const chunks = new Uint32Array(keys.length);
      keys.forEach((key, at) => {
        const chunk = key < keyCount ? chunkOfKey[key]! : -1;
        if (chunk < 0) throw new Error(`the vector index holds a key (${key}) no passage has: rebuild`);
        chunks[at] = chunk;
      });
      return chunks;
    },
    keyMask(chunkMask) {
      const mask = new Uint8Array(keyCount);
      chunkKeys.forEach((key, chunk) => (mask[key] = chunkMask[chunk]!));
      return mask;
    },
  };
}

export function createChunkScan(input: ChunkScanInput): ChunkScan {
  const { scanner, chunkRecords, recordCount, approximate, shortlist } = input;
  const dims = scanner.dims;
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
    return {
      approximate: false,
      shortlist: () => Promise.resolve({ kind: 'exact' }),
      scan: async (query, mask) => exact(query, mask),
      scanPool: async (query, pool) => exact(query, pool),
    };
  }
  const index = approximate;
  if (approximate.size !== chunkCount) throw new Error(`the vector index holds ${approximate.size} chunks, the search ${chunkCount}: rebuild`);
  if (approximate.dims !== dims) throw new Error(`the vector index has ${approximate.dims} dimensions, the search ${dims}: rebuild`);
  const chunksOf = recordChunks(chunkRecords, recordCount);
  if (input.chunkKeys && input.chunkKeys.length !== chunkCount)
    throw new Error(`${input.chunkKeys.length} vector index keys for ${chunkCount} chunks: rebuild`);
  const keys = keyMap(input.chunkKeys);
  /** All 0 between calls of recordsOf (which runs without a pause): the records already listed. */
  const scoredMarks = new Uint8Array(recordCount);
  const codes = chunkCount < (input.codesBelow ?? CODES_BELOW) && binaryScanSupported(dims) ? createBinaryScan(scanner) : undefined;
  const remoteCodes = codes && input.shareCodes?.(codes.shared);
  // Where the graph gives the shortlist and its keys are the chunks' numbers.
  const remoteNear = codes || input.chunkKeys ? undefined : input.shareNear?.();

  /**
   * Exact cosines of the given chunks (the allowed records'), in ascending order: the scan's
   * own kernel, so the cosines the exact scan gives them, bit for bit; memory read in one
   * direction, and a record's tied chunks resolved as there (the first keeps the best).
   */
  function dotsOfChunks(query: Float32Array, chunks: ArrayLike<number>, mask: Uint8Array): { rows: Uint32Array; dots: Float32Array } {
    const rows = rowsOf(chunks, mask);
    return { rows, dots: scanner.dotsOf(query, rows) };
  }

  function rowsOf(chunks: ArrayLike<number>, mask: Uint8Array): Uint32Array {
    const wanted = new Uint32Array(chunks.length);
    let n = 0;
    for (let i = 0; i < chunks.length; i++) if (mask[chunkRecords[chunks[i]!]!] === 1) wanted[n++] = chunks[i]!;
    return wanted.subarray(0, n).sort().slice();
  }

  function keepAll(cosines: RecordCosines, { rows, dots }: { rows: Uint32Array; dots: Float32Array }): RecordCosines {
    rows.forEach((chunk, at) => keepBest(cosines, chunkRecords[chunk]!, chunk, dots[at]!));
    return cosines;
  }

  /** Exact cosines of the given chunks, the best per allowed record kept. */
  const rescore = (query: Float32Array, chunks: ArrayLike<number>, mask: Uint8Array, cosines = empty()): RecordCosines =>
    keepAll(cosines, dotsOfChunks(query, chunks, mask));

  const allChunksOf = (records: ArrayLike<number>) => chunksOfRecords(chunksOf, records);
  const population = createPopulation(scanner, chunkRecords, chunksOf);

  async function shortlistOf(query: Float32Array, mask: Uint8Array): Promise<Shortlist> {
    let allowedChunks = chunkCount;
    let chunkMask: Uint8Array | undefined;
    if (mask.includes(0)) {
      chunkMask = new Uint8Array(chunkCount);
      allowedChunks = 0;
      for (let chunk = 0; chunk < chunkCount; chunk++) allowedChunks += chunkMask[chunk] = mask[chunkRecords[chunk]!]!;
      // Few enough allowed chunks to re-score them all: exact, and cheaper than asking the index.
      if (allowedChunks <= shortlist * 4) return { kind: 'allowed', chunks: allowedChunkList(chunkMask) };
    }
    if (codes && remoteCodes) {
      // The other thread scans the codes and takes their products while this one reads the
      // words' records and the population (scan()); where it cannot, this thread does both.
      const code = new Uint8Array(dims / 8);
      signCode(query, 0, dims, code, 0);
      const answer = await remoteCodes(query, code, shortlist, chunkMask).catch(() => undefined);
      if (answer) return nearFrom(answer, Math.min(shortlist, allowedChunks));
    }
    // Without a filter, the index's thread searches and takes the products in one answer: the
    // same rows (the nearest, ascending) and values as the two messages below, a round trip sooner.
    const answered = remoteNear && !chunkMask ? await remoteNear(query, shortlist).catch(() => undefined) : undefined;
    if (answered) return nearFrom(answered, Math.min(shortlist, allowedChunks));
    const near = codes ? codes.nearest(query, shortlist, chunkMask) : keys.toChunks(await index.search(query, shortlist, chunkMask && keys.keyMask(chunkMask)));
    if (near.length < Math.min(shortlist, allowedChunks)) return { kind: 'exact' };
    if (!input.remoteDots) return { kind: 'near', chunks: near };
    // The other thread re-scores them while this one goes on with the words (search-index.ts).
    const rows = rowsOf(near, mask);
    const dots = input.remoteDots(query, rows);
    dots.catch(() => undefined); // read in scan(), which falls back to this thread's kernel
    return { kind: 'near', chunks: near, products: { rows, dots } };
  }

  return {
    approximate: true,
    shortlistFrom: codes ? 'codes' : 'index',
    shortlist: shortlistOf,
    async scan(query, mask, wordRecords, pending) {
      const filtered = mask.includes(0);
      // What needs no shortlist is read while the index searches (in the server, in its own
      // thread): the words' records' chunks and, without filters, the population's sample.
      const allowedWords: number[] = [];
      if (wordRecords) for (let i = 0; i < wordRecords.length; i++) if (mask[wordRecords[i]!] === 1) allowedWords.push(wordRecords[i]!);
      const words = allChunksOf(allowedWords);
      const early = dotsOfChunks(query, words, mask);
      const wordCosines = { rows: early.rows, dots: early.dots.slice() }; // out of the kernel's buffer, which the next call reuses
      const sampled = filtered ? undefined : population(query, mask, undefined);
      // An index that cannot answer (its thread gone: the server says so on /api/ready) leaves
      // the exact scan, the reference, slower: the question is still answered, with the same results.
      const list = await (pending ?? shortlistOf(query, mask)).catch((): Shortlist => ({ kind: 'exact' }));
      if (list.kind === 'allowed') return rescore(query, list.chunks, mask);
      if (list.kind === 'exact') return exact(query, mask);
      const near = list.chunks;
      const remote = list.products;
      // The other thread's products are this thread's (the same kernel): where it cannot give them, this one does.
      const products = remote
        ? { rows: remote.rows, dots: await remote.dots.catch(() => scanner.dotsOf(query, remote.rows)) }
        : dotsOfChunks(query, near, mask);
      const cosines = keepAll(keepAll(empty(), products), wordCosines);
      cosines.population = sampled ?? population(query, mask, cosines);
      cosines.scored = recordsOf(chunkRecords, [products.rows, wordCosines.rows], scoredMarks);
      return cosines;
    },
    async scanPool(query, pool, records) {
      if (!input.remoteDots) return rescore(query, allChunksOf(records), pool);
      const rows = passagesOf(chunksOf, records).chunks;
      // The other thread's products are this thread's (the same kernel): where it cannot give them, this one does.
      const dots = await input.remoteDots(query, rows).catch(() => scanner.dotsOf(query, rows));
      return keepAll(empty(), { rows, dots });
    },
  };
}

/** A shortlist answered with its products by another thread; fewer rows than `wanted`: the exact scan's turn. */
function nearFrom(answer: NearestCodes, wanted: number): Shortlist {
  if (answer.near.length < wanted) return { kind: 'exact' };
  return { kind: 'near', chunks: answer.near, products: { rows: answer.near, dots: Promise.resolve(answer.dots) } };
}

/** The population's estimate (CosinePopulation) for one question, from its fixed sample of allowed records. */
function createPopulation(
  scanner: VectorScanner,
  chunkRecords: Uint32Array,
  chunksOf: RecordChunks,
): (query: Float32Array, mask: Uint8Array, known: RecordCosines | undefined) => CosinePopulation {
  const sampleOf = (mask: Uint8Array) => populationSample(chunksOf, mask);

  /**
   * Without filters, the sample's chunk vectors copied together once (at 4 passages a record,
   * 16,384 rows: 8 MB of int8 at 512 dimensions), scanned whole by the same kernel: the same cosines
   * as gathering them row by row, in a fraction of the time.
   */
  let unfiltered: { records: number[]; scanner: VectorScanner } | undefined;
  function unfilteredSample(mask: Uint8Array): { records: number[]; scanner: VectorScanner } {
    if (unfiltered) return unfiltered;
    const { records, chunks } = sampleOf(mask);
    return (unfiltered = { records, scanner: scanner.subset(chunks) });
  }

  /**
   * The allowed records' best cosines estimated from the sample (sampleOf): without filters,
   * every chunk of the sample's records from their copy; with filters (`known`: the cosines
   * of the shortlist and the words' records), those already scored read as they are and the
   * others' chunks re-scored.
   */
  function population(query: Float32Array, mask: Uint8Array, known: RecordCosines | undefined): CosinePopulation {
    let records: number[];
    let dots: Float32Array;
    const chunksRead: (record: number) => boolean = known ? (record) => known.best[record]! <= -2 : () => true;
    if (known) {
      const sample = sampleOf(mask);
      records = sample.records;
      const unknown = sample.chunks.filter((chunk) => known.best[chunkRecords[chunk]!]! <= -2);
      dots = unknown.length > 0 ? scanner.dotsOf(query, Uint32Array.from(unknown)) : new Float32Array(0);
    } else {
      const sample = unfilteredSample(mask);
      records = sample.records;
      dots = sample.scanner.dots(query);
    }
    // The chunks read are in sample order: each record's best read off in turn.
    let next = 0;
    let count = 0;
    let sum = 0;
    let squares = 0;
    for (let i = 0; i < records.length; i++) {
      const record = records[i]!;
      const read = chunksRead(record);
      let best = read ? -2 : known!.best[record]!;
      if (read) for (let at = chunksOf.start[record]!; at < chunksOf.start[record + 1]!; at++) best = Math.max(best, dots[next++]!);
      if (best <= -2) continue; // a record without passages has no cosine on either path
      count++;
      sum += best;
      squares += best * best;
    }
    const mean = sum / (count || 1);
    return { mean, deviation: Math.sqrt(Math.max(0, squares / (count || 1) - mean * mean)) };
  }
  return population;
}

function keepBest(cosines: RecordCosines, record: number, chunk: number, cosine: number): void {
  if (cosine > cosines.best[record]!) {
    cosines.best[record] = cosine;
    cosines.bestChunk[record] = chunk;
  }
}

/** The records of the listed chunks (allowed ones: the scans' rows), each once, ascending. `marks` is all 0 before and after. */
function recordsOf(chunkRecords: Uint32Array, lists: readonly Uint32Array[], marks: Uint8Array): Uint32Array {
  const out = new Uint32Array(lists.reduce((sum, list) => sum + list.length, 0));
  let n = 0;
  for (const list of lists) {
    for (let i = 0; i < list.length; i++) {
      const record = chunkRecords[list[i]!]!;
      if (marks[record] === 1) continue;
      marks[record] = 1;
      out[n++] = record;
    }
  }
  const records = out.subarray(0, n).sort();
  for (let i = 0; i < records.length; i++) marks[records[i]!] = 0;
  return records.slice();
}

/** An even stride through the allowed records (the same records for every question under the same filters), and their chunks in order. */
function populationSample(chunksOf: RecordChunks, mask: Uint8Array): { records: number[]; chunks: number[] } {
  const recordCount = chunksOf.start.length - 1;
  let allowed = 0;
  for (let record = 0; record < recordCount; record++) allowed += mask[record]!;
  const step = Math.max(1, Math.floor(allowed / POPULATION_SAMPLE));
  const records: number[] = [];
  let seen = 0;
  for (let record = 0; record < recordCount; record++) if (mask[record] === 1 && seen++ % step === 0) records.push(record);
  return { records, chunks: chunksOfRecords(chunksOf, records) };
}

function allowedChunkList(chunkMask: Uint8Array): number[] {
  const chunks: number[] = [];
  for (let chunk = 0; chunk < chunkMask.length; chunk++) if (chunkMask[chunk] === 1) chunks.push(chunk);
  return chunks;
}
