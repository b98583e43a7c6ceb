/**
 * The build: content/ → artifacts/. Validates, derives records, renders markdown, hashes,
 * embeds (cached by content hash) and writes the static indices the API and site read.
 * Writes into a fresh folder and swaps it in, so a reader never sees half a build. The public
 * files are written by scripts/lib/public-files.ts, the search artifacts by scripts/lib/search-build.ts.
 */
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_RELEVANCE_MODEL, RELEVANCE_CALIBRATION_FILE } from '../core/search/relevance.ts';
import { pathToFileURL } from 'node:url';
import { precisionFromEnv, type Embedder } from '../providers/embedder.ts';
import { createConfiguredEmbedder, EmbeddingsConfigError } from '../providers/embeddings-config.ts';
import { planningEmbedder, type EmbeddingPlan } from './lib/embedding-cache.ts';
import { EmbeddingCeilingError } from '../providers/openai-embedder.ts';
import { deriveConceptGraph, deriveDivergence, deriveWork, type DivergenceFull, type WorkRecord } from '../core/records.ts';
import { buildManifest } from '../core/build-manifest.ts';
import { recordConcepts, trackTensions } from '../core/tension-identity.ts';
import { mergeMap } from '../core/tension-merges.ts';
import { encodeFullText } from '../core/search/fulltext.ts';
import { artifactPaths, type ArtifactPaths } from '../core/artifacts.ts';
import type { SearchChunk, SearchMeta } from '../core/search/types.ts';
import { cachedEmbedder, createEmbeddingCache } from './lib/embedding-cache.ts';
import { ContentError } from '../content-files/issues.ts';
import { loadContent, type LoadedContent } from '../content-files/load-content.ts';
import { CONTENT_MEMO_FILE, openContentMemo } from '../content-files/content-memo.ts';
import { pathsFromEnv, type BuildPaths } from '../core/paths.ts';
import { writeFile, writeJson } from '../content-files/write.ts';
import { renderLlmsTxt } from './lib/llms-txt.ts';
import { exitWhenFlushed } from './lib/cli-exit.ts';
import { writtenResult } from './lib/certify/published-evidence.ts';
import { attachLongitudinal } from './lib/longitudinal.ts';
import { writeAudio, writeCalibration, writeConcepts, writePages, writeRecordTwins } from './lib/public-files.ts';
import { calibrationSummary } from '../core/certify/calibration-summary.ts';
import { buildSearch } from './lib/search-build.ts';
import { approximateFromEnv, writeQuantizedVectors, writeVectorIndex } from './lib/vector-index-build.ts';
import { encodeIdentities, readPreviousSearch } from './lib/previous-search.ts';
import { readTwinKeys, twinKeysFile } from './lib/twin-reuse.ts';
import { approximatePathApplies, QUANTIZE_FROM } from '../core/search/chunk-scan.ts';
import { DEFAULT_TUNING } from '../core/search/search-index.ts';
import { chooseForCorpus, probeKey } from './lib/retrieval-probe.ts';
import { RETRIEVAL_CHOICE_FILE } from '../core/search/retrieval-choice.ts';
import { readRetrievalChoice } from '../api/retrieval-choice-file.ts';
import { corpusRevision } from '../content-files/revision.ts';
import { historyLimitFromEnv, readChangeHistory, writeChangeFiles } from './lib/change-history.ts';
import { writeFeeds } from './lib/feeds.ts';
import type { ChangeHistory } from '../schemas/api/changes.ts';

export interface BuildOptions extends BuildPaths {
  /** Default: the embedder EMBEDDINGS_CONFIG in `env` describes, else USE-lite (providers/embeddings-config.ts). */
  embedder?: Embedder;
  /** Where EMBEDDINGS_CONFIG, its key and EMBED_PRECISION are read (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** Passages from which the approximate vector index is built (default: the search's own threshold). */
  approximateFrom?: number;
  /** Commits of the content folder the change history reads at most (CHANGES_HISTORY_LIMIT; default DEFAULT_HISTORY_LIMIT). */
  historyLimit?: number;
  /**
   * Plan only (`npm run build -- --plan`): read the content, count what the embedding cache lacks
   * and what embedding it could cost, send nothing, and leave the artifacts as they were.
   */
  plan?: boolean;
  log?: (line: string) => void;
  now?: () => Date;
}

export interface BuildResult {
  works: number;
  divergences: number;
  chunks: number;
  embedded: number;
  cachedEmbeddings: number;
  /** Answers of re-elicitation pairs newly embedded for their longitudinal summary (not from the cache). */
  answersEmbedded: number;
  milliseconds: number;
  /** Under `plan`: what the build would embed and what it could cost; nothing was built or sent. */
  plan?: BuildPlan;
}

export interface BuildPlan extends EmbeddingPlan {
  embedder: string;
  passages: number;
  /** From EMBEDDINGS_CONFIG; null for the embedded model, which costs nothing. */
  pricePerMillionTokens: number | null;
  ceilingUsd: number | null;
}

export async function buildArtifacts(options: BuildOptions): Promise<BuildResult> {
  const started = Date.now();
  const log = options.log ?? (() => {});
  const now = options.now ?? (() => new Date());
  // Files whose bytes the previous build saw are not parsed or derived again (content-memo.ts).
  const memo = openContentMemo(path.join(options.cacheDir, CONTENT_MEMO_FILE));
  const content = loadContent(options.contentDir, { memo });
  memo.save(); // the content is valid: what was parsed is kept whether or not the rest of the build completes
  log(`validated ${content.files.length} content files in ${options.contentDir} (${memo.stats.reused} parsed by an earlier build)`);

  const staging = `${options.artifactsDir}.staging-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const out = artifactPaths(staging);

  const works = [
    // The body is read from the file's bytes only where the memo did not give what it gives (lazy-text.ts).
    ...content.works.map((entry) => deriveWork(entry.data, entry.bodyText ?? entry.body, 'seed')),
    ...content.proposals.map((entry) => deriveWork(entry.data, entry.bodyText ?? entry.body, 'proposal')),
  ].sort(byId);
  const reElicitedBy = new Map<string, string[]>();
  for (const entry of content.divergences) {
    if (entry.data.re_elicits) {
      reElicitedBy.set(entry.data.re_elicits, [...(reElicitedBy.get(entry.data.re_elicits) ?? []), entry.data.id]);
    }
  }
  const divergences = content.divergences
    .map((entry) => deriveDivergence(entry.data, entry.body, content.registry, reElicitedBy.get(entry.data.id) ?? [], writtenResult(content.dir, entry.data)))
    .sort(byDateThenId);
  const tensions = divergences.flatMap((record) => record.tensions);
  const graph = deriveConceptGraph(
    content.concepts.map((entry) => entry.data),
    works,
  );
  const dispositions = Object.fromEntries(content.tensions.map((entry) => [entry.data.key, entry.data.dispositions]));
  const merges = mergeMap(content.tensionMerges);

  const { embedder, configured, planning } = await chooseEmbedder(options, log);
  const answersEmbedded = await attachLongitudinal(
    divergences,
    createEmbeddingCache(options.cacheDir, embedder),
    embedder.id,
    content.dir,
    content.calibration,
  );

  writeJson(out.works, works);
  writeJson(out.divergences, divergences);
  writeJson(out.tensions, tensions);
  writeJson(out.dispositions, dispositions);
  writeJson(out.tensionMerges, Object.fromEntries(merges));
  writeJson(out.concepts, graph);
  writeJson(out.models, content.registry);
  writeJson(out.site, content.site);
  writeJson(out.claims, content.claims);

  // The content's history (docs/CHANGES.md), read before the twins: each record's twin carries its revisions.
  const history = readHistory(options, corpusRevision(content.files), log);
  const previousPaths = artifactPaths(options.artifactsDir);
  await writeTwins({ content, works, divergences, history }, out, previousPaths, log);
  if (writeCalibration(content, out.public)) log('certification calibration served at /certification-calibration.json');
  const conceptIds = new Set(graph.nodes.map((node) => node.id));
  const byRecord = new Map(divergences.map((record) => [record.id, recordConcepts(record, conceptIds)]));
  const tracked = trackTensions(tensions, dispositions, (id) => byRecord.get(id) ?? [], [], merges);
  await writeConcepts(content, graph, out.public, { graph, works, divergences, tensions: tracked });
  const audio = writeAudio(content, out.public);
  writeJson(out.audio, audio);
  await writePages(content, out);

  // The previous build's search artifacts, still in place: passages it indexed are carried over.
  const previous = readPreviousSearch(options.artifactsDir, log);
  const search = await buildSearch(content, works, divergences, { ...options, embedder, previous }, log);
  if (planning) {
    rmSync(staging, { recursive: true, force: true });
    return { works: works.length, divergences: divergences.length, ...plannedResult(planning, configured, search), milliseconds: Date.now() - started };
  }
  await writeVectors(search, out, { approximateFrom: options.approximateFrom ?? DEFAULT_TUNING.approximateFrom, previous }, log);
  log('writing the search artifacts');
  writeJson(out.searchMeta, search.meta);
  writeFile(out.searchFullText, encodeFullText(search.fullText));
  writeFile(out.searchPassages, search.passages);
  writeFile(out.searchIdentities, encodeIdentities(search.identities));
  await writeRelevanceAndChoice(content, search, embedder, { out, previous: previousPaths, cacheDir: options.cacheDir }, log);

  const manifest = buildManifest({
    works,
    divergences,
    graph,
    audioTracks: audio.tracks.length,
    registry: content.registry,
    seedFiles: content.files.filter((file) => file.file.startsWith('works/')),
    corpusRev: corpusRevision(content.files),
    generatedAt: now().toISOString(),
    ...(content.calibration ? { calibration: calibrationSummary(content.calibration) } : {}),
    embedder: search.meta.embedder,
  });
  writeJson(out.manifest, manifest);
  writeChangeFiles(history, out);
  writeFeeds(history, { site: content.site, works, divergences, generatedAt: manifest.generated_at, env: options.env ?? process.env }, out.public, log);
  writeFile(path.join(out.public, 'llms.txt'), renderLlmsTxt(content, manifest));
  writeJson(out.buildInfo, {
    built_at: now().toISOString(),
    content_dir: content.dir,
    corpus_rev: manifest.published_releases.corpus_rev,
  });

  // The swap: the previous build moved aside and the new one renamed into place (a reader finds
  // one or the other, never none for longer than two renames), then the previous one removed.
  const aside = `${options.artifactsDir}.previous-${process.pid}`;
  rmSync(aside, { recursive: true, force: true });
  mkdirSync(path.dirname(options.artifactsDir), { recursive: true });
  const hadPrevious = existsSync(options.artifactsDir);
  if (hadPrevious) renameSync(options.artifactsDir, aside);
  renameSync(staging, options.artifactsDir);
  if (hadPrevious) {
    const removing = Date.now();
    rmSync(aside, { recursive: true, force: true });
    log(`the previous build removed in ${Date.now() - removing} ms`);
  }
  const result: BuildResult = {
    works: works.length,
    divergences: divergences.length,
    chunks: search.meta.chunk_records.length,
    embedded: search.embedded,
    cachedEmbeddings: search.cached,
    answersEmbedded,
    milliseconds: Date.now() - started,
  };
  if (configured?.kind === 'openai-compatible') {
    const spend = configured.embedder.spend;
    log(`embeddings: ${spend.requests} requests, ${spend.tokens} tokens, $${spend.usd.toFixed(4)} of the ceiling of $${configured.config.ceiling_usd}`);
  }
  log(
    `built ${result.works} works, ${result.divergences} Atlas records, ${result.chunks} passages ` +
      `(${result.embedded} embedded, ${result.cachedEmbeddings} from the previous build or the cache) in ${result.milliseconds} ms`,
  );
  return result;
}

/**
 * The passages' vectors: vectors.f32; from the approximate path's threshold the index over them
 * (grown from the previous build's where it can be), and from QUANTIZE_FROM passages their int8
 * rows (vectors.i8), as the server holds them there.
 */
async function writeVectors(
  search: Awaited<ReturnType<typeof buildSearch>>,
  out: ReturnType<typeof artifactPaths>,
  options: { approximateFrom: number; previous: ReturnType<typeof readPreviousSearch> },
  log: (line: string) => void,
): Promise<void> {
  const { approximateFrom, previous } = options;
  const approximate = approximatePathApplies(search.meta.chunk_records.length, approximateFrom);
  writeFile(out.searchVectors, new Uint8Array(search.vectors.buffer, search.vectors.byteOffset, search.vectors.byteLength));
  const index = await writeVectorIndex(
    out.searchVectorIndex,
    search.vectors,
    search.meta.embedder.dims,
    approximateFrom,
    log,
    // Over a previous build with an index, grow it rather than build it again.
    approximate ? { previous: previous?.index, embedderId: search.meta.embedder.id, identities: search.identities, matched: search.matched } : undefined,
  );
  if (index?.chunkKeys) search.meta.chunk_keys = Array.from(index.chunkKeys);
  if (approximate && search.meta.chunk_records.length >= QUANTIZE_FROM) {
    log('writing the vectors as int8');
    writeQuantizedVectors(out.searchQuantized, search.vectors, search.meta.embedder.dims);
  }
}

/** The record twins with their revisions; the previous build's twins of works that did not change are linked, not rendered again. */
async function writeTwins(
  input: { content: LoadedContent; works: WorkRecord[]; divergences: DivergenceFull[]; history: ChangeHistory },
  out: ArtifactPaths,
  previous: ArtifactPaths,
  log: (line: string) => void,
): Promise<void> {
  const reuse = { previousPublic: previous.public, keys: readTwinKeys(previous.recordTwins) };
  const twins = await writeRecordTwins(input.content, input.works, input.divergences, out.public, reuse, input.history);
  writeJson(out.recordTwins, twinKeysFile(twins.keys));
  const { works } = input;
  if (twins.reused > 0) log(`record twins of ${twins.reused} unchanged works taken from the previous build, ${works.length - twins.reused} written`);
}

/** What changed from one revision of the content to the next, read from git (docs/CHANGES.md); without history, that fact. */
function readHistory(options: BuildOptions, currentRev: string, log: (line: string) => void): ChangeHistory {
  const history = readChangeHistory({
    contentDir: options.contentDir,
    cacheDir: options.cacheDir,
    currentRev,
    ...(options.historyLimit === undefined ? {} : { limit: options.historyLimit }),
    log,
  });
  if (history.history !== 'complete') log(`change history ${history.history}: ${history.reason}`);
  return history;
}

/**
 * The calibration of relevance in effect, and how much this corpus's search trusts the vectors
 * and the feedback (retrieval-choice.ts), written beside the search artifacts and served.
 */
async function writeRelevanceAndChoice(
  content: LoadedContent,
  search: { meta: SearchMeta; chunks: SearchChunk[]; vectors: Float32Array },
  embedder: Embedder,
  where: { out: ArtifactPaths; previous: ArtifactPaths; cacheDir: string },
  log: (line: string) => void,
): Promise<void> {
  // The calibration of relevance in effect: the content's own fit, else the engine's default;
  // served as is so a caller can read what match.relevance and the floors mean.
  const relevance = content.relevance ?? DEFAULT_RELEVANCE_MODEL;
  writeJson(where.out.searchRelevance, relevance);
  writeJson(path.join(where.out.public, RELEVANCE_CALIBRATION_FILE), relevance);
  // How much this corpus's search trusts the vectors and the feedback: probed on its own
  // questions, or the previous build's choice while it holds (same embedder, about the same size).
  const { choice, reused } = await chooseForCorpus(
    { records: search.meta.records, chunks: search.chunks, vectors: search.vectors, embedder: cachedEmbedder(embedder, where.cacheDir) },
    probeKey(embedder.id, JSON.stringify({ relevance, own: content.relevance !== undefined })),
    readRetrievalChoice(where.previous.searchRetrieval),
    log,
    // Where the corpus's own questions sit on the relevance scale, unless the content brought its own fit.
    { model: relevance, ownFit: content.relevance !== undefined },
  );
  if (reused) log(`retrieval settings for this corpus as the previous build chose them: ${choice.note}`);
  writeJson(where.out.searchRetrieval, choice);
  writeJson(path.join(where.out.public, RETRIEVAL_CHOICE_FILE), choice);
}

/** One collator for every comparison: `localeCompare` with options builds one a call, which dominated sorting 250,000 works. */
const ID_ORDER = new Intl.Collator('en', { numeric: true });

function byId(a: { id: string }, b: { id: string }): number {
  return ID_ORDER.compare(a.id, b.id);
}

function byDateThenId(a: DivergenceFull, b: DivergenceFull): number {
  return b.date.localeCompare(a.date) || byId(a, b);
}

/** The build's embedder: the caller's, else EMBEDDINGS_CONFIG's or USE-lite; under `plan`, one that only counts. */
async function chooseEmbedder(options: BuildOptions, log: (line: string) => void) {
  const env = options.env ?? process.env;
  const configured = options.embedder ? undefined : await createConfiguredEmbedder(env, { precision: precisionFromEnv(env) });
  const chosen = options.embedder ?? configured!.embedder;
  const planning = options.plan ? planningEmbedder(chosen) : undefined;
  if (configured?.kind === 'openai-compatible') log(`embedding with ${chosen.id} (${configured.source})`);
  return { embedder: planning ?? chosen, configured, planning };
}

/** What a planned build reports: the search's passages, what the cache lacks, and the price it would be sent at. */
function plannedResult(
  planning: ReturnType<typeof planningEmbedder>,
  configured: Awaited<ReturnType<typeof createConfiguredEmbedder>> | undefined,
  search: { meta: { chunk_records: readonly number[] }; cached: number },
): Omit<BuildResult, 'works' | 'divergences' | 'milliseconds'> {
  const priced = configured?.kind === 'openai-compatible' ? configured.config : undefined;
  const plan: BuildPlan = {
    ...planning.plan,
    embedder: planning.id,
    passages: search.meta.chunk_records.length,
    pricePerMillionTokens: priced ? priced.price_per_million_tokens : null,
    ceilingUsd: priced ? priced.ceiling_usd : null,
  };
  return { chunks: plan.passages, embedded: 0, cachedEmbeddings: search.cached, answersEmbedded: 0, plan };
}

/** The plan in one line: what would be embedded, the most it can cost, and that nothing was sent. */
export function planLine(plan: BuildPlan): string {
  const count = (value: number) => value.toLocaleString('en');
  const head =
    `${count(plan.passages)} passages; ${count(plan.texts)} texts to embed with ${plan.embedder} (the rest from the previous build or the cache)` +
    (plan.texts === 0
      ? ''
      : `: ${count(plan.characters)} characters, at most ${count(plan.maxTokens)} tokens (about ${count(Math.ceil(plan.characters / 4))} at 4 characters a token)`);
  if (plan.pricePerMillionTokens === null) return `${head}; the embedded model runs here and costs nothing. Nothing was sent and the artifacts are unchanged.`;
  const most = (plan.maxTokens * plan.pricePerMillionTokens) / 1_000_000;
  const over = plan.ceilingUsd !== null && most > plan.ceilingUsd;
  return (
    `${head}; at $${plan.pricePerMillionTokens} per million tokens at most $${most.toFixed(4)}` +
    (plan.ceilingUsd === null
      ? ''
      : over
        ? `, which could pass ceiling_usd $${plan.ceilingUsd}: the build would stop there and a rerun would resume from the cache`
        : ` (ceiling_usd $${plan.ceilingUsd})`) +
    '. Nothing was sent and the artifacts are unchanged.'
  );
}

/** The exit code of a build stopped by the embeddings' spend ceiling (ceiling_usd of EMBEDDINGS_CONFIG). */
export const EXIT_EMBEDDING_CEILING = 3;

async function main(): Promise<void> {
  const paths = pathsFromEnv();
  try {
    const approximateFrom = approximateFromEnv(process.env);
    const historyLimit = historyLimitFromEnv(process.env);
    const plan = process.argv.slice(2).includes('--plan');
    const result = await buildArtifacts({
      ...paths,
      ...(approximateFrom === undefined ? {} : { approximateFrom }),
      ...(historyLimit === undefined ? {} : { historyLimit }),
      ...(plan ? { plan } : {}),
      log: (line) => console.log(`[build] ${line}`),
    });
    if (result.plan) console.log(`[build] plan: ${planLine(result.plan)}`);
  } catch (error) {
    if (error instanceof ContentError) {
      console.error(`[build] ${error.message}`);
      // Every problem is listed, which can be long: exit only once stderr has drained.
      await exitWhenFlushed(1);
    }
    if (error instanceof EmbeddingsConfigError) {
      console.error(`[build] ${error.message}`);
      await exitWhenFlushed(2);
    }
    if (error instanceof EmbeddingCeilingError) {
      // What was embedded before the refusal is in the embedding cache: a rerun does not pay for it again.
      console.error(`[build] stopped before overspending: ${error.message}`);
      await exitWhenFlushed(EXIT_EMBEDDING_CEILING);
    }
    throw error;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  void main();
}
