import type { Evidence, Layer, Ring, Signals } from '../../schemas/vocab.ts';

/** What retrieval knows about a record; works and Atlas records share one pool. */
export interface SearchRecord {
  id: string;
  kind: 'work' | 'divergence';
  title: string;
  ring: Ring;
  type: string;
  layer: Layer;
  evidence: Evidence;
  contributors: string[];
  date: string;
  excerpt: string;
  lineage: string[];
}

export interface SearchChunk {
  record: number;
  text: string;
}

/** data/search/meta.json */
export interface SearchMeta {
  embedder: { id: string; dims: number };
  records: SearchRecord[];
  /** Record index of each chunk, in vector order. */
  chunk_records: number[];
  /** Each chunk's key in the approximate index (vectors.usearch), when an incremental build grew it; absent, a chunk's key is its number. */
  chunk_keys?: number[];
  built_at: string;
}

export interface SearchFilters {
  layers?: readonly Layer[];
  rings?: readonly Ring[];
  /** Evidence values allowed (already expanded from a threshold). */
  evidence?: readonly Evidence[];
  excludeIds?: ReadonlySet<string>;
}

export interface ScoredRecord {
  record: SearchRecord;
  /** The ranking score: cosine and BM25 over the question's best BM25, fused. */
  relevanceScore: number;
  /** The question's own cosine to the record's best passage. */
  similarity: number;
  /** BM25 over the question's best BM25 (relative). */
  lexical: number;
  /** BM25 over what the question can score at most (absolute; relevance.ts). */
  coverage: number;
  /** Calibrated relevance from similarity and coverage (relevance.ts), the same scale for every question. */
  calibrated: number;
  /** Which signals made it relevant (relevance.ts). */
  signals: Signals;
}
