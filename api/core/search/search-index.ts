/**
 * Hybrid retrieval over works and Atlas records: a flat Float32 cosine scan over chunk
 * vectors plus Orama BM25, fused per record, filtered before ranking, then re-ranked
 * for diversity of voices. Pure given its inputs (vectors, index, query embedder).
 */
import type { AnyOrama } from '@orama/orama';
import type { Embedder } from '../../providers/embedder.ts';
import { fullTextScores } from './orama-index.ts';
import type { ScoredRecord, SearchFilters, SearchMeta, SearchRecord } from './types.ts';

export interface SearchOptions {
  filters?: SearchFilters;
  limit?: number;
  /** Overrides the tuning's similarity floor for this call (glyphs widen or narrow it). */
  similarityFloor?: number;
}

export interface SearchTuning {
  /** Weight of cosine similarity in the fused score; the rest is normalised BM25. */
  vectorWeight: number;
  /** Records whose cosine similarity is below this are off-topic unless lexically strong. */
  similarityFloor: number;
  /** Below the floor, a record still passes with this much cosine and a strong word match. */
  assistedFloor: number;
  /** Normalised BM25 that counts as a strong word match. */
  lexicalFloor: number;
  /** Multiplier applied per already-chosen record sharing the first contributor. */
  diversityPenalty: number;
  candidates: number;
}

export const DEFAULT_TUNING: SearchTuning = {
  vectorWeight: 0.6,
  similarityFloor: 0.3,
  assistedFloor: 0.22,
  lexicalFloor: 0.5,
  diversityPenalty: 0.85,
  candidates: 100,
};

export interface SearchIndex {
  readonly records: readonly SearchRecord[];
  readonly chunkCount: number;
  readonly embedder: Embedder;
  byId(id: string): SearchRecord | undefined;
  search(query: string, options?: SearchOptions): Promise<ScoredRecord[]>;
  /** Cosine scan alone, used by the Atlas search endpoint. */
  similar(query: string, predicate: (record: SearchRecord) => boolean, k: number): Promise<{ record: SearchRecord; score: number }[]>;
}

export interface SearchIndexInput {
  meta: SearchMeta;
  vectors: Float32Array;
  fullText: AnyOrama;
  embedder: Embedder;
  tuning?: Partial<SearchTuning>;
}

export function createSearchIndex(input: SearchIndexInput): SearchIndex {
  const { meta, vectors, fullText, embedder } = input;
  const tuning = { ...DEFAULT_TUNING, ...input.tuning };
  const dims = meta.embedder.dims;
  const chunkRecords = Uint32Array.from(meta.chunk_records);
  const records = meta.records;
  const indexById = new Map(records.map((record, index) => [record.id, index]));
  if (vectors.length !== chunkRecords.length * dims) {
    throw new Error(`search vectors hold ${vectors.length / dims} chunks, meta lists ${chunkRecords.length}`);
  }
  if (embedder.id !== meta.embedder.id) {
    throw new Error(`index was embedded with ${meta.embedder.id}, the query embedder is ${embedder.id}: rebuild`);
  }

  function allowedMask(filters: SearchFilters | undefined): Uint8Array {
    const mask = new Uint8Array(records.length);
    records.forEach((record, index) => {
      const ok =
        (!filters?.layers || filters.layers.includes(record.layer)) &&
        (!filters?.rings || filters.rings.includes(record.ring)) &&
        (!filters?.evidence || filters.evidence.includes(record.evidence)) &&
        !filters?.excludeIds?.has(record.id);
      mask[index] = ok ? 1 : 0;
    });
    return mask;
  }

  /** Best cosine per allowed record. Vectors are unit length, so cosine is a dot product. */
  function scan(queryVector: Float32Array, mask: Uint8Array): Float32Array {
    const best = new Float32Array(records.length).fill(-2);
    for (let chunk = 0, offset = 0; chunk < chunkRecords.length; chunk++, offset += dims) {
      const record = chunkRecords[chunk]!;
      if (mask[record] === 0) continue;
      let dot = 0;
      for (let d = 0; d < dims; d++) dot += vectors[offset + d]! * queryVector[d]!;
      if (dot > best[record]!) best[record] = dot;
    }
    return best;
  }

  async function embedQuery(query: string): Promise<Float32Array> {
    const [vector] = await embedder.embed([query]);
    return vector!;
  }

  return {
    records,
    chunkCount: chunkRecords.length,
    embedder,
    byId: (id) => {
      const index = indexById.get(id);
      return index === undefined ? undefined : records[index];
    },

    async search(query, options = {}) {
      const limit = options.limit ?? 8;
      const floor = options.similarityFloor ?? tuning.similarityFloor;
      const mask = allowedMask(options.filters);
      const excluded: number[] = [];
      mask.forEach((allowed, index) => {
        if (!allowed && options.filters?.excludeIds?.has(records[index]!.id)) excluded.push(index);
      });
      const [queryVector, lexical] = await Promise.all([
        embedQuery(query),
        fullTextScores(fullText, query, options.filters ?? {}, excluded, tuning.candidates * 3),
      ]);
      const similarity = scan(queryVector, mask);
      const maxLexical = Math.max(0, ...lexical.values());

      const candidates: ScoredRecord[] = [];
      for (let index = 0; index < records.length; index++) {
        if (mask[index] === 0) continue;
        const cosine = Math.max(0, similarity[index]!);
        const lexicalScore = maxLexical > 0 ? (lexical.get(index) ?? 0) / maxLexical : 0;
        // Words alone never admit a record: "baked into you" must not answer a bread recipe.
        if (cosine < floor && !(cosine >= Math.min(floor, tuning.assistedFloor) && lexicalScore >= tuning.lexicalFloor)) continue;
        const fused = tuning.vectorWeight * cosine + (1 - tuning.vectorWeight) * lexicalScore;
        candidates.push({ record: records[index]!, relevanceScore: fused, similarity: cosine, lexical: lexicalScore });
      }
      candidates.sort((a, b) => b.relevanceScore - a.relevanceScore || (a.record.id < b.record.id ? -1 : 1));
      return diversify(candidates.slice(0, tuning.candidates), limit, tuning.diversityPenalty).map((hit) => ({
        ...hit,
        relevanceScore: round(hit.relevanceScore),
        similarity: round(hit.similarity),
        lexical: round(hit.lexical),
      }));
    },

    async similar(query, predicate, k) {
      const mask = new Uint8Array(records.length);
      records.forEach((record, index) => (mask[index] = predicate(record) ? 1 : 0));
      const similarity = scan(await embedQuery(query), mask);
      const hits: { record: SearchRecord; score: number }[] = [];
      similarity.forEach((score, index) => {
        if (mask[index] === 1) hits.push({ record: records[index]!, score });
      });
      hits.sort((a, b) => b.score - a.score || (a.record.id < b.record.id ? -1 : 1));
      return hits.slice(0, k).map((hit) => ({ ...hit, score: round(hit.score) }));
    },
  };
}

function round(value: number): number {
  return Math.round(value * 10000) / 10000;
}

/**
 * Greedy re-ranking: each pick lowers the score of candidates whose lead contributor was
 * already chosen, so five passages from one voice do not crowd out the others.
 */
export function diversify(candidates: readonly ScoredRecord[], limit: number, penalty: number): ScoredRecord[] {
  const pool = [...candidates];
  const chosen: ScoredRecord[] = [];
  const voiceCount = new Map<string, number>();
  while (chosen.length < limit && pool.length > 0) {
    let bestIndex = 0;
    let bestScore = -Infinity;
    pool.forEach((candidate, index) => {
      const voice = candidate.record.kind === 'divergence' ? `atlas:${candidate.record.id}` : candidate.record.contributors[0] ?? '';
      const adjusted = candidate.relevanceScore * penalty ** (voiceCount.get(voice) ?? 0);
      if (adjusted > bestScore) {
        bestScore = adjusted;
        bestIndex = index;
      }
    });
    const [picked] = pool.splice(bestIndex, 1);
    const voice = picked!.record.kind === 'divergence' ? `atlas:${picked!.record.id}` : picked!.record.contributors[0] ?? '';
    voiceCount.set(voice, (voiceCount.get(voice) ?? 0) + 1);
    chosen.push(picked!);
  }
  return chosen;
}
