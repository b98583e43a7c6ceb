/** The build's search artifacts: one search record per work and Atlas record, their passages, embeddings (cached) and the full-text index. */
import { plainText } from '../../core/excerpt.ts';
import type { DivergenceFull, WorkRecord } from '../../core/records.ts';
import { byIdentity, passageIdentity, type PreviousSearch } from './previous-search.ts';
import { buildPackedFullText, carryOver } from '../../core/search/bm25-build.ts';
import type { PackedFullText } from '../../core/search/bm25.ts';
import { createTermTokenizer } from '../../core/search/tokenizer.ts';
import { encodePassages } from '../../core/search/passages.ts';
import type { SearchChunk, SearchMeta, SearchRecord } from '../../core/search/types.ts';
import type { LoadedContent } from '../../content-files/load-content.ts';
import { createUseLiteEmbedder, precisionFromEnv, type Embedder } from '../../providers/embedder.ts';
import { chunkText } from './chunk.ts';
import { createEmbedProgress, terminalRewrite } from './embed-progress.ts';
import { createEmbeddingCache } from './embedding-cache.ts';

export interface SearchBuild {
  meta: SearchMeta;
  vectors: Float32Array;
  fullText: PackedFullText;
  /** The passages' text as indexed (passages.ts's file), in chunk order. */
  passages: Uint8Array;
  /** Each chunk's identity across builds (its record and text), for growing the vector index. */
  identities: string[];
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
  const bodies = new Map([...content.works, ...content.proposals].map((entry) => [entry.data.id, entry.body]));
  const records: SearchRecord[] = [];
  const chunks: SearchChunk[] = [];
  for (const work of works) {
    const index =
      records.push({
        id: work.id,
        kind: 'work',
        title: work.title,
        ring: work.ring,
        type: work.type,
        layer: work.layer,
        evidence: work.evidence,
        contributors: work.contributors,
        date: work.date,
        excerpt: work.excerpt,
        lineage: work.lineage,
      }) - 1;
    for (const passage of chunkText(plainText(bodies.get(work.id) ?? ''))) {
      chunks.push({ record: index, text: `${work.title}. ${passage}` });
    }
  }
  for (const record of divergences) {
    const index =
      records.push({
        id: record.id,
        kind: 'divergence',
        title: record.title,
        ring: 'core',
        type: 'divergence',
        layer: 'divergence',
        evidence: 'empirical',
        contributors: record.contributors,
        date: record.date,
        excerpt: record.excerpt,
        lineage: [],
      }) - 1;
    chunks.push({ record: index, text: record.question });
    const topics = record.tensions.map((tension) => `${tension.topic}: ${tension.claim_a} / ${tension.claim_b}`);
    if (topics.length > 0) chunks.push({ record: index, text: `${record.question} ${topics.join(' ')}` });
  }

  // int8 where the CPU has AVX-512 VNNI unless EMBED_PRECISION says otherwise (ADR 0021).
  const embedder = options.embedder ?? (await createUseLiteEmbedder({ precision: precisionFromEnv(process.env) }));
  const cache = createEmbeddingCache(options.cacheDir, embedder);
  const result = await cache.embedAll(
    chunks.map((chunk) => chunk.text),
    createEmbedProgress({ log, rewrite: terminalRewrite(process.stdout) }),
  );
  const vectors = new Float32Array(chunks.length * embedder.dims);
  result.vectors.forEach((vector, index) => vectors.set(vector, index * embedder.dims));
  log(`indexing ${chunks.length} passages for full-text search`);
  const identities = chunks.map((chunk) => passageIdentity(records[chunk.record]!.id, chunk.text));
  const { fullText, carried } = await indexFullText(records, chunks, identities, options.previous);
  if (carried > 0) log(`${carried} of them carried over from the previous build's full-text index, ${chunks.length - carried} tokenised`);
  return {
    meta: {
      embedder: { id: embedder.id, dims: embedder.dims },
      records,
      chunk_records: chunks.map((chunk) => chunk.record),
      built_at: (options.now ?? (() => new Date()))().toISOString(),
    },
    vectors,
    fullText,
    passages: encodePassages(chunks.map((chunk) => chunk.text)),
    identities,
    embedded: result.embedded,
    cached: result.cached,
  };
}

/** The full-text index, a passage at a time: carried over from the previous build's index where it had the passage, else tokenised. */
async function indexFullText(
  records: readonly SearchRecord[],
  chunks: readonly SearchChunk[],
  identities: readonly string[],
  previous: PreviousSearch | undefined,
): Promise<{ fullText: PackedFullText; carried: number }> {
  const flags = { stemming: true, stopWords: true };
  const tokenize = await createTermTokenizer(flags);
  const old = previous?.fullText();
  const carry = old && old.stemming === flags.stemming && old.stopWords === flags.stopWords ? carryOver(old) : undefined;
  const free = carry ? byIdentity(previous!.identities) : new Map<string, number[]>();
  let carried = 0;
  const fullText = buildPackedFullText({
    titles: records.map((record) => record.title),
    chunkRecords: Uint32Array.from(chunks, (chunk) => chunk.record),
    passage(chunk, text) {
      const from = free.get(identities[chunk]!)?.shift();
      if (carry && from !== undefined) {
        carried++;
        carry(from, text);
      } else text.addTokens(tokenize(chunks[chunk]!.text));
    },
    tokenize,
    ...flags,
  });
  return { fullText, carried };
}
