/**
 * Each record's chunks (passages), as offsets into one list, built once per index: what the
 * vector side (chunk-scan.ts) and BM25 of given records (bm25-given.ts) both read to go from
 * records to their passages.
 */

/** Record r's chunks are chunks[start[r] .. start[r + 1]), ascending (they need not be contiguous). */
export interface RecordChunks {
  start: Uint32Array;
  chunks: Uint32Array;
}

export function recordChunks(chunkRecords: Uint32Array, recordCount: number): RecordChunks {
  const start = new Uint32Array(recordCount + 1);
  for (const record of chunkRecords) start[record + 1]!++;
  for (let record = 0; record < recordCount; record++) start[record + 1]! += start[record]!;
  const next = start.slice(0, recordCount);
  const chunks = new Uint32Array(chunkRecords.length);
  chunkRecords.forEach((record, chunk) => (chunks[next[record]!++] = chunk));
  return { start, chunks };
}

/** The chunks of the given records, record after record, in a plain list. */
export function chunksOfRecords({ start, chunks }: RecordChunks, records: ArrayLike<number>): number[] {
  const out: number[] = [];
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    for (let at = start[record]!; at < start[record + 1]!; at++) out.push(chunks[at]!);
  }
  return out;
}

/**
 * The chunks of the given records (a repeated record counted once), ascending. Where the records
 * ascend and so do their chunks (a build's numbering, the feedback's pool), as they come, with
 * each chunk's position among the records (`owners`); sorted otherwise.
 */
export function passagesOf({ start, chunks }: RecordChunks, records: ArrayLike<number>): { chunks: Uint32Array; owners?: Uint32Array } {
  let count = 0;
  let ascending = true;
  for (let i = 0; i < records.length; i++) {
    count += start[records[i]! + 1]! - start[records[i]!]!;
    if (i > 0 && records[i]! <= records[i - 1]!) ascending = false;
  }
  if (ascending) {
    const out = new Uint32Array(count);
    const owners = new Uint32Array(count);
    for (let i = 0, at = 0; i < records.length; i++) {
      for (let c = start[records[i]!]!; c < start[records[i]! + 1]!; c++, at++) {
        out[at] = chunks[c]!;
        owners[at] = i;
        if (at > 0 && out[at]! <= out[at - 1]!) ascending = false;
      }
    }
    if (ascending) return { chunks: out, owners };
  }
  const distinct = [...new Set(Array.from(records))];
  const out = new Uint32Array(distinct.reduce((sum, record) => sum + start[record + 1]! - start[record]!, 0));
  let at = 0;
  for (const record of distinct) {
    out.set(chunks.subarray(start[record]!, start[record + 1]!), at);
    at += start[record + 1]! - start[record]!;
  }
  return { chunks: out.sort() };
}
