/**
 * Approximate nearest neighbours against the exact scan, on vectors with the structure of
 * real embeddings (bench/ann-vectors.ts: derived from the ArguAna passages' USE-lite
 * embeddings in the embedding cache) and the ArguAna questions embedded by the real model.
 *
 * For the exact scan (core/search/vector-scan.ts, the reference, in this process) and each
 * candidate index (each in its own child process, so its memory is its own):
 *   recall@10 of the re-scored shortlist against the exact top 10 on the same vectors;
 *   p50 / p95 per query (shortlist + exact float re-scoring) and the ratio to the exact scan's;
 *   build time, insert of 1,000 more vectors, resident memory added by the index,
 *   index file size and the time to load it (memory-mapped where the library can) and answer.
 *
 *   npx tsx bench/ann.ts [--sizes 100000,1000000] [--questions 200] [--cache <dir>]
 *        [--candidates usearch-i8,usearch-f16,usearch-f32,usearch-b1,hnswlib,libsql] [--shortlist 100]
 *        [--slow-max 100000]
 *
 * --cache is a folder holding the USE-lite embedding cache after an ArguAna build (use a
 * copy: the questions missing from it are embedded and appended). hnswlib (hnswlib-node) and
 * libsql's vector index are measured only up to --slow-max vectors: their single-threaded
 * builds take far longer than the rest. hnswlib-node is not a dependency: install it with
 * `npm install --no-save hnswlib-node@3.0.0` to measure it; it is skipped when missing.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { createVectorScanner, type VectorScanner } from '../core/search/vector-scan.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { createUseLiteEmbedder } from '../providers/embedder.ts';
import { cachedEmbedder } from '../scripts/lib/beir-eval.ts';
import { parseQueries, readMaybeGzip } from '../scripts/lib/beir.ts';
import { cacheKey, deriveVectors, nearestNeighbourCosines, readCacheVectors, type RealEmbeddings } from './ann-vectors.ts';
import { percentile, ratio } from './lib.ts';
import { topK, type CandidateResult } from './ann-candidates.ts';

const DIMS = 512;
const ARGUANA = process.env.BEIR_ARGUANA_DIR ?? path.resolve(REPO_ROOT, '../shared/benchmarks/arguana');
const SLOW = new Set(['hnswlib', 'libsql']);

/** The judged ArguAna questions (the first `count`), embedded by USE-lite through the cache. */
async function questionVectors(cacheDir: string, count: number): Promise<{ vectors: Float32Array; keys: Set<string>; embedderId: string }> {
  const judged = new Set(
    readFileSync(path.join(ARGUANA, 'qrels-dev.tsv'), 'utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.split('\t')[0]!),
  );
  const texts = parseQueries(readMaybeGzip(path.join(ARGUANA, 'queries.jsonl.gz')))
    .filter((query) => judged.has(query._id))
    .slice(0, count)
    .map((query) => query.text.slice(0, 4000));
  const model = await createUseLiteEmbedder();
  const vectors = await cachedEmbedder(model, cacheDir).embed(texts);
  const flat = new Float32Array(vectors.length * DIMS);
  vectors.forEach((vector, index) => flat.set(vector, index * DIMS));
  return { vectors: flat, keys: new Set(texts.map((text) => cacheKey(model.id, text))), embedderId: model.id };
}

function quantiles(values: readonly number[]): string {
  return [10, 50, 90].map((p) => `p${p} ${percentile(values, p).toFixed(3)}`).join(', ');
}

interface ExactReference {
  truth: Uint32Array[];
  p50: number;
  p95: number;
  loadMs: number;
}

/** The exact scan over the vector file (loaded as the server loads it), and its top 10 per question: the truth. */
function exactReference(file: string, questions: Float32Array): ExactReference & { scanner: VectorScanner } {
  const started = performance.now();
  const bytes = readFileSync(file);
  const scanner = createVectorScanner(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4), DIMS);
  const loadMs = performance.now() - started;
  const truth: Uint32Array[] = [];
  const times: number[] = [];
  for (let offset = 0; offset < questions.length; offset += DIMS) {
    const begin = performance.now();
    truth.push(topK(scanner.dots(questions.subarray(offset, offset + DIMS)), 10));
    times.push(performance.now() - begin);
  }
  return { truth, p50: percentile(times, 50), p95: percentile(times, 95), loadMs, scanner };
}

function recallAt10(found: readonly number[][], truth: readonly Uint32Array[]): number {
  let hits = 0;
  found.forEach((ids, query) => {
    const exact = new Set(truth[query]);
    hits += ids.slice(0, 10).filter((id) => exact.has(id)).length;
  });
  return hits / (truth.length * 10);
}

/** A candidate in its own process: its resident memory is the vectors plus its index, nothing else. */
async function inChild(args: Record<string, string>): Promise<CandidateResult | { skipped: string }> {
  const argv = Object.entries(args).flatMap(([key, value]) => [`--${key}`, value]);
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'bench/ann-candidates.ts'), ...argv], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const last = output.trim().split('\n').pop() ?? '';
  if (code !== 0 || !last.startsWith('{')) return { skipped: `exited with ${code}` };
  return JSON.parse(last) as CandidateResult | { skipped: string };
}

function row(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '100000,1000000' },
      questions: { type: 'string', default: '200' },
      cache: { type: 'string', default: process.env.EMBEDDING_CACHE_DIR ?? path.join(REPO_ROOT, '.cache/embeddings') },
      candidates: { type: 'string', default: 'usearch-i8,usearch-f16,usearch-f32,usearch-b1,hnswlib,libsql' },
      shortlist: { type: 'string', default: '100' },
      'slow-max': { type: 'string', default: '100000' },
    },
  });
  const questions = await questionVectors(values.cache, Number(values.questions));
  const cacheFile = path.join(values.cache, `${questions.embedderId.replace(/[^\w.@-]/g, '_')}-${DIMS}.bin`);
  const real = readCacheVectors(cacheFile, DIMS, questions.keys);
  const realProbe = Math.min(real.count, 20000);
  console.log(`real passages: ${real.count} USE-lite embeddings; ${questions.vectors.length / DIMS} real questions`);
  console.log(
    `nearest-neighbour cosine, real passages (${realProbe}): ${quantiles(nearestNeighbourCosines(real.passages.subarray(0, realProbe * DIMS), DIMS, 300))}`,
  );
  const work = mkdtempSync(path.join(os.tmpdir(), 'polyphony-ann-'));
  const questionFile = path.join(work, 'questions.f32');
  writeFileSync(questionFile, new Uint8Array(questions.vectors.buffer));
  try {
    for (const size of values.sizes.split(',').map(Number)) {
      const vectorFile = path.join(work, `vectors-${size}.f32`);
      writeDerived(real, size, vectorFile);
      const exact = exactReference(vectorFile, questions.vectors);
      console.log(`\n## ${size} vectors\nnearest-neighbour cosine, derived (100 probes): ${quantiles(nearestNeighbourCosinesFast(exact.scanner, 100))}`);
      const lines = [
        row(['index', 'recall@10', 'p50 ms', 'p95 ms', 'exact p95 ÷ this p95', 'build s', 'insert 1k ms', 'RSS added MB', 'file MB', 'load+1st query ms']),
        row(Array(10).fill('---')),
        row([
          'exact scan (reference)',
          '1.000',
          exact.p50.toFixed(2),
          exact.p95.toFixed(2),
          '1.00×',
          '—',
          '—',
          (statSync(vectorFile).size / 2 ** 20).toFixed(0),
          (statSync(vectorFile).size / 2 ** 20).toFixed(0),
          exact.loadMs.toFixed(0),
        ]),
      ];
      for (const candidate of values.candidates.split(',')) {
        if (SLOW.has(candidate) && size > Number(values['slow-max'])) continue;
        const result = await inChild({ candidate, vectors: vectorFile, questions: questionFile, size: String(size), shortlist: values.shortlist, work });
        if ('skipped' in result) {
          lines.push(row([candidate, `skipped: ${result.skipped}`, ...Array(8).fill('')]));
          continue;
        }
        lines.push(
          row([
            `${candidate} (${result.parameters})`,
            recallAt10(result.found, exact.truth).toFixed(3),
            result.p50.toFixed(2),
            result.p95.toFixed(2),
            ratio(exact.p95, result.p95),
            (result.buildMs / 1000).toFixed(1),
            result.insertMs.toFixed(0),
            (result.rssAddedBytes / 2 ** 20).toFixed(0),
            (result.fileBytes / 2 ** 20).toFixed(0),
            result.loadMs.toFixed(0),
          ]),
        );
      }
      console.log(lines.join('\n'));
      rmSync(vectorFile);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  console.log('\nTimes are on a machine shared with other work: compare the ratios, not the milliseconds.');
}

/** Derived vectors written to `file` (the floats are dropped on return: at a million rows they are 2 GB). */
function writeDerived(real: RealEmbeddings, size: number, file: string): void {
  const vectors = new Float32Array(size * DIMS);
  deriveVectors(real, size, vectors);
  writeFileSync(file, new Uint8Array(vectors.buffer));
}

/** nearestNeighbourCosines through the exact scan kernel: the plain loop is too slow at a million rows. */
function nearestNeighbourCosinesFast(scanner: VectorScanner, probes: number): number[] {
  const { count } = scanner;
  const step = Math.floor(count / probes);
  const cosines: number[] = [];
  for (let probe = 0; cosines.length < probes; probe += step) {
    const dots = scanner.dots(scanner.rowsOf([probe]));
    dots[probe] = -2;
    let best = -2;
    for (let row = 0; row < count; row++) if (dots[row]! > best) best = dots[row]!;
    cosines.push(best);
  }
  return cosines.sort((x, y) => x - y);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href && existsSync(ARGUANA)) await main();
