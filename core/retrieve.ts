/**
 * Retrieval for a question (spec §2.6, §4.2): glyph modes and filters applied before ranking,
 * the question's own kind choosing the ranking when the caller chose none (rank-by-intent.ts).
 */
import type { Corpus } from './corpus.ts';
import { ATLAS_RELEVANCE_RATIO, admitAtlasByRelevance } from './atlas-admission.ts';
import { evidenceAtOrAbove, type FastQuery } from './query-params.ts';
import { readQuestion } from './query-intent.ts';
import { rankForIntent, voiceLexicon, type IntentRanking } from './rank-by-intent.ts';
import type { SearchFilters } from './search/types.ts';

export interface Retrieval extends IntentRanking {
  filters: SearchFilters;
  excludeIds?: { requested: string[]; matched: string[]; unmatched: string[] };
}

export interface RetrieveOptions {
  /**
   * How relevant an Atlas record must be, as a share of the best work's relevance, to be
   * returned when the caller set no glyph and no layer (atlas-admission.ts); 0 keeps every
   * Atlas record retrieval found. Benchmarks sweep it; the API uses the default.
   */
  atlasRatio?: number;
}

export async function retrieve(corpus: Corpus, query: FastQuery, options: RetrieveOptions = {}): Promise<Retrieval> {
  const atlasRatio = options.atlasRatio ?? ATLAS_RELEVANCE_RATIO;
  const filters: SearchFilters = {
    ...(query.layers ? { layers: query.layers } : {}),
    ...(query.rings ? { rings: query.rings } : {}),
    ...(query.evidenceThreshold ? { evidence: evidenceAtOrAbove(query.evidenceThreshold) } : {}),
  };
  let excludeIds: Retrieval['excludeIds'];
  if (query.excludeIds) {
    const matched = query.excludeIds.filter((id) => corpus.search.byId(id) !== undefined);
    excludeIds = {
      requested: query.excludeIds,
      matched,
      unmatched: query.excludeIds.filter((id) => !matched.includes(id)),
    };
    filters.excludeIds = new Set(matched);
  }
  const glyphs = new Set(query.glyphs);
  if (glyphs.has('∅') || query.cleanQuery === '') return { hits: [], filters, ...(excludeIds ? { excludeIds } : {}) };

  let limit = query.limit;
  let similarityFloor: number | undefined;
  if (glyphs.has('Ω')) {
    limit = Math.min(limit, 3);
    similarityFloor = 0.4;
  }
  if (glyphs.has('∞')) {
    limit = Math.min(limit * 2, 50);
    similarityFloor = 0.2;
  }
  const reweight = glyphs.has('Ξ') || glyphs.has('Ψ') || glyphs.has('Δ');
  // A glyph or a layer scope is the caller choosing the mode; otherwise the question's own
  // words choose it (query-intent.ts).
  const intent = reweight || query.layers ? undefined : readQuestion(query.cleanQuery, voiceLexicon(corpus));
  if (intent && intent.kind !== 'open') {
    const ranked = await rankForIntent(corpus, query.cleanQuery, intent, {
      filters,
      limit,
      atlasRatio,
      ...(similarityFloor !== undefined ? { similarityFloor } : {}),
    });
    return { ...ranked, filters, ...(excludeIds ? { excludeIds } : {}) };
  }
  // Retrieval diversifies greedily over one candidate pool, so asking for more places and
  // dropping the Atlas records that do not earn theirs leaves the works in the order, and at
  // the places, they would have had without those records: a shorter list is not padded.
  let hits = await corpus.search.search(query.cleanQuery, {
    filters,
    limit: reweight ? Math.min(limit * 3, 100) : intent ? Math.max(limit, Math.min(limit * 3, 100)) : limit,
    ...(similarityFloor !== undefined ? { similarityFloor } : {}),
  });
  if (intent) hits = admitAtlasByRelevance(hits, atlasRatio).slice(0, limit);
  if (reweight) {
    const modelVoices = new Set(corpus.registry.families.map((family) => family.name));
    hits = hits
      .map((hit) => {
        let factor = 1;
        if (glyphs.has('Ξ') && hit.record.kind === 'divergence') factor *= 1.25;
        if (glyphs.has('Ψ') && hit.record.contributors.some((name) => modelVoices.has(name))) factor *= 1.2;
        if (glyphs.has('Δ') && hit.record.kind === 'divergence') {
          const record = corpus.divergenceById.get(hit.record.id);
          if (record?.freshness.stale) factor *= 0.8;
          if (record?.re_elicits) factor *= 1.1;
        }
        return { ...hit, relevanceScore: Math.round(Math.min(1, hit.relevanceScore * factor) * 10000) / 10000 };
      })
      .sort((a, b) => b.relevanceScore - a.relevanceScore)
      .slice(0, limit);
  }
  return { hits, filters, ...(excludeIds ? { excludeIds } : {}) };
}
