/**
 * The full-text index behind hybrid retrieval, as the build writes it (data/search/fulltext.bin,
 * see encodeFullText in bm25.ts) and the API loads it. Terms come from Orama's English
 * tokenizer; scoring is BM25 in bm25.ts (see there for why Orama's search is not used).
 */
import { buildBm25Data, decodeFullText, isFullTextData, loadBm25Index, type FullTextData, type FullTextIndex } from './bm25.ts';
import type { SearchChunk, SearchRecord } from './types.ts';

export { encodeFullText } from './bm25.ts';
export type { FullTextData, FullTextIndex } from './bm25.ts';

/**
 * Builds the serialisable index. The build prefixes each work passage with "<title>. " (for
 * the embedder); BM25 keeps that prefix, which scored better on ArguAna than indexing titles
 * as a field of their own (bench/README.md). `titleInPassages: false` strips it, leaving the
 * titles unindexed (an experiment, `eval:beir --experiments`).
 */
export async function buildFullTextIndex(
  records: readonly SearchRecord[],
  chunks: readonly SearchChunk[],
  options: { stemming?: boolean; stopWords?: boolean; titleInPassages?: boolean } = {},
): Promise<FullTextData> {
  const { titleInPassages = true, ...tokenizer } = options;
  return buildBm25Data({
    recordCount: records.length,
    chunks: chunks.map((chunk) => {
      const prefix = `${records[chunk.record]!.title}. `;
      const strip = !titleInPassages && chunk.text.startsWith(prefix);
      return { record: chunk.record, text: strip ? chunk.text.slice(prefix.length) : chunk.text };
    }),
    ...tokenizer,
  });
}

/** In-memory data (experiments) or the artifact file's bytes (the server). */
export async function loadFullTextIndex(source: FullTextData | Uint8Array): Promise<FullTextIndex> {
  if (source instanceof Uint8Array) return loadBm25Index(decodeFullText(source));
  if (!isFullTextData(source)) throw new Error('the full-text index is in an unknown format: rebuild with `npm run build:data`');
  return loadBm25Index(source);
}
