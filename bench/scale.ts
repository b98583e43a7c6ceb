/**
 * Retrieval at scale: 10k and 100k synthetic passages (chunks), built by the real build and
 * served by the real server process. Printed beside references measured in the same run:
 *   - search alone (in process, query embedding cached) vs a plain Float32Array cosine scan
 *     of the same vectors (scalar JavaScript, the textbook brute force) and vs Orama's own
 *     vector search (@orama/orama, `mode: 'vector'`) over the same vectors;
 *   - the fast path over HTTP (query embedding included, on the server's worker thread)
 *     for distinct and for repeated questions, vs the query embedding alone; and with 8
 *     questions in flight at once, answered a second vs one at a time, and whether the
 *     answers asked together are those asked alone;
 *   - the server's memory (resident set after load and its peak after the queries).
 *
 * The corpus: works of about 640 words made of sentences drawn (seeded) from the ArguAna
 * arguments in ../shared, each work from one stretch of them (one or two debates), so BM25
 * sees real English and a work's passages share a topic; 4 passages a work. Their vectors
 * have the structure of real embeddings without embedding a million passages (hours on 2
 * cores): every pool sentence is embedded by USE-lite once (cached in --cache between runs)
 * and a passage's vector is the normalised sum of its sentences' (sentenceVectorEmbedder).
 * Questions are embedded by the real model. Where the approximate index serves (from 50,000
 * passages), the same artifacts are also searched on the exact path in process: recall@10 of
 * the approximate path against it, on the vector side alone and on the hybrid results.
 *
 * A million passages take a while to build (the data build, not embedding): --keep <dir>
 * builds into <dir>/<size> and leaves it, and a later run with the same --keep reuses it.
 * Run with a larger heap for 1M: node --max-old-space-size=16384. The build itself fits Node's
 * default heap (bench/build-heap.ts); this script writes the synthetic corpus from its strings
 * held at once, and searches the 1M build in process beside its server.
 *
 *   npx tsx bench/scale.ts [--sizes 10000,100000] [--questions 150] [--no-orama] [--keep <dir>] [--cache <dir>] [--cold]
 *
 * --cold drops the page cache (as root) before each server start: the ready time printed is then a start from disk.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { spawn } from 'node:child_process';
import { create, insertMultiple, search as oramaSearch } from '@orama/orama';
import { loadCorpus } from '../api/load-artifacts.ts';
import { loadConfig } from '../api/config.ts';
import { createUseLiteEmbedder, normalize, withQueryCache, type Embedder, type UseLiteEmbedder } from '../providers/embedder.ts';
import { createVectorScanner } from '../core/search/vector-scan.ts';
import { buildArtifacts } from '../scripts/build.ts';
import { buildBeirContent, parseCorpus, readMaybeGzip, type BeirDoc } from '../scripts/lib/beir.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { seededRandom as random } from '../core/random.ts';
import { createEmbeddingCache } from '../scripts/lib/embedding-cache.ts';
import { createEmbedProgress } from '../scripts/lib/embed-progress.ts';
import { arguanaClaims, dropPageCache, ms, plainScan, ratio, readVectors, summarize, time } from './lib.ts';

const ARGUANA = process.env.BEIR_ARGUANA_DIR ?? path.resolve(REPO_ROOT, '../shared/benchmarks/arguana');

/**
 * Sentences of real English to compose works from: ArguAna's arguments, in their order (so
 * neighbouring sentences share a debate). Only sentences the build's chunker (core/search/chunk.ts)
 * and plain-text rendering give back whole: one sentence end, at the end, and none of the
 * characters markdown rendering removes; so every passage is made of whole pool sentences
 * and its vector can be derived from theirs (sentenceVectorEmbedder).
 */
export function sentencePool(): string[] {
  const docs = parseCorpus(readMaybeGzip(path.join(ARGUANA, 'corpus.jsonl.gz')));
  return docs
    .flatMap((doc) => doc.text.split(/(?<=[.!?])\s+/))
    .map((sentence) => sentence.replace(/\s+/g, ' ').trim())
    .filter((sentence) => WHOLE_SENTENCE.test(sentence) && sentence.split(' ').length >= 5);
}

const WHOLE_SENTENCE = /^[^.!?\n*_`>#[\]]+[.!?]+$/;
/** The chunker's sentences (core/search/chunk.ts). */
const CHUNK_SENTENCE = /[^.!?\n]+(?:[.!?]+|\n|$)/g;
/** A work draws its sentences from this many consecutive pool sentences: one or two debates, so its passages share a topic. */
const TOPIC_WINDOW = 60;

export function syntheticDocs(works: number, pool: readonly string[], seed: number): BeirDoc[] {
  const next = random(seed);
  const docs: BeirDoc[] = [];
  for (let index = 0; index < works; index++) {
    const start = Math.floor(next() * pool.length);
    const sentences: string[] = [];
    let words = 0;
    while (words < 620) {
      const sentence = pool[(start + Math.floor(next() * TOPIC_WINDOW)) % pool.length]!;
      sentences.push(sentence);
      words += sentence.split(/\s+/).length;
    }
    docs.push({ _id: `syn-${index}`, title: sentences[0]!.split(/\s+/).slice(0, 10).join(' '), text: sentences.join(' ') });
  }
  return docs;
}

/**
 * Vectors with the structure of real embeddings, for the build: each pool sentence embedded by
 * the real model once (through an embedding cache kept between runs), and a passage's vector
 * the normalised sum of its sentences' (the title prefix, not a pool sentence, is left out).
 * Works drawn from one debate give passages that cluster by topic as real ones do, and the
 * question (embedded by the real model) finds its neighbours by meaning, not by chance.
 * `misses` counts passages with no pool sentence at all (given a hashed stand-in vector).
 */
export async function sentenceVectorEmbedder(
  model: Embedder,
  pool: readonly string[],
  cacheDir: string,
  log: (line: string) => void,
): Promise<Embedder & { misses(): number }> {
  const { vectors } = await createEmbeddingCache(cacheDir, model).embedAll(pool, createEmbedProgress({ log }));
  const bySentence = new Map(pool.map((sentence, index) => [sentence, vectors[index]!]));
  const fallback = standInEmbedder(model);
  let misses = 0;
  return {
    id: model.id,
    dims: model.dims,
    misses: () => misses,
    async embed(texts) {
      return Promise.all(
        texts.map(async (text) => {
          const sum = new Float32Array(model.dims);
          let found = 0;
          for (const piece of text.match(CHUNK_SENTENCE) ?? []) {
            const vector = bySentence.get(piece.trim());
            if (!vector) continue;
            found++;
            for (let d = 0; d < sum.length; d++) sum[d] = sum[d]! + vector[d]!;
          }
          if (found > 0) return normalize(sum);
          misses++;
          return (await fallback.embed([text]))[0]!;
        }),
      );
    },
  };
}

/**
 * Seeded unit vectors keyed by the text: stands in for USE-lite during the build only
 * (same id and dimension, so the real server accepts the index and embeds questions itself).
 */
export function standInEmbedder(real: Embedder): Embedder {
  return {
    id: real.id,
    dims: real.dims,
    async embed(texts) {
      return texts.map((text) => {
        const next = random(createHash('sha256').update(text).digest().readUInt32LE(0));
        const vector = new Float32Array(real.dims);
        for (let d = 0; d < real.dims; d++) vector[d] = next() - 0.5;
        return normalize(vector);
      });
    },
  };
}

function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(status.match(new RegExp(`${field}:\\s+(\\d+) kB`))?.[1] ?? Number.NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Questions in flight at once for the throughput line. */
const TOGETHER = 8;

/** Asks the questions with `width` in flight at once: each one's time, and the whole's. */
async function inFlight(width: number, questions: readonly string[], ask: (question: string) => Promise<number>): Promise<{ times: number[]; wallMs: number }> {
  const times: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < questions.length) times.push(await ask(questions[next++]!));
    }),
  );
  return { times, wallMs: performance.now() - started };
}

async function startServer(artifactsDir: string, storeDir: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'api/server.ts')], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ARTIFACTS_DIR: artifactsDir, STORE_PATH: path.join(storeDir, 'store.db'), SITE_DIR: storeDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const started = performance.now();
  while (!/listening on http:\/\/127\.0\.0\.1:\d+/.test(output)) {
    if (child.exitCode !== null) throw new Error(`server exited: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const base = output.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/)![1]!;
  const listeningMs = performance.now() - started;
  // Measured from when a load balancer would send traffic: GET /api/ready answers 200 (warm-up.ts).
  while ((await fetch(`${base}/api/ready`)).status !== 200) {
    if (child.exitCode !== null) throw new Error(`server exited: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { child, base, listeningMs, readyMs: performance.now() - started };
}

interface SizeOptions {
  withOrama: boolean;
  /** Build into <keep>/<size> and leave it there; a build already there is reused. */
  keep?: string | undefined;
  /** The build's stand-in for USE-lite: vectors derived from real sentence embeddings. */
  buildEmbedder: Embedder & { misses(): number };
  /** Drop the page cache before the server starts (--cold). */
  cold?: boolean;
}

/** The synthetic corpus of `chunksWanted` passages, built (or the kept build reused): its folder and artifacts. */
export async function builtCorpus(chunksWanted: number, pool: readonly string[], options: SizeOptions) {
  const root = options.keep ? path.join(options.keep, String(chunksWanted)) : mkdtempSync(path.join(os.tmpdir(), `polyphony-scale-${chunksWanted}-`));
  const artifactsDir = path.join(root, 'artifacts');
  if (options.keep && existsSync(path.join(artifactsDir, 'data', 'manifest.json'))) {
    console.log(`\n## ${chunksWanted} passages: the build kept in ${root}, reused`);
    return { root, artifactsDir };
  }
  const contentDir = path.join(root, 'content');
  mkdirSync(path.join(contentDir, 'works'), { recursive: true });
  mkdirSync(path.join(contentDir, 'pages'), { recursive: true });
  const content = buildBeirContent(syntheticDocs(Math.ceil(chunksWanted / 4), pool, chunksWanted), { name: 'synthetic', idPrefix: 'SYN' });
  for (const [file, text] of content.files) writeFileSync(path.join(contentDir, file), text);
  // The build's steps as it logs them, with the time since it started and the process's memory.
  const started = performance.now();
  const log = (line: string) => {
    const memory = process.memoryUsage();
    console.log(
      `  [build ${((performance.now() - started) / 1000).toFixed(1)} s, heap ${(memory.heapUsed / 2 ** 20).toFixed(0)} MB, RSS ${(memory.rss / 2 ** 20).toFixed(0)} MB] ${line}`,
    );
  };
  const [built, buildMs] = await time(() =>
    buildArtifacts({
      contentDir,
      artifactsDir,
      cacheDir: path.join(root, 'cache'),
      embedder: options.buildEmbedder,
      ...(chunksWanted >= 100_000 ? { log } : {}),
    }),
  );
  console.log(`\n## ${built.chunks} passages (${built.works} works of ~640 words)`);
  console.log(
    `build, real embedding excluded (vectors derived from real sentence embeddings; ${options.buildEmbedder.misses()} passages without one): ${ms(buildMs)}`,
  );
  return { root, artifactsDir };
}

/** Of the exact top k ids, the share the approximate top k holds (mean over questions). */
function recallAtK(exact: readonly (readonly string[])[], approximate: readonly (readonly string[])[]): number {
  let total = 0;
  exact.forEach((ids, at) => {
    const found = new Set(approximate[at]);
    total += ids.length === 0 ? 1 : ids.filter((id) => found.has(id)).length / ids.length;
  });
  return total / Math.max(1, exact.length);
}

async function benchSize(
  chunksWanted: number,
  pool: readonly string[],
  questions: readonly string[],
  real: UseLiteEmbedder,
  wasmKernels: UseLiteEmbedder,
  options: SizeOptions,
) {
  const { root, artifactsDir } = await builtCorpus(chunksWanted, pool, options);

  // Search alone, in process: questions embedded once beforehand (the server's query cache).
  const cached = withQueryCache(real);
  await cached.embed(questions as string[]);
  const [corpus, loadMs] = await time(() => loadCorpus(artifactsDir, cached));
  const index = corpus.search;
  const searchTimes: number[] = [];
  for (const question of questions.slice(0, 5)) await index.search(question, { limit: 8 });
  for (const question of questions) searchTimes.push((await time(() => index.search(question, { limit: 8 })))[1]);

  const vectors = readVectors(artifactsDir);
  const dims = real.dims;
  const queryVectors = await cached.embed(questions as string[]);
  const scanner = createVectorScanner(vectors, dims);
  const kernelTimes: number[] = [];
  const plainTimes: number[] = [];
  for (const vector of queryVectors) {
    kernelTimes.push((await time(async () => scanner.dots(vector)))[1]);
    plainTimes.push((await time(async () => plainScan(vectors, dims, vector)))[1]);
  }
  const s = summarize(searchTimes);
  const k = summarize(kernelTimes);
  const p = summarize(plainTimes);
  console.log(
    `index load in process: ${ms(loadMs)} (scan kernel: ${index.kernel}; vector side: ${index.approximate ? 'approximate index + exact re-scoring' : 'exact scan'})`,
  );
  console.log(`search alone (hybrid: 2 vector scans with feedback + BM25 + fusion + diversity), ${s.n} questions: median ${ms(s.median)}, p95 ${ms(s.p95)}`);
  console.log(`  exact vector scan alone (${scanner.kernel}): median ${ms(k.median)}, p95 ${ms(k.p95)}`);
  console.log(`  reference: plain Float32Array scan: median ${ms(p.median)}, p95 ${ms(p.p95)} → our scan is ${ratio(p.median, k.median)} faster`);

  if (index.approximate) {
    // The same vectors searched exactly: recall@10 of the approximate path against it.
    const exactIndex = (await loadCorpus(artifactsDir, cached, { approximateFrom: Number.POSITIVE_INFINITY })).search;
    const all = () => true;
    const ids = (hits: readonly { record: { id: string } }[]) => hits.map((hit) => hit.record.id);
    const exactVector: string[][] = [];
    const approximateVector: string[][] = [];
    const exactHybrid: string[][] = [];
    const approximateHybrid: string[][] = [];
    const exactTimes: number[] = [];
    for (const question of questions) {
      exactVector.push(ids(await exactIndex.similar(question, all, 10)));
      approximateVector.push(ids(await index.similar(question, all, 10)));
      const [hits, elapsed] = await time(() => exactIndex.search(question, { limit: 10 }));
      exactTimes.push(elapsed);
      exactHybrid.push(ids(hits));
      approximateHybrid.push(ids(await index.search(question, { limit: 10 })));
    }
    const e = summarize(exactTimes);
    console.log(
      `recall@10 of the approximate path against the exact scan on the same vectors: vector side ${recallAtK(exactVector, approximateVector).toFixed(3)}, ` +
        `hybrid results ${recallAtK(exactHybrid, approximateHybrid).toFixed(3)}; search alone on the exact path: median ${ms(e.median)}, p95 ${ms(e.p95)} ` +
        `(${ratio(e.median, s.median)} the approximate path's median)`,
    );
  }

  if (options.withOrama) {
    const db = create({ schema: { id: 'string', v: `vector[${dims}]` } as const });
    const [, insertMs] = await time(async () => {
      const batch: { id: string; v: number[] }[] = [];
      for (let row = 0; row < vectors.length / dims; row++) {
        batch.push({ id: String(row), v: Array.from(vectors.subarray(row * dims, (row + 1) * dims)) });
        if (batch.length === 5000) await insertMultiple(db, batch.splice(0), 5000);
      }
      if (batch.length > 0) await insertMultiple(db, batch.splice(0), 5000);
    });
    const oramaTimes: number[] = [];
    let agree = 0;
    for (const vector of queryVectors) {
      const value = Array.from(vector);
      const [result, elapsed] = await time(async () =>
        oramaSearch(db, { mode: 'vector', vector: { value, property: 'v' }, similarity: 0, limit: 10, includeVectors: false }),
      );
      oramaTimes.push(elapsed);
      const top = Number(result.hits[0]?.id);
      if (top === plainScan(vectors, dims, vector)) agree++;
    }
    const o = summarize(oramaTimes);
    console.log(
      `  reference: Orama vector search (insert ${ms(insertMs)}): median ${ms(o.median)}, p95 ${ms(o.p95)} → our vector scan is ${ratio(o.median, k.median)} faster, ` +
        `our whole hybrid search ${ratio(o.median, s.median)} (same best hit as the plain scan: ${agree}/${queryVectors.length})`,
    );
  }

  // The real server: HTTP, question embedding on its worker thread, memory. With --cold, it starts on an empty page cache.
  if (options.cold) dropPageCache();
  const server = await startServer(artifactsDir, root);
  const afterLoad = memoryOf(server.child.pid!);
  /** Each answer's records and their match, to compare answers given alone and together. */
  const answers = new Map<string, string>();
  const hit = async (question: string) => {
    const started = performance.now();
    const response = await fetch(`${server.base}/api/query?q=${encodeURIComponent(question)}`);
    const body = (await response.json()) as { records?: { id: string; match: unknown }[] };
    if (response.status !== 200) throw new Error(`status ${response.status} for ${question}`);
    const ms = performance.now() - started;
    answers.set(question, JSON.stringify((body.records ?? []).map((record) => [record.id, record.match])));
    return ms;
  };
  for (const question of questions.slice(0, 3)) await hit(`${question} warm-up`);
  const distinct: number[] = [];
  for (const question of questions) distinct.push(await hit(question));
  const alone = new Map(answers);
  const repeated: number[] = [];
  for (const question of questions) repeated.push(await hit(question));
  // Several at a time (distinct questions again, not embedded before): questions a second
  // beside one at a time, and the answers of the first pass asked together, compared.
  const together = await inFlight(
    TOGETHER,
    questions.map((question) => `${question} (together)`),
    hit,
  );
  await inFlight(TOGETHER, questions, hit);
  const differing = questions.filter((question) => answers.get(question) !== alone.get(question)).length;
  const afterQueries = memoryOf(server.child.pid!);
  server.child.kill('SIGTERM');
  await once(server.child, 'exit');
  // The query embedding alone, as the server runs it (a worker thread, the server's settings:
  // the native kernels where built), and on the WebAssembly fallback (one thread, ADR 0012),
  // question by question in turn.
  const embedTimes: number[] = [];
  const wasmTimes: number[] = [];
  for (const question of questions) {
    embedTimes.push((await time(() => real.embed([`${question} (reference)`])))[1]);
    wasmTimes.push((await time(() => wasmKernels.embed([`${question} (reference)`])))[1]);
  }
  const d = summarize(distinct);
  const r = summarize(repeated);
  const e = summarize(embedTimes);
  const ew = summarize(wasmTimes);
  console.log(
    `server listening in ${ms(server.listeningMs)}, ready (GET /api/ready 200, warmed up) in ${ms(server.readyMs)}${options.cold ? ' (page cache dropped before the start)' : ' (warm page cache)'}; memory (RSS) after load ${afterLoad.rss.toFixed(0)} MB, after the questions ${afterQueries.rss.toFixed(0)} MB, peak ${afterQueries.peak.toFixed(0)} MB`,
  );
  console.log(
    `fast path over HTTP, ${d.n} distinct questions: median ${ms(d.median)}, p95 ${ms(d.p95)} (query embedding alone as the server runs it, ${real.kernelsInUse} kernels on ${real.threadsInUse} threads: median ${ms(e.median)}, p95 ${ms(e.p95)}; on WebAssembly kernels, ${wasmKernels.threadsInUse} threads: median ${ms(ew.median)}, p95 ${ms(ew.p95)}, ${ratio(ew.median, e.median)} slower)`,
  );
  console.log(`fast path over HTTP, the same questions repeated: median ${ms(r.median)}, p95 ${ms(r.p95)}`);
  const t = summarize(together.times);
  const aloneRate = (distinct.length / distinct.reduce((sum, value) => sum + value, 0)) * 1000;
  const togetherRate = (together.times.length / together.wallMs) * 1000;
  console.log(
    `fast path over HTTP, ${TOGETHER} distinct questions at a time: ${togetherRate.toFixed(1)} answered a second (one at a time ${aloneRate.toFixed(1)}: ${ratio(togetherRate, aloneRate)}), ` +
      `median ${ms(t.median)}, p95 ${ms(t.p95)}; answers asked together differing from asked alone: ${differing} of ${questions.length}`,
  );
  if (!options.keep) rmSync(root, { recursive: true, force: true });
}

async function main() {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '10000,100000' },
      questions: { type: 'string', default: '150' },
      'no-orama': { type: 'boolean', default: false },
      keep: { type: 'string' },
      cache: { type: 'string', default: path.join(os.tmpdir(), 'polyphony-scale-cache') },
      cold: { type: 'boolean', default: false },
    },
  });
  if (!existsSync(path.join(ARGUANA, 'corpus.jsonl.gz'))) {
    console.log(`(${ARGUANA} not found: the scale benchmark composes its corpus from ArguAna and is skipped)`);
    return;
  }
  if (values.cold) dropPageCache(); // refused here (not root, a read-only /proc/sys): say so before building anything
  const pool = sentencePool();
  // Questions: the claim of each ArguAna query (its first sentence, at most 30 words), as a caller would ask.
  const questions = arguanaClaims(ARGUANA, Number(values.questions));
  // As the server runs it: one worker, the server's thread and kernel settings (EMBED_THREADS, EMBED_KERNELS).
  const server = loadConfig(process.env);
  const real = await createUseLiteEmbedder({ workers: 1, offThread: true, threads: server.embedThreads, kernels: server.embedKernels });
  const wasmKernels = await createUseLiteEmbedder({ workers: 1, offThread: true, kernels: 'wasm' });
  // The pool's sentences embedded by the real model once (2 threads, float32 like the questions), cached between runs.
  const sentenceModel = await createUseLiteEmbedder({ workers: 2 });
  const buildEmbedder = await sentenceVectorEmbedder(sentenceModel, pool, values.cache, (line) => console.log(`[sentences] ${line}`));
  for (const size of values.sizes.split(',').map(Number)) {
    // Orama's vector search is the reference up to 100k passages: inserting a million takes longer than the rest of the run.
    await benchSize(size, pool, questions, real, wasmKernels, {
      withOrama: !values['no-orama'] && size <= 100_000,
      keep: values.keep,
      cold: values.cold,
      buildEmbedder,
    });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) void main();
