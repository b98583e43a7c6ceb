/** Loads the build's artifacts into memory: the read model every route serves from. */
import { closeSync, existsSync, fstatSync, openSync, readFileSync, statSync } from 'node:fs';
import { readExactly } from '../content-files/read-large.ts';
import path from 'node:path';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createDivergenceSchema } from '../schemas/content.ts';
import { artifactPaths } from '../core/artifacts.ts';
import { buildManifest } from '../core/build-manifest.ts';
import { deriveDivergence, type DivergenceFull, type WorkRecord } from '../core/records.ts';
import type { PersistedRecord } from '../storage/store.ts';
import { loadFullTextIndex } from '../core/search/fulltext.ts';
import { kernelBytes } from '../core/search/passage-kernel.ts';
import { createSearchIndex, DEFAULT_TUNING, type SearchTuning } from '../core/search/search-index.ts';
import { approximatePathApplies } from '../core/search/chunk-scan.ts';
import { quantizedCodesAt, quantizedFileBytes, type VectorSource } from '../core/search/vector-scan.ts';
import { DEFAULT_RELEVANCE_MODEL, relevanceFor, RelevanceModelSchema, withFloors, type RelevanceModel } from '../core/search/relevance.ts';
import type { SearchMeta, SearchRecord } from '../core/search/types.ts';
import { engineDefaultChoice, tuningOf } from '../core/search/retrieval-choice.ts';
import { embeddingModel } from '../core/search/embedding-model.ts';
import { readRetrievalChoice } from './retrieval-choice-file.ts';
import type { Embedder } from '../providers/embedder.ts';
import { openVectorIndexWorker } from '../providers/vector-index-worker.ts';

import type { Corpus } from '../core/corpus.ts';
export type { Corpus };

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

export class ArtifactsMissingError extends Error {}

/** The artifacts' passages were embedded by another model than the one that would embed the questions. */
export class ArtifactsEmbedderMismatchError extends Error {}

export interface LoadOptions {
  /** A calibration of relevance to use instead of the build's (the calibration command, benchmarks). */
  relevance?: RelevanceModel;
  /** Relevance floors set by the deployment's configuration, over the calibration's own. */
  relevanceFloors?: Partial<RelevanceModel['floors']>;
  /** Told if the approximate index's worker thread fails while serving (its searches take the exact scan until a new thread is up). */
  onSearchFailure?: (error: Error) => void;
  /** Told when a new thread serves the approximate index again after such a failure. */
  onSearchRecovery?: () => void;
  /** Questions the search scores at once, the others waiting their turn (SEARCH_CONCURRENCY; core/search/admission.ts). */
  searchSlots?: number;
}

export async function loadCorpus(artifactsDir: string, embedder: Embedder, tuning?: Partial<SearchTuning>, options: LoadOptions = {}): Promise<Corpus> {
  const paths = artifactPaths(artifactsDir);
  if (!existsSync(paths.manifest)) {
    throw new ArtifactsMissingError(`no build artifacts in ${artifactsDir}: run \`npm run build\` first`);
  }
  const works = readJson<WorkRecord[]>(paths.works);
  const workById = new Map(works.map((work) => [work.id, work]));
  const divergences = readJson<DivergenceFull[]>(paths.divergences);
  const meta = readJson<SearchMeta>(paths.searchMeta);
  shareWithWorks(works, meta.records, workById);
  // Checked before the vectors are read: another model's cosines mean nothing to these questions.
  if (embeddingModel(meta.embedder.id) !== embeddingModel(embedder.id) || meta.embedder.dims !== embedder.dims) {
    throw new ArtifactsEmbedderMismatchError(
      `the artifacts in ${artifactsDir} were built with the embedder ${meta.embedder.id} (${meta.embedder.dims} dimensions), ` +
        `but questions would be embedded with ${embedder.id} (${embedder.dims} dimensions): ` +
        'rebuild (`npm run build`) with the same EMBEDDINGS_CONFIG as the server, or set it to the model the artifacts were built with',
    );
  }
  if (statSync(paths.searchMeta).size > LARGE_META) collectGarbage();
  const vectors = fileVectorSource(paths.searchVectors, paths.searchQuantized, meta);
  // Memory-mapped in a worker thread of its own (its file read through into the page cache first,
  // while this thread reads the words' index), not read into this process.
  const opening =
    existsSync(paths.searchVectorIndex) && approximatePathApplies(meta.chunk_records.length, tuning?.approximateFrom ?? DEFAULT_TUNING.approximateFrom)
      ? openVectorIndexWorker(paths.searchVectorIndex, meta.embedder.dims, undefined, {
          ...(options.onSearchFailure ? { onFailure: options.onSearchFailure } : {}),
          ...(options.onSearchRecovery ? { onRecovery: options.onSearchRecovery } : {}),
        })
      : undefined;
  opening?.catch(() => undefined); // awaited below; this only keeps its failure from being reported before then
  // The passages' text (passages.bin) is not read here: the index's forward index gives their words.
  const fullText = await (async () => loadFullTextIndex(readFullText(paths.searchFullText)))().catch(async (error: unknown) => {
    // The index's thread is not left running behind a load that failed.
    await opening?.then(
      (worker) => worker.close(),
      () => undefined,
    );
    throw error;
  });
  const approximate = await opening;
  // Artifacts built before calibrated relevance carry none: the engine's default applies.
  const fitted =
    options.relevance ?? (existsSync(paths.searchRelevance) ? RelevanceModelSchema.parse(readJson(paths.searchRelevance)) : DEFAULT_RELEVANCE_MODEL);
  // The build's choice for this corpus (retrieval-choice.ts) under what the caller sets; built before choices: the engine's default.
  const built = readRetrievalChoice(paths.searchRetrieval) ?? engineDefaultChoice(meta.embedder.id, 'the build made no choice for this corpus', DEFAULT_TUNING);
  // An operator's own relevance floor (RELEVANCE_FLOOR) decides alone: the build's question gate steps aside.
  const retrieval = options.relevanceFloors?.relevant === undefined ? built : { ...built, question_gate: null };
  const relevance = withFloors(relevanceFor(fitted, embedder.id).model, options.relevanceFloors ?? {});
  const searchTuning = { ...tuningOf(retrieval), ...tuning };
  return {
    site: readJson(paths.site),
    registry: readJson(paths.models),
    works,
    workById,
    divergences,
    divergenceById: new Map(divergences.map((record) => [record.id, record])),
    tensions: readJson(paths.tensions),
    // Artifacts built before dispositions existed have none.
    dispositions: existsSync(paths.dispositions) ? readJson(paths.dispositions) : {},
    // Artifacts built before merges existed have none.
    tensionMerges: new Map(Object.entries(existsSync(paths.tensionMerges) ? readJson<Record<string, string>>(paths.tensionMerges) : {})),
    graph: readJson(paths.concepts),
    manifest: readJson(paths.manifest),
    pages: readJson(paths.pages),
    audio: readJson(paths.audio),
    claims: readJson(paths.claims),
    search: createSearchIndex({
      meta,
      vectors,
      fullText,
      embedder,
      relevance,
      tuning: searchTuning,
      ...(approximate ? { approximate } : {}),
      ...(options.searchSlots !== undefined ? { searchSlots: options.searchSlots } : {}),
    }),
    retrieval,
    publicDir: paths.public,
    builtAt: meta.built_at,
    textOf: createTextReader(paths.public),
  };
}

/**
 * A work's search record repeats its title, excerpt, date, contributors and lineage, read twice
 * (works.json and meta.json) into two copies of each: the record takes the work's. And the short
 * values every record repeats (ring, layer, type, evidence, origin, dates, contributors) are kept
 * once, not once a record. At 250,000 works (a million passages) the server's memory after
 * loading fell by 177 MB, 2,469 to 2,292 (bench/README.md, "Half the memory at a million passages").
 */
function shareWithWorks(works: WorkRecord[], records: SearchRecord[], workById: ReadonlyMap<string, WorkRecord>): void {
  const kept = new Map<string, string>();
  const once = <T extends string>(value: T): T => {
    const known = kept.get(value);
    if (known !== undefined) return known as T;
    kept.set(value, value);
    return value;
  };
  for (const work of works) {
    work.ring = once(work.ring);
    work.layer = once(work.layer);
    work.type = once(work.type);
    work.evidence = once(work.evidence);
    work.origin = once(work.origin);
    work.date = once(work.date);
    work.contributors = work.contributors.map(once);
  }
  for (const record of records) {
    const work = workById.get(record.id);
    if (work && sameStrings(record.contributors, work.contributors)) record.contributors = work.contributors;
    else record.contributors = record.contributors.map(once);
    if (work && sameStrings(record.lineage, work.lineage)) record.lineage = work.lineage;
    if (work && record.title === work.title) record.title = work.title;
    if (work && record.excerpt === work.excerpt) record.excerpt = work.excerpt;
    record.ring = once(record.ring);
    record.layer = once(record.layer);
    record.type = once(record.type);
    record.evidence = once(record.evidence);
    record.date = once(record.date);
  }
}

function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value, at) => value === b[at]);
}

/** From this size of meta.json on, its text is collected before the large arrays are read (collectGarbage). */
const LARGE_META = 32 * 1024 * 1024;

/**
 * A full collection, once, after the search metadata is parsed: its text (145 MB at a million
 * passages) is garbage the collector has no reason to look at before the vectors (2 GB) and the
 * full-text index are read into WebAssembly memories, which it does not count, so it would sit
 * beside them: the server's peak memory at 1M passages was 4,309 MB with it, 4,055 MB without
 * (bench/README.md, session 15). `gc` is exposed to a new context only, as jest's leak detector
 * does; the flag changes nothing else.
 */
function collectGarbage(): void {
  v8.setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/**
 * The vector file, read straight into the scanner's memory in blocks (read-large.ts), or a block
 * at a time to be quantized; or, where the build wrote them (from QUANTIZE_FROM passages on) and
 * the scanner holds int8, the quantized rows read as they are (vector-scan.ts).
 */
function fileVectorSource(file: string, quantizedFile: string, meta: SearchMeta): VectorSource {
  const bytes = statSync(file).size;
  if (bytes % 4 !== 0) throw new Error(`${file} is not whole float32 values: rebuild`);
  const count = meta.chunk_records.length;
  const quantized = existsSync(quantizedFile) && statSync(quantizedFile).size === quantizedFileBytes(count, meta.embedder.dims);
  const readFrom = (from: string, target: Uint8Array, fromByte: number) => {
    const fd = openSync(from, 'r');
    try {
      readExactly(fd, target, fromByte, `${from} ended early: rebuild`);
    } finally {
      closeSync(fd);
    }
  };
  return {
    floats: bytes / 4,
    readInto: (target, fromByte = 0) => readFrom(file, target, fromByte),
    ...(quantized
      ? {
          readQuantized(codes: Uint8Array, scales: Uint8Array) {
            readFrom(quantizedFile, scales, 0);
            readFrom(quantizedFile, codes, quantizedCodesAt(count));
          },
        }
      : {}),
  };
}

/**
 * The full-text index file, read straight into the memory its WebAssembly kernel scores in
 * (passage-kernel.ts: its postings are then not copied), or into a buffer where none runs.
 */
function readFullText(file: string): Uint8Array {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const bytes = kernelBytes(size) ?? Buffer.allocUnsafe(size);
    readExactly(fd, bytes, 0, `${file} ended early: rebuild`);
    return bytes;
  } finally {
    closeSync(fd);
  }
}

const TEXT_CACHE = 512;

/** The bytes of a record's markdown twin (`/records/<id>.md`, or `<id>.origin.md` for an import's origin copy) as served. */
export function readRecordTwin(corpus: Pick<Corpus, 'publicDir'>, id: string, suffix: '.md' | '.origin.md' = '.md'): Buffer | undefined {
  const dir = path.join(corpus.publicDir, 'records');
  const file = path.join(dir, `${id}${suffix}`);
  return path.dirname(file) === dir && existsSync(file) ? readFileSync(file) : undefined;
}

function createTextReader(publicDir: string): (id: string) => string | undefined {
  const cache = new Map<string, string | undefined>();
  return (id) => {
    if (cache.has(id)) return cache.get(id);
    const file = path.join(publicDir, 'records', `${id}.json`);
    // Ids come from the index, never from a request; the check keeps it that way.
    const text = path.dirname(file) === path.join(publicDir, 'records') && existsSync(file) ? (readJson<{ text?: string }>(file).text ?? undefined) : undefined;
    if (cache.size >= TEXT_CACHE) cache.delete(cache.keys().next().value as string);
    cache.set(id, text);
    return text;
  };
}

/**
 * Adds Atlas records persisted at run time (live councils) to the read model: served by
 * /api/divergences and counted by the manifest at once. Records already present are skipped.
 */
export function applyPersistedRecords(corpus: Corpus, records: readonly PersistedRecord[], now: Date): number {
  const schema = createDivergenceSchema(corpus.site.id_prefix);
  let added = 0;
  for (const record of records) {
    if (corpus.divergenceById.has(record.id)) continue;
    const parsed = schema.safeParse(record.frontmatter);
    if (!parsed.success) continue;
    const full = deriveDivergence(parsed.data, record.body, corpus.registry);
    corpus.divergences.unshift(full);
    corpus.divergenceById.set(full.id, full);
    corpus.tensions.unshift(...full.tensions);
    added++;
  }
  if (added > 0) {
    corpus.divergences.sort((a, b) => b.date.localeCompare(a.date) || a.id.localeCompare(b.id, 'en', { numeric: true }));
    corpus.manifest = buildManifest({
      works: corpus.works,
      divergences: corpus.divergences,
      graph: corpus.graph,
      audioTracks: corpus.audio.tracks.length,
      registry: corpus.registry,
      seedFiles: [],
      corpusSeed: corpus.manifest.hashes.corpus_seed,
      corpusRev: corpus.manifest.published_releases.corpus_rev,
      generatedAt: now.toISOString(),
      ...(corpus.manifest.certification_calibration ? { calibration: corpus.manifest.certification_calibration } : {}),
      ...(corpus.manifest.embedder ? { embedder: corpus.manifest.embedder } : {}),
    });
  }
  return added;
}
