/** The build's search artifacts: one search record per work and Atlas record, their passages, embeddings (cached) and the full-text index. */
import { bodyText, type DivergenceFull, type WorkRecord } from '../../core/records.ts';
import { passageIdentity, type PreviousSearch } from './previous-search.ts';
import { matchPassages } from './passage-match.ts';
import { buildPackedFullText, carryOver, FieldBuilder, growField, keepsOrder } from '../../core/search/bm25-build.ts';
import type { PackedField, PackedFullText } from '../../core/search/bm25.ts';
import { createTermTokenizer } from '../../core/search/tokenizer.ts';
import { createPassagesWriter, passagesFromBytes, type PassageText } from '../../core/search/passages.ts';
import type { SearchChunk, SearchMeta, SearchRecord } from '../../core/search/types.ts';
import type { LoadedContent } from '../../content-files/load-content.ts';
import { createUseLiteEmbedder, precisionFromEnv, type Embedder } from '../../providers/embedder.ts';
import { createEmbedProgress, terminalRewrite } from './embed-progress.ts';
import { createEmbeddingCache } from './embedding-cache.ts';

export interface SearchBuild {
  meta: SearchMeta;
  /** The passages as indexed, in chunk order. */
  chunks: SearchChunk[];
  vectors: Float32Array;
  fullText: PackedFullText;
  /** The passages' text as indexed (passages.ts's file), in chunk order. */
  passages: Uint8Array;
  /** Each chunk's identity across builds (its record and text), for growing the vector index. */
  identities: string[];
  /** Each chunk's passage in the previous build (-1: none), when there was one (passage-match.ts). */
  matched?: Int32Array | undefined;
  embedded: number;
  cached: number;
}

export async function buildSearch(
  content: LoadedContent,
  works: readonly WorkRecord[],
  divergences: readonly DivergenceFull[],
  options: { cacheDir: string; embedder?: Embedder; now?: () => Date; previous?: PreviousSearch | undefined },
  log: (line: string) => void,
): Promise<SearchBuild> {
  const { records, chunks, passages } = searchPassages(content, works, divergences);
  // int8 where the CPU has AVX-512 VNNI unless EMBED_PRECISION says otherwise (ADR 0021).
  const embedder = options.embedder ?? (await createUseLiteEmbedder({ precision: precisionFromEnv(process.env) }));
  const identities = chunks.map((chunk) => passageIdentity(records[chunk.record]!.id, chunk.text));
  // Each passage the previous build had (same record, same text), taken once: its vector and its index entry are carried over.
  const previousChunk = options.previous ? matchPassages(identities, options.previous.identities) : undefined;
  const vectors = await passageVectors(chunks, embedder, options, previousChunk, log);
  log(`indexing ${chunks.length} passages for full-text search`);
  const { fullText, carried } = await indexFullText(records, chunks, options.previous, previousChunk, log);
  if (carried > 0) log(`${carried} of them carried over from the previous build's full-text index, ${chunks.length - carried} tokenised`);
  return {
    meta: {
      embedder: { id: embedder.id, dims: embedder.dims },
      records,
      chunk_records: chunks.map((chunk) => chunk.record),
      built_at: (options.now ?? (() => new Date()))().toISOString(),
    },
    chunks,
    vectors: vectors.all,
    fullText,
    passages,
    identities,
    matched: previousChunk,
    embedded: vectors.embedded,
    cached: vectors.cached,
  };
}

/**
 * The search's records (works, then Atlas records) and their passages as indexed: a work's
 * passages each led by its title, an Atlas record's question and its question with its tensions.
 * The passages are written to the passages file as they are made and read back from it when
 * asked (`chunks[n].text`), so the build holds no copy of the corpus's text as strings (issue 44).
 */
function searchPassages(
  content: LoadedContent,
  works: readonly WorkRecord[],
  divergences: readonly DivergenceFull[],
): { records: SearchRecord[]; chunks: SearchChunk[]; passages: Uint8Array } {
  const entries = new Map([...content.works, ...content.proposals].map((entry) => [entry.data.id, entry]));
  // As the content memo kept them or derived now (records.ts's bodyText); read from their bytes at each ask (lazy-text.ts).
  const passagesOf = (id: string): readonly string[] => {
    const entry = entries.get(id);
    return entry ? (entry.bodyText ?? bodyText(entry.body)).passages : [];
  };
  const records: SearchRecord[] = [];
  const chunkRecords: number[] = [];
  let chars = 0;
  for (const work of works) {
    const index = records.push(workRecord(work)) - 1;
    for (const passage of passagesOf(work.id)) {
      chunkRecords.push(index);
      chars += work.title.length + 2 + passage.length;
    }
  }
  const atlasTexts: string[] = [];
  for (const record of divergences) {
    const index = records.push(atlasRecord(record)) - 1;
    const topics = record.tensions.map((tension) => `${tension.topic}: ${tension.claim_a} / ${tension.claim_b}`);
    for (const text of topics.length > 0 ? [record.question, `${record.question} ${topics.join(' ')}`] : [record.question]) {
      chunkRecords.push(index);
      atlasTexts.push(text);
      chars += text.length;
    }
  }
  const writer = createPassagesWriter(chunkRecords.length, chars);
  for (const work of works) for (const passage of passagesOf(work.id)) writer.add(`${work.title}. ${passage}`);
  for (const text of atlasTexts) writer.add(text);
  const passages = writer.finish();
  const text = passagesFromBytes(passages);
  return { records, chunks: chunkRecords.map((record, at) => new WrittenPassage(record, text, at)), passages };
}

/** A passage as the passages file holds it: its text read from the file's bytes at each ask. */
class WrittenPassage implements SearchChunk {
  constructor(
    readonly record: number,
    private readonly file: PassageText,
    private readonly at: number,
  ) {}

  get text(): string {
    return this.file.text(this.at);
  }
}

function workRecord(work: WorkRecord): SearchRecord {
  const { id, title, ring, type, layer, evidence, contributors, date, excerpt, lineage } = work;
  return { id, kind: 'work', title, ring, type, layer, evidence, contributors, date, excerpt, lineage };
}

function atlasRecord(record: DivergenceFull): SearchRecord {
  const { id, title, contributors, date, excerpt } = record;
  return {
    id,
    kind: 'divergence',
    title,
    ring: 'core',
    type: 'divergence',
    layer: 'divergence',
    evidence: 'empirical',
    contributors,
    date,
    excerpt,
    lineage: [],
  };
}

/**
 * Every passage's vector: the previous build's where it had the passage and the same embedder,
 * else the embedding cache's, else embedded now.
 */
async function passageVectors(
  chunks: readonly SearchChunk[],
  embedder: Embedder,
  options: { cacheDir: string; previous?: PreviousSearch | undefined },
  previousChunk: Int32Array | undefined,
  log: (line: string) => void,
): Promise<{ all: Float32Array; embedded: number; cached: number }> {
  const dims = embedder.dims;
  const all = new Float32Array(chunks.length * dims);
  let carried: Float32Array | undefined;
  const previous = options.previous;
  if (previous && previousChunk && previous.embedderId === embedder.id && previous.dims === dims) {
    try {
      carried = previous.vectors();
    } catch (error) {
      log(`the previous build's vectors cannot be reused (${(error as Error).message}): reading the embedding cache`);
    }
  }
  const rest: number[] = [];
  chunks.forEach((_, chunk) => {
    const from = carried ? previousChunk![chunk]! : -1;
    if (from >= 0) all.set(carried!.subarray(from * dims, (from + 1) * dims), chunk * dims);
    else rest.push(chunk);
  });
  const cache = createEmbeddingCache(options.cacheDir, embedder);
  const result = await cache.embedAll(
    { length: rest.length, at: (index) => chunks[rest[index]!]?.text },
    createEmbedProgress({ log, rewrite: terminalRewrite(process.stdout) }),
  );
  result.vectors.forEach((vector, at) => all.set(vector, rest[at]! * dims));
  return { all, embedded: result.embedded, cached: chunks.length - result.embedded };
}

/**
 * The full-text index. Over a previous index with the same tokeniser, the passages it had are
 * carried over: its postings renumbered and merged with the new passages' (growField), or, when
 * the passages it had changed order, a passage at a time (carryOver). Else every passage is tokenised.
 */
async function indexFullText(
  records: readonly SearchRecord[],
  chunks: readonly SearchChunk[],
  previous: PreviousSearch | undefined,
  previousChunk: Int32Array | undefined,
  log: (line: string) => void,
): Promise<{ fullText: PackedFullText; carried: number }> {
  const flags = { stemming: true, stopWords: true };
  const tokenize = await createTermTokenizer(flags);
  const old = readPrevious(previous, log);
  const reusable = old && previousChunk && old.stemming === flags.stemming && old.stopWords === flags.stopWords ? old : undefined;
  const chunkRecords = Uint32Array.from(chunks, (chunk) => chunk.record);
  const recordCount = records.length;
  if (reusable) {
    const grown = growText(reusable, previousChunk!, chunks, tokenize);
    if (grown) return { fullText: { ...flags, recordCount, chunkRecords, text: grown.text }, carried: grown.carried };
  }
  const carry = reusable ? carryOver(reusable) : undefined;
  let carried = 0;
  const fullText = buildPackedFullText({
    recordCount,
    chunkRecords,
    passage(chunk, text) {
      const from = previousChunk?.[chunk] ?? -1;
      if (carry && from >= 0) {
        carried++;
        carry(from, text);
      } else text.addTokens(tokenize(chunks[chunk]!.text));
    },
    ...flags,
  });
  return { fullText, carried };
}

/** The previous build's full-text index, or undefined (said) where it cannot be read: one in an older format is not carried over. */
function readPrevious(previous: PreviousSearch | undefined, log: (line: string) => void): PackedFullText | undefined {
  try {
    return previous?.fullText();
  } catch (error) {
    log(`the previous build's full-text index cannot be reused (${(error as Error).message}): tokenising every passage`);
    return undefined;
  }
}

/** The previous index's passage field grown by the passages it did not have (growField), or undefined when it cannot be. */
function growText(
  previous: PackedFullText,
  previousChunk: Int32Array,
  chunks: readonly SearchChunk[],
  tokenize: (text: string) => string[],
): { text: PackedField; carried: number } | undefined {
  const newDocOf = new Int32Array(previous.text.lengths.length).fill(-1);
  previousChunk.forEach((from, chunk) => {
    if (from >= 0) newDocOf[from] = chunk;
  });
  // Checked before the added passages are tokenised: the carry-over would tokenise them again.
  if (!keepsOrder(newDocOf)) return undefined;
  const addedDocs: number[] = [];
  const added = new FieldBuilder();
  previousChunk.forEach((from, chunk) => {
    if (from >= 0) return;
    addedDocs.push(chunk);
    added.addTokens(tokenize(chunks[chunk]!.text));
  });
  const text = growField(previous.text, newDocOf, chunks.length, added.finish(), Uint32Array.from(addedDocs));
  return text && { text, carried: chunks.length - addedDocs.length };
}
