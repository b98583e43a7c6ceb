import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseQueries, readMaybeGzip } from '../scripts/lib/beir.ts';
import { artifactPaths } from '../core/artifacts.ts';

/** Small measurement helpers: percentiles and a table printer. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export function summarize(values: readonly number[]) {
  return { n: values.length, median: percentile(values, 50), p95: percentile(values, 95), max: Math.max(...values) };
}

export function ms(value: number): string {
  return `${value.toFixed(value < 10 ? 2 : 1)} ms`;
}

export function ratio(value: number, reference: number): string {
  return `${(value / reference).toFixed(2)}×`;
}

export async function time<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const result = await work();
  return [result, performance.now() - started];
}

/** A build's chunk vectors, copied into an aligned Float32Array. */
export function readVectors(artifactsDir: string): Float32Array {
  const bytes = readFileSync(artifactPaths(artifactsDir).searchVectors);
  const vectors = new Float32Array(bytes.byteLength / 4);
  new Uint8Array(vectors.buffer).set(bytes);
  return vectors;
}

/** The reference brute force: a scalar cosine scan of unit vectors; returns the best row. */
export function plainScan(vectors: Float32Array, dims: number, query: Float32Array): number {
  let best = -2;
  let bestIndex = -1;
  for (let offset = 0, index = 0; offset < vectors.length; offset += dims, index++) {
    let dot = 0;
    for (let d = 0; d < dims; d++) dot += vectors[offset + d]! * query[d]!;
    if (dot > best) {
      best = dot;
      bestIndex = index;
    }
  }
  return bestIndex;
}

/** ArguAna's queries as a caller would ask them: each one's claim (its first sentence, at most 30 words), distinct, the first `count`. */
export function arguanaClaims(arguanaDir: string, count: number): string[] {
  return parseQueries(readMaybeGzip(path.join(arguanaDir, 'queries.jsonl.gz')))
    .map((query) =>
      query.text
        .split(/(?<=[.!?])\s+/)[0]!
        .split(/\s+/)
        .slice(0, 30)
        .join(' '),
    )
    .filter((question, index, all) => question.length > 20 && all.indexOf(question) === index)
    .slice(0, count);
}

/** Drops the page cache (as root): the next start reads its files from disk. Throws where the kernel refuses (not root, a read-only /proc/sys). */
export function dropPageCache(): void {
  execFileSync('sync');
  writeFileSync('/proc/sys/vm/drop_caches', '3');
}
