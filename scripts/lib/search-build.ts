/** The build's search artifacts: one search record per work and Atlas record, their passages, embeddings (cached) and the full-text index. */
import { plainText } from '../../core/excerpt.ts';
import type { DivergenceFull, WorkRecord } from '../../core/records.ts';
import { buildFullTextIndex, type FullTextData } from '../../core/search/fulltext.ts';
import { passageIdentity } from './vector-index-build.ts';
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
  fullText: FullTextData;
  /** The passages' text as indexed (passages.ts's file), in chunk order. */
  passages: Uint8Array;
  /** Each chunk's identity across builds (its record and text), for growing the vector index. */
  identities(): string[];
  embedded: number;
  cached: number;
}

export async function buildSearch(
  content: LoadedContent,
  works: readonly WorkRecord[],
  divergences: readonly DivergenceFull[],
  options: { cacheDir: string; embedder?: Embedder; now?: () => Date },
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
  const fullText = await buildFullTextIndex(records, chunks);
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
    identities: () => chunks.map((chunk) => passageIdentity(records[chunk.record]!.id, chunk.text)),
    embedded: result.embedded,
    cached: result.cached,
  };
}
