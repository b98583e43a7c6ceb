/**
 * Scores the API's own retrieval on a BEIR dataset: the content folder made by
 * scripts/import-beir.ts is built with the normal build, loaded with loadCorpus, and every
 * judged query goes through retrieve() of the fast path (the code behind GET /api/query).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { retrieve } from '../../core/retrieve.ts';
import { MAX_LIMIT, MAX_QUERY_CHARS, parseQueryParameters, type FastQuery } from '../../core/query-params.ts';
import type { SearchTuning } from '../../core/search/search-index.ts';
import { loadCorpus } from '../../api/load-artifacts.ts';
import { createUseLiteEmbedder, precisionFromEnv, type Embedder } from '../../providers/embedder.ts';
import { buildArtifacts, type BuildResult } from '../build.ts';
import { approximateFromEnv } from './vector-index-build.ts';
import { artifactPaths } from '../../core/artifacts.ts';
import { evaluateRankings, ndcgAt, parseQrels, parseQueries, readMaybeGzip, type MetricSummary, type Qrels } from './beir.ts';
import { cachedEmbedder } from './embedding-cache.ts';

// The eval embeds its queries through the cache too: re-running it embeds no query twice.
export { cachedEmbedder };
import { fnv1a } from '../../core/random.ts';

/** Ranks scored per query: 100 for Recall@100, plus one for the query's own document, dropped. */
export const EVAL_DEPTH = 101;

/**
 * Retrieval settings for a benchmark run: no relevance floor (a BEIR run ranks every
 * document; the floors exist to say "nothing relevant" to an API caller) and enough
 * candidates for Recall@100. Everything else is the deployment's default tuning.
 */
/** A benchmark ranks every document: no calibrated relevance floor either (relevance.ts), and no question gate (retrieval-choice.ts). */
export const EVAL_RETRIEVE = { floors: { relevant: 0, atlas: 0 }, questionGate: 0, vectors: 'required' } as const;

export const EVAL_TUNING: Partial<SearchTuning> = { floors: false, candidates: EVAL_DEPTH };

export interface BeirEvalOptions {
  contentDir: string;
  queriesFile: string;
  qrelsFile: string;
  /** Use the build in this folder when it has one; otherwise build into it. */
  artifactsDir: string;
  cacheDir: string;
  /** Score only the first N judged queries (in qrels order). */
  limit?: number;
  /** Only these query ids (in addition to limit). */
  queryIds?: readonly string[];
  /** Keep only the first N words of each query: a proxy for the short questions API callers send. */
  queryWords?: number;
  /** Overrides on top of EVAL_TUNING, for experiments. */
  tuning?: Partial<SearchTuning>;
  /** Rebuild even when artifactsDir has a build. */
  rebuild?: boolean;
  embedder?: Embedder;
  log?: (line: string) => void;
}

export interface BeirEvalResult extends MetricSummary {
  build: BuildResult | 'reused';
  /** Judged queries whose text exceeds MAX_QUERY_CHARS and were cut to it, as an API caller must. */
  truncatedQueries: string[];
  /** Judged queries with no text in the queries file (scored 0). */
  missingQueries: string[];
  /**
   * The same metrics on the two halves of the queries (halfOf): settings are chosen on A, so B
   * says how much of a gain was fitted to the queries it was chosen on.
   */
  halves: Record<QueryHalf, MetricSummary>;
  perQuery: { id: string; ndcg10: number; ranked: string[] }[];
  timings: { buildMs: number; loadMs: number; embedQueriesMs: number; queryMsMean: number; queryMsP95: number };
}

export function readImportMap(contentDir: string): Record<string, string> {
  const file = path.join(contentDir, 'import-map.json');
  if (!existsSync(file)) throw new Error(`${file} is missing: import the corpus with scripts/import-beir.ts`);
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
}

export type QueryHalf = 'A' | 'B';

/** A query's half, by a stable hash of its id: about half of any query set in each, the same on every run. */
export function halfOf(queryId: string): QueryHalf {
  return fnv1a(queryId) % 2 === 0 ? 'A' : 'B';
}

/** The first `words` words of a text (all of it when `words` is undefined). */
export function firstWords(text: string, words: number | undefined): string {
  return words === undefined ? text : text.split(/\s+/).filter(Boolean).slice(0, words).join(' ');
}

/** The FastQuery an HTTP client would send: q cut to the API's length limit, then a wider internal limit. */
export function benchmarkQuery(text: string): { query: FastQuery; truncated: boolean } {
  let q = text;
  let truncated = false;
  if (q.length > MAX_QUERY_CHARS) {
    const cut = q.slice(0, MAX_QUERY_CHARS);
    q = cut.slice(0, Math.max(cut.lastIndexOf(' '), 1)).trim();
    truncated = true;
  }
  if (q.trim() === '') q = '.';
  // limit 50 is the HTTP maximum; the eval needs 101 ranks, set after parsing.
  const parsed = parseQueryParameters({ q, limit: String(MAX_LIMIT) });
  return { query: { ...parsed, limit: EVAL_DEPTH }, truncated };
}

export async function runBeirEval(options: BeirEvalOptions): Promise<BeirEvalResult> {
  const log = options.log ?? (() => {});
  const qrels: Qrels = parseQrels(readFileSync(options.qrelsFile, 'utf8'));
  const queryText = new Map(parseQueries(readMaybeGzip(options.queriesFile)).map((query) => [query._id, query.text]));
  let queryIds = [...qrels.keys()];
  if (options.queryIds) {
    const wanted = new Set(options.queryIds);
    queryIds = queryIds.filter((id) => wanted.has(id));
  }
  if (options.limit !== undefined) queryIds = queryIds.slice(0, options.limit);

  const importMap = readImportMap(options.contentDir);
  const sourceOf = new Map(Object.entries(importMap).map(([source, record]) => [record, source]));
  const model = options.embedder ?? (await createUseLiteEmbedder({ precision: precisionFromEnv(process.env) }));
  const embedder = cachedEmbedder(model, options.cacheDir);

  let build: BuildResult | 'reused' = 'reused';
  let started = performance.now();
  if (options.rebuild || !existsSync(artifactPaths(options.artifactsDir).manifest)) {
    log(`building ${options.contentDir} into ${options.artifactsDir}`);
    // SEARCH_APPROXIMATE_FROM=0 builds the approximate index too, to evaluate through it (--tuning '{"approximateFrom":0}').
    const approximateFrom = approximateFromEnv(process.env);
    build = await buildArtifacts({
      ...(approximateFrom === undefined ? {} : { approximateFrom }),
      contentDir: options.contentDir,
      artifactsDir: options.artifactsDir,
      cacheDir: options.cacheDir,
      embedder: model,
      log: (line) => log(`[build] ${line}`),
    });
  } else {
    log(`using the build in ${options.artifactsDir}`);
  }
  const buildMs = performance.now() - started;

  started = performance.now();
  const corpus = await loadCorpus(options.artifactsDir, embedder, { ...EVAL_TUNING, ...options.tuning });
  const loadMs = performance.now() - started;

  const truncatedQueries: string[] = [];
  const missingQueries: string[] = [];
  const prepared: { id: string; query: FastQuery }[] = [];
  for (const id of queryIds) {
    const text = queryText.get(id);
    if (text === undefined) {
      missingQueries.push(id);
      continue;
    }
    const { query, truncated } = benchmarkQuery(firstWords(text, options.queryWords));
    if (truncated) truncatedQueries.push(id);
    prepared.push({ id, query });
  }
  // Embed every query up front (through the cache) so per-query timings measure retrieval.
  started = performance.now();
  await embedder.embed(prepared.map((entry) => entry.query.cleanQuery));
  const embedQueriesMs = performance.now() - started;
  log(`embedded ${prepared.length} queries in ${Math.round(embedQueriesMs)} ms`);

  const rankings = new Map<string, string[]>();
  const times: number[] = [];
  for (const { id, query } of prepared) {
    const t0 = performance.now();
    const { hits } = await retrieve(corpus, query, EVAL_RETRIEVE);
    times.push(performance.now() - t0);
    const ranked: string[] = [];
    for (const hit of hits) {
      const source = sourceOf.get(hit.record.id);
      // BEIR and MTEB drop a hit that is the query itself (ArguAna queries are corpus documents).
      if (source === undefined || source === id) continue;
      ranked.push(source);
    }
    rankings.set(id, ranked.slice(0, 100));
  }
  times.sort((a, b) => a - b);
  const summary = evaluateRankings(rankings, qrels, queryIds);
  return {
    ...summary,
    build,
    truncatedQueries,
    missingQueries,
    halves: {
      A: evaluateRankings(
        rankings,
        qrels,
        queryIds.filter((id) => halfOf(id) === 'A'),
      ),
      B: evaluateRankings(
        rankings,
        qrels,
        queryIds.filter((id) => halfOf(id) === 'B'),
      ),
    },
    perQuery: queryIds.map((id) => ({ id, ndcg10: ndcgAt(rankings.get(id) ?? [], qrels.get(id)!, 10), ranked: rankings.get(id) ?? [] })),
    timings: {
      buildMs,
      loadMs,
      embedQueriesMs,
      queryMsMean: times.reduce((sum, ms) => sum + ms, 0) / (times.length || 1),
      queryMsP95: times[Math.min(times.length - 1, Math.floor(times.length * 0.95))] ?? 0,
    },
  };
}
