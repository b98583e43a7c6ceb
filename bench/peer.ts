/**
 * The search engine beside the one its users would pick instead (issue 44): LanceDB
 * (@lancedb/lancedb, Rust core, on-disk columnar tables, ANN and full-text indexes, hybrid
 * queries) over the same passages, the same vectors and the same questions as Polyphony's
 * search, each engine in a process of its own so memory and start-up are its own.
 *
 * The corpus is bench/scale.ts's (works composed of ArguAna's sentences, vectors derived from
 * real sentence embeddings; --keep reuses a kept build). The questions are ArguAna claims
 * embedded by the real model once, here, and handed to both engines as vectors, so neither
 * pays for the embedding and both rank the same vectors. Per size, in one run:
 *   - build: our build's search artifacts (bench/scale.ts prints that time when it builds) and
 *     LanceDB's table, vector index (HNSW over scalar-quantised vectors, cosine) and full-text
 *     index, each timed; bytes on disk of each;
 *   - start-up: from the process's start to the first question answerable; RSS after load and
 *     at its peak (VmHWM) after the questions;
 *   - p50 / p95 of a question in process, for the vector side alone and for the hybrid ranking
 *     (ours: the deployment's default; LanceDB: its own RRF reranker over its two lists);
 *   - recall@10 of each engine's vector side against the exact ranking (records ranked by their
 *     best passage's cosine, a plain scan of the same vectors).
 * Every figure is printed beside the other engine's as a ratio from the same run.
 *
 *   npx tsx bench/peer.ts [--sizes 100000] [--questions 100] [--keep <dir>] [--cache <dir>] [--cold]
 *
 * --cold drops the page cache (as root) before each engine's start, so start-up reads from disk.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { loadCorpus } from '../api/load-artifacts.ts';
import { artifactPaths } from '../core/artifacts.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { passagesFromBytes } from '../core/search/passages.ts';
import type { SearchMeta } from '../core/search/types.ts';
import { createUseLiteEmbedder, type Embedder } from '../providers/embedder.ts';
import { arguanaClaims, dropPageCache, ms, percentile, ratio, readVectors, time } from './lib.ts';
import { builtCorpus, sentencePool, sentenceVectorEmbedder } from './scale.ts';

const ARGUANA = process.env.BEIR_ARGUANA_DIR ?? path.resolve(REPO_ROOT, '../shared/benchmarks/arguana');
const TOP = 10;
/** Passages asked of LanceDB per question: it ranks passages, and a record's best passage stands for it. */
const PASSAGES_ASKED = 40;

interface Question {
  text: string;
  vector: number[];
}

/** What a serving process reports. */
interface Served {
  readyMs: number;
  rssAfterLoad: number;
  rssPeak: number;
  vector: { times: number[]; ids: string[][] };
  hybrid: { times: number[]; ids: string[][] };
}

function memory(): { rss: number; peak: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

function bytesUnder(target: string): number {
  const stat = statSync(target);
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(target).reduce((sum, name) => sum + bytesUnder(path.join(target, name)), 0);
}

/** The exact vector ranking of records (best passage's cosine), for recall. */
function exactRecords(vectors: Float32Array, dims: number, meta: SearchMeta, query: Float32Array): string[] {
  const best = new Float32Array(meta.records.length).fill(-2);
  for (let chunk = 0, offset = 0; offset < vectors.length; chunk++, offset += dims) {
    let dot = 0;
    for (let d = 0; d < dims; d++) dot += vectors[offset + d]! * query[d]!;
    const record = meta.chunk_records[chunk]!;
    if (dot > best[record]!) best[record] = dot;
  }
  return [...best.keys()]
    .sort((a, b) => best[b]! - best[a]!)
    .slice(0, TOP)
    .map((record) => meta.records[record]!.id);
}

function recallAt(exact: readonly string[][], found: readonly string[][]): number {
  let total = 0;
  exact.forEach((ids, at) => {
    const got = new Set(found[at]);
    total += ids.filter((id) => got.has(id)).length / Math.max(1, ids.length);
  });
  return total / Math.max(1, exact.length);
}

/** What building LanceDB's table and indexes took. */
interface LanceBuild {
  tableMs: number;
  vectorIndexMs: number;
  ftsMs: number;
  /** Peak RSS of the building process (VmHWM). */
  rssPeak: number;
}

/**
 * LanceDB sizes its CPU pool at the cores less two (LANCE_IO_CORE_RESERVATION): on 2 cores that
 * leaves one thread, on which 0.31.0's full-text index build deadlocks once it writes more than
 * one batch of posting lists (from about 50k passages here: lancedb/lancedb#3568, lance#7350).
 * Both engines' processes get the machine's cores, at least 2, as LanceDB's issue advises.
 */
export const LANCE_ENV = {
  RUST_LOG: 'error',
  LANCE_LOG: 'error',
  LANCE_CPU_THREADS: process.env.LANCE_CPU_THREADS ?? String(Math.max(2, os.availableParallelism())),
};

/** LanceDB's table of the build's passages: text, record id and vector; then its two indexes. */
async function buildLance(artifactsDir: string, lanceDir: string): Promise<LanceBuild> {
  const lancedb = await import('@lancedb/lancedb');
  const paths = artifactPaths(artifactsDir);
  const meta = JSON.parse(readFileSync(paths.searchMeta, 'utf8')) as SearchMeta;
  const passages = passagesFromBytes(new Uint8Array(readFileSync(paths.searchPassages)));
  const vectors = readVectors(artifactsDir);
  const dims = meta.embedder.dims;
  // Rows as LanceDB's own documentation adds them (plain objects, its Arrow conversion), 20,000 at a time.
  const rows = (from: number, to: number) =>
    Array.from({ length: to - from }, (_, at) => ({
      chunk: from + at,
      record: meta.records[meta.chunk_records[from + at]!]!.id,
      text: passages.text(from + at),
      vector: Array.from(vectors.subarray((from + at) * dims, (from + at + 1) * dims)),
    }));
  rmSync(lanceDir, { recursive: true, force: true });
  const db = await lancedb.connect(lanceDir);
  const count = meta.chunk_records.length;
  const STEP = 20_000;
  const [table, tableMs] = await time(async () => {
    const created = await db.createTable('passages', rows(0, Math.min(count, STEP)));
    for (let from = STEP; from < count; from += STEP) await created.add(rows(from, Math.min(count, from + STEP)));
    return created;
  });
  const [, vectorIndexMs] = await time(() => table.createIndex('vector', { config: lancedb.Index.hnswSq({ distanceType: 'cosine' }) }));
  const [, ftsMs] = await time(() => table.createIndex('text', { config: lancedb.Index.fts() }));
  return { tableMs, vectorIndexMs, ftsMs, rssPeak: memory().peak };
}

/** The serving side, in its own process: `--serve polyphony|lance --dir <dir> --questions-file <file>`. */
async function serve(engine: string, dir: string, questionsFile: string): Promise<Served> {
  const started = performance.now();
  const questions = JSON.parse(readFileSync(questionsFile, 'utf8')) as Question[];
  const vectorOf = new Map(questions.map((question) => [question.text, Float32Array.from(question.vector)]));
  let vectorSide: (question: Question) => Promise<string[]>;
  let hybrid: (question: Question) => Promise<string[]>;
  if (engine === 'polyphony' || engine === 'polyphony-vector') {
    const dims = questions[0]!.vector.length;
    // The questions' vectors as the real model gave them: neither engine pays for the embedding here.
    const given: Embedder = {
      id: JSON.parse(readFileSync(artifactPaths(dir).searchMeta, 'utf8')).embedder.id,
      dims,
      embed: async (texts) => texts.map((text) => vectorOf.get(text) ?? new Float32Array(dims)),
    };
    // One corpus per process, as a deployment loads it: the hybrid as deployed, or (polyphony-vector) the vector side alone.
    const corpus = await loadCorpus(dir, given, engine === 'polyphony' ? {} : { vectorWeight: 1, feedbackDocs: 0 });
    hybrid = async (question) => (await corpus.search.search(question.text, { limit: TOP })).map((hit) => hit.record.id);
    vectorSide = hybrid;
  } else {
    const lancedb = await import('@lancedb/lancedb');
    const table = await (await lancedb.connect(dir)).openTable('passages');
    const reranker = await lancedb.rerankers.RRFReranker.create();
    const distinct = (rows: { record: string }[]) => [...new Set(rows.map((row) => row.record))].slice(0, TOP);
    vectorSide = async (question) =>
      distinct(await table.vectorSearch(question.vector).distanceType('cosine').select(['record']).limit(PASSAGES_ASKED).toArray());
    hybrid = async (question) =>
      distinct(
        await table
          .query()
          .nearestTo(question.vector)
          .distanceType('cosine')
          .fullTextSearch(question.text)
          .rerank(reranker)
          .select(['record'])
          .limit(PASSAGES_ASKED)
          .toArray(),
      );
  }
  // Answerable: one question asked and answered.
  await hybrid(questions[0]!);
  const readyMs = performance.now() - started;
  const rssAfterLoad = memory().rss;
  const run = async (ask: (question: Question) => Promise<string[]>) => {
    for (const question of questions.slice(0, 5)) await ask(question); // warm-up
    const times: number[] = [];
    const ids: string[][] = [];
    for (const question of questions) {
      const t0 = performance.now();
      ids.push(await ask(question));
      times.push(performance.now() - t0);
    }
    return { times, ids };
  };
  const vector = await run(vectorSide);
  const mixed = await run(hybrid);
  return { readyMs, rssAfterLoad, rssPeak: memory().peak, vector, hybrid: mixed };
}

/** Runs this file in a child process with `args` and parses the JSON line it prints last. */
async function inChild<T>(what: string, args: string[]): Promise<T> {
  const child = spawn(process.execPath, [...process.execArgv, path.join(REPO_ROOT, 'bench', 'peer.ts'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...LANCE_ENV },
  });
  // LanceDB's scanner warns of a future change in every query's output columns, whatever its log level: those lines are dropped.
  child.stderr.on('data', (chunk: Buffer) => {
    const kept = chunk
      .toString('utf8')
      .split('\n')
      .filter((text) => text !== '' && !text.includes('Deprecation warning'));
    if (kept.length > 0) process.stderr.write(`${kept.join('\n')}\n`);
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  const line = out
    .split('\n')
    .filter((text) => text.startsWith('{'))
    .at(-1);
  if (code !== 0 || !line) throw new Error(`${what} failed (exit ${code}): ${out.slice(-2000)}`);
  return JSON.parse(line) as T;
}

/** LanceDB's table and indexes over a build's passages and vectors, built in a process of its own. */
export const buildLanceInChild = (artifactsDir: string, lanceDir: string) =>
  inChild<LanceBuild>('the LanceDB build', ['--build-lance', artifactsDir, '--dir', lanceDir]);

const inProcess = (engine: string, dir: string, questionsFile: string, cold: boolean) => {
  if (cold) dropPageCache();
  return inChild<Served>(`the ${engine} process`, ['--serve', engine, '--dir', dir, '--questions-file', questionsFile]);
};

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;

async function benchSize(
  size: number,
  questions: Question[],
  options: { keep: string | undefined; cold: boolean; pool: string[]; buildEmbedder: Embedder & { misses(): number } },
) {
  const { root, artifactsDir } = await builtCorpus(size, options.pool, { withOrama: false, keep: options.keep, buildEmbedder: options.buildEmbedder });
  const lanceDir = path.join(root, 'lance');
  // In a process of its own too: its memory is its own, and a build that never finishes cannot leave this one waiting.
  // With --keep, a table built by an earlier run is reused with the figures that run measured.
  const record = path.join(root, 'lance-build.json');
  const built =
    options.keep && existsSync(record) && existsSync(lanceDir)
      ? (JSON.parse(readFileSync(record, 'utf8')) as LanceBuild)
      : await buildLanceInChild(artifactsDir, lanceDir);
  writeFileSync(record, JSON.stringify(built));
  const questionsFile = path.join(root, 'peer-questions.json');
  writeFileSync(questionsFile, JSON.stringify(questions));
  const meta = JSON.parse(readFileSync(artifactPaths(artifactsDir).searchMeta, 'utf8')) as SearchMeta;
  const vectors = readVectors(artifactsDir);
  const exact = questions.map((question) => exactRecords(vectors, meta.embedder.dims, meta, Float32Array.from(question.vector)));
  const ours = await inProcess('polyphony', artifactsDir, questionsFile, options.cold);
  // Our vector side alone is another tuning: its own process, its times and rankings only (start-up and memory are the deployment's, above).
  ours.vector = (await inProcess('polyphony-vector', artifactsDir, questionsFile, false)).vector;
  const theirs = await inProcess('lance', lanceDir, questionsFile, options.cold);
  const ourBytes = bytesUnder(path.join(artifactsDir, 'data', 'search'));
  const theirBytes = bytesUnder(lanceDir);
  const row = (label: string, a: number, b: number, show: (value: number) => string) => console.log(`| ${label} | ${show(a)} | ${show(b)} | ${ratio(b, a)} |`);
  console.log(`\n### ${meta.chunk_records.length} passages, ${questions.length} questions\n`);
  console.log('| figure | Polyphony | LanceDB 0.31.0 | LanceDB ÷ Polyphony |');
  console.log('|---|---|---|---|');
  console.log(
    `| build of the index | (bench/scale.ts's build; search artifacts only) | table ${ms(built.tableMs)}, HNSW-SQ ${ms(built.vectorIndexMs)}, full text ${ms(built.ftsMs)}; RSS peak ${mb(built.rssPeak)} | |`,
  );
  row('bytes on disk (search)', ourBytes, theirBytes, mb);
  row(`start-up to the first answer (${options.cold ? 'page cache dropped before each start' : 'warm page cache'})`, ours.readyMs, theirs.readyMs, ms);
  row('RSS after load', ours.rssAfterLoad, theirs.rssAfterLoad, mb);
  row('RSS peak', ours.rssPeak, theirs.rssPeak, mb);
  for (const side of ['vector', 'hybrid'] as const) {
    row(`${side === 'vector' ? 'vector side alone' : 'hybrid'}: p50`, percentile(ours[side].times, 50), percentile(theirs[side].times, 50), ms);
    row(`${side === 'vector' ? 'vector side alone' : 'hybrid'}: p95`, percentile(ours[side].times, 95), percentile(theirs[side].times, 95), ms);
  }
  row('recall@10 of the vector side against exact', recallAt(exact, ours.vector.ids), recallAt(exact, theirs.vector.ids), (value) => value.toFixed(3));
  console.log(`| hybrid top 10: records both engines return | ${recallAt(ours.hybrid.ids, theirs.hybrid.ids).toFixed(3)} | | |`);
  if (!options.keep) rmSync(root, { recursive: true, force: true });
}

async function main() {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '100000' },
      questions: { type: 'string', default: '100' },
      keep: { type: 'string' },
      cold: { type: 'boolean', default: false },
      cache: { type: 'string', default: path.join(os.tmpdir(), 'polyphony-scale-cache') },
      serve: { type: 'string' },
      'build-lance': { type: 'string' },
      dir: { type: 'string' },
      'questions-file': { type: 'string' },
    },
  });
  if (values['build-lance']) {
    process.stdout.write(`${JSON.stringify(await buildLance(values['build-lance'], values.dir!))}\n`);
    process.exit(0);
  }
  if (values.serve) {
    const served = await serve(values.serve, values.dir!, values['questions-file']!);
    process.stdout.write(`${JSON.stringify(served)}\n`);
    process.exit(0);
  }
  if (!existsSync(path.join(ARGUANA, 'corpus.jsonl.gz'))) {
    console.log(`(${ARGUANA} not found: the peer benchmark composes its corpus from ArguAna and is skipped)`);
    return;
  }
  mkdirSync(values.cache, { recursive: true });
  const pool = sentencePool();
  const texts = arguanaClaims(ARGUANA, Number(values.questions));
  const model = await createUseLiteEmbedder({ workers: 2 });
  const questions = (await model.embed(texts)).map((vector, at) => ({ text: texts[at]!, vector: Array.from(vector) }));
  const buildEmbedder = await sentenceVectorEmbedder(model, pool, values.cache, (line) => console.log(`[sentences] ${line}`));
  if (values.cold) dropPageCache(); // refused here (not root, a read-only /proc/sys): say so before building anything
  for (const size of values.sizes.split(',').map(Number)) await benchSize(size, questions, { keep: values.keep, cold: values.cold, pool, buildEmbedder });
  process.exit(0);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) void main();
