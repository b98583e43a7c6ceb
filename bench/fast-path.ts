/**
 * Fast-path benchmark: build time, server start time and GET /api/query latency over HTTP
 * on loopback, each printed beside a reference measured in the same run:
 *   - latency vs the query embedding alone (the floor the fast path cannot go under
 *     without the query cache) and vs a plain Float32Array cosine scan of the same vectors;
 *   - a warm rebuild vs the cold build.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createApp } from '../api/app.ts';
import { loadCorpus } from '../api/load-artifacts.ts';
import { loadConfig } from '../api/config.ts';
import { createUseLiteEmbedder, withQueryCache, type Embedder } from '../providers/embedder.ts';
import type { SearchTuning } from '../core/search/search-index.ts';
import { buildArtifacts } from '../scripts/build.ts';
import { importBeir } from '../scripts/import-beir.ts';
import { importOmnarai } from '../scripts/import-omnarai.ts';
import { loadContent } from '../content-files/load-content.ts';
import { REPO_ROOT } from '../core/paths.ts';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import { arguanaClaims, ms, plainScan, ratio, readVectors, summarize, time } from './lib.ts';

const tmp = (label: string) => mkdtempSync(path.join(os.tmpdir(), `polyphony-bench-${label}-`));

async function measureServerStart(artifactsDir: string): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'api/server.ts')], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', ARTIFACTS_DIR: artifactsDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  while (!/listening on http:\/\/[^:]+:(\d+)/.test(output)) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (child.exitCode !== null) throw new Error(`server exited: ${output}`);
  }
  const port = output.match(/listening on http:\/\/[^:]+:(\d+)/)![1];
  const response = await fetch(`http://127.0.0.1:${port}/api/health`);
  if (!response.ok) throw new Error('health failed');
  const elapsed = performance.now() - started;
  child.kill('SIGTERM');
  await once(child, 'exit');
  return elapsed;
}

interface BenchContentOptions {
  /** A persistent embedding cache (ArguAna: its first build embeds for minutes); default a fresh one. */
  cacheDir?: string;
  /** Change one work and rebuild: the one-file rebuild time. */
  oneFileChange?: string;
}

async function benchContent(
  label: string,
  contentDir: string,
  queries: readonly string[],
  embedder: Embedder,
  serverEmbedder: Embedder,
  options: BenchContentOptions = {},
) {
  const artifactsDir = tmp(`${label}-artifacts`);
  const cacheDir = options.cacheDir ?? tmp(`${label}-cache`);
  const [cold, coldMs] = await time(() => buildArtifacts({ contentDir, artifactsDir, cacheDir, embedder }));
  const [, warmMs] = await time(() => buildArtifacts({ contentDir, artifactsDir, cacheDir, embedder }));
  let oneFile: { ms: number; embedded: number } | undefined;
  if (options.oneFileChange) {
    appendFileSync(options.oneFileChange, '\n\nA sentence added to change this one work.\n');
    const [result, elapsed] = await time(() => buildArtifacts({ contentDir, artifactsDir, cacheDir, embedder }));
    oneFile = { ms: elapsed, embedded: result.embedded };
  }
  const startMs = await measureServerStart(artifactsDir);

  // As api/server.ts does: questions embedded on a worker thread; repeats hit the query cache.
  const corpus = await loadCorpus(artifactsDir, withQueryCache(serverEmbedder));
  const server = createApp({ corpus, log: () => {} }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const hit = async (q: string) => {
    const started = performance.now();
    const response = await fetch(`http://127.0.0.1:${port}/api/query?q=${encodeURIComponent(q)}`);
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`status ${response.status} for ${q}`);
    return performance.now() - started;
  };
  for (const q of queries.slice(0, 5)) await hit(`${q} warmup`);
  const distinct: number[] = [];
  for (const q of queries) distinct.push(await hit(q));
  const repeated: number[] = [];
  for (const q of queries) repeated.push(await hit(q));
  server.close();

  const embedTimes: number[] = [];
  const scanTimes: number[] = [];
  const stored = readVectors(artifactsDir);
  for (const q of queries) {
    // The query embedding alone, as the server runs it (its worker thread, the server's settings).
    const [vectors, elapsed] = await time(() => serverEmbedder.embed([`${q} (reference)`]));
    embedTimes.push(elapsed);
    scanTimes.push((await time(async () => plainScan(stored, embedder.dims, vectors[0]!)))[1]);
  }
  const d = summarize(distinct);
  const r = summarize(repeated);
  const e = summarize(embedTimes);
  const s = summarize(scanTimes);
  console.log(`\n## ${label}: ${cold.works} works, ${cold.divergences} Atlas records, ${cold.chunks} passages`);
  console.log(
    cold.embedded > 0
      ? `build (cold, ${cold.embedded} passages embedded): ${ms(coldMs)}; warm rebuild: ${ms(warmMs)} (${ratio(warmMs, coldMs)} of cold)`
      : `build (every passage from the persistent embedding cache ${path.relative(REPO_ROOT, cacheDir)}; delete it to time a first build): ${ms(coldMs)}; again: ${ms(warmMs)}`,
  );
  if (oneFile)
    console.log(
      `rebuild after changing one work: ${ms(oneFile.ms)}, ${oneFile.embedded} passage(s) embedded (${ratio(oneFile.ms, warmMs)} of a rebuild with no change)`,
    );
  console.log(`server start to first /api/health: ${ms(startMs)}`);
  console.log(`fast path, ${d.n} distinct questions over HTTP: median ${ms(d.median)}, p95 ${ms(d.p95)}`);
  console.log(`fast path, the same questions repeated:       median ${ms(r.median)}, p95 ${ms(r.p95)}`);
  console.log(`reference: query embedding alone median ${ms(e.median)} → distinct fast path is ${ratio(d.median, e.median)} of it`);
  console.log(`reference: Float32Array cosine scan alone median ${ms(s.median)} → repeated fast path is ${ratio(r.median, s.median)} of it`);
  await compareTunings(label, artifactsDir, queries, serverEmbedder, PREVIOUS_DEFAULT);
}

/**
 * The fast path over HTTP with the default tuning beside a reference tuning (the previous
 * default), question by question in alternating order so that a noisy neighbour slows both.
 */
async function compareTunings(label: string, artifactsDir: string, queries: readonly string[], serverEmbedder: Embedder, reference: Partial<SearchTuning>) {
  const servers = await Promise.all(
    [undefined, reference].map(async (tuning) => {
      const corpus = await loadCorpus(artifactsDir, withQueryCache(serverEmbedder), tuning);
      const server = createApp({ corpus, log: () => {} }).listen(0, '127.0.0.1');
      await once(server, 'listening');
      return { server, port: (server.address() as AddressInfo).port, times: [] as number[] };
    }),
  );
  const hit = async (port: number, q: string) => {
    const started = performance.now();
    const response = await fetch(`http://127.0.0.1:${port}/api/query?q=${encodeURIComponent(q)}`);
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`status ${response.status} for ${q}`);
    return performance.now() - started;
  };
  for (const { port } of servers) for (const q of queries.slice(0, 5)) await hit(port, `${q} warmup`);
  for (const [index, q] of queries.entries()) {
    const order = index % 2 === 0 ? servers : [...servers].reverse();
    for (const entry of order) entry.times.push(await hit(entry.port, `${q} (tuning)`));
  }
  for (const { server } of servers) server.close();
  const [now, before] = servers.map((entry) => summarize(entry.times));
  console.log(
    `${label}, fast path over HTTP, ${now!.n} distinct questions, default vs the previous default ${JSON.stringify(reference)} in turn: ` +
      `median ${ms(now!.median)} vs ${ms(before!.median)} (${ratio(now!.median, before!.median)}), p95 ${ms(now!.p95)} vs ${ms(before!.p95)} (${ratio(now!.p95, before!.p95)})`,
  );
}

/** The default before issue 24 (bench/README.md, "Past 0.60"): the reference of compareTunings. */
const PREVIOUS_DEFAULT: Partial<SearchTuning> = { fusion: 'max', vectorWeight: 0.5, lexicalFeedbackTerms: 0 };

async function main() {
  const embedder = await createUseLiteEmbedder();
  // As the server runs it: one worker, the server's thread and kernel settings (EMBED_THREADS, EMBED_KERNELS).
  const server = loadConfig(process.env);
  const serverEmbedder = await createUseLiteEmbedder({ workers: 1, offThread: true, threads: server.embedThreads, kernels: server.embedKernels });
  const demoContent = path.join(REPO_ROOT, 'content');
  const demo = loadContent(demoContent);
  // Questions a reader would ask of the demo corpus: the Atlas questions and, phrased as
  // questions, the work titles.
  const demoQueries = [
    ...demo.divergences.map((entry) => entry.data.question),
    ...demo.works.map((entry) => `What does the corpus say about ${entry.data.title.toLowerCase()}?`),
  ].slice(0, 120);
  await benchContent('demo content', demoContent, demoQueries, embedder, serverEmbedder);

  const omnarai = path.resolve(REPO_ROOT, '../shared/omnarai');
  if (existsSync(omnarai)) {
    const contentDir = tmp('omnarai-content');
    importOmnarai({ from: omnarai, out: contentDir, force: true });
    const gold = JSON.parse(readFileSync(path.join(omnarai, 'eval-gold-set.json'), 'utf8')) as { query: string }[];
    const questions = readFileSync(path.join(omnarai, 'divergences.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { question: string }).question);
    await benchContent('imported Omnarai data', contentDir, [...gold.map((item) => item.query), ...questions.slice(0, 100)], embedder, serverEmbedder);
  } else {
    console.log('\n(../shared/omnarai not found: imported-data figures skipped)');
  }

  const arguana = path.resolve(REPO_ROOT, '../shared/benchmarks/arguana');
  if (existsSync(path.join(arguana, 'corpus.jsonl.gz'))) {
    const contentDir = tmp('arguana-content');
    importBeir({ from: arguana, out: contentDir, force: true });
    // The claim of each query (its first sentence, at most 30 words), as a caller would ask.
    const questions = arguanaClaims(arguana, 150);
    await benchContent('BEIR ArguAna', contentDir, questions, embedder, serverEmbedder, {
      cacheDir: path.join(REPO_ROOT, '.cache', 'embeddings'),
      oneFileChange: path.join(contentDir, 'works', 'BEIR-1.md'),
    });
  } else {
    console.log('\n(../shared/benchmarks/arguana not found: ArguAna figures skipped)');
  }
}

void main();
