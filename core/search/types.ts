import type { Evidence, Layer, Ring } from '../../schemas/vocab.ts';

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
  relevanceScore: number;
  similarity: number;
  lexical: number;
}
