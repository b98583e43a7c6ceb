/**
 * Retrieval for a question (spec §2.6, §4.2): glyph modes and filters applied before ranking,
 * the question's own kind choosing the ranking when the caller chose none (rank-by-intent.ts).
 */
import type { Corpus } from './corpus.ts';
import { ATLAS_RELEVANCE_RATIO, aboveFloors, admitAtlasByRelevance, closestToFloors } from './atlas-admission.ts';
import { evidenceAtOrAbove, type FastQuery } from './query-params.ts';
import { readQuestion } from './query-intent.ts';
import { rankForIntent, voiceLexicon, type IntentRanking } from './rank-by-intent.ts';
import type { RelevanceModel } from './search/relevance.ts';
import type { SearchFilters } from './search/types.ts';
import { watchVectors, type VectorsUnavailable } from './search/vectors.ts';

export interface Retrieval extends IntentRanking {
  filters: SearchFilters;
  excludeIds?: { requested: string[]; matched: string[]; unmatched: string[] };
  /**
   * The relevance floors applied (relevance.ts; none under the ∞ glyph), and the record that
   * came closest to passing its floor among those retrieval found before them (null: none):
   * with no record left, no_context says why. `gate`: the question gate applied (0: none); when
   * it turned the question away, `closest.floor` is the gate and `closest.gate` is true.
   */
  relevance: { floor: number; atlasFloor: number; gate: number; closest: { relevance: number; floor: number; gate?: true } | null };
  /**
   * Present when the question's embedding failed or missed its deadline (search/vectors.ts): the
   * records come from the words alone, and neither the floors nor the gate were applied (0 above).
   */
  vectors?: VectorsUnavailable;
}

export interface RetrieveOptions {
  /**
   * How relevant an Atlas record must be, as a share of the best work's relevance, to be
   * returned when the caller set no glyph and no layer (atlas-admission.ts); 0 keeps every
   * Atlas record retrieval found. Benchmarks sweep it; the API uses the default.
   */
  atlasRatio?: number;
  /** Floors over the index's calibration (relevance.ts): a deployment's configuration, or a benchmark's sweep. */
  floors?: Partial<RelevanceModel['floors']>;
  /** The question gate (retrieval-choice.ts `question_gate`) over the build's; 0: none. Benchmarks sweep it. */
  questionGate?: number;
  /**
   * `optional` (default, the API's paths): without the question's vector (late or failed), the
   * records come from the words alone and `Retrieval.vectors` says why. `required`: such a failure
   * rejects — what measurements (the relevance calibration, BEIR) need, never to measure a
   * words-only retrieval unawares.
   */
  vectors?: 'optional' | 'required';
}

export async function retrieve(corpus: Corpus, query: FastQuery, options: RetrieveOptions = {}): Promise<Retrieval> {
  const atlasRatio = options.atlasRatio ?? ATLAS_RELEVANCE_RATIO;
  const modelFloors = { ...corpus.search.relevance.floors, ...options.floors };
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
  // The ∞ glyph asks for the wider field: its own cosine floor, no calibrated one.
  const floor = glyphs.has('∞') ? 0 : modelFloors.relevant;
  const gate = glyphs.has('∞') ? 0 : (options.questionGate ?? corpus.retrieval.question_gate ?? 0);
  if (glyphs.has('∅') || query.cleanQuery === '') {
    return { hits: [], filters, relevance: { floor, atlasFloor: modelFloors.atlas, gate, closest: null }, ...(excludeIds ? { excludeIds } : {}) };
  }

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
  // A search without the question's vector answers by words (search/vectors.ts), unless the caller requires vectors.
  const vectors = watchVectors();
  const byWords = options.vectors === 'required' ? {} : { onVectorsUnavailable: vectors.report };
  if (intent && intent.kind !== 'open') {
    const { closest, ...ranked } = await rankForIntent(corpus, query.cleanQuery, intent, {
      filters,
      limit,
      atlasRatio,
      floors: { relevant: floor, atlas: modelFloors.atlas },
      ...(similarityFloor !== undefined ? { similarityFloor } : {}),
      ...(options.vectors === 'required' ? {} : { vectors }),
    });
    const applied = appliedFloors({ floor, atlasFloor: modelFloors.atlas, gate }, vectors.unavailable);
    const state = { ...(vectors.unavailable ? { vectors: vectors.unavailable } : {}), ...(excludeIds ? { excludeIds } : {}) };
    const turned = belowGate(ranked.hits, applied.gate);
    if (turned) return { hits: [], filters, relevance: { ...applied, closest: turned }, ...state };
    return { ...ranked, filters, relevance: { ...applied, closest }, ...state };
  }
  // Retrieval diversifies greedily over one candidate pool, so asking for more places and
  // dropping the records that do not earn theirs leaves the others in the order, and at the
  // places, they would have had without those records: a shorter list is not padded.
  const found = await corpus.search.search(query.cleanQuery, {
    filters,
    limit: Math.max(limit, Math.min(limit * 3, 100)),
    ...(similarityFloor !== undefined ? { similarityFloor } : {}),
    ...byWords,
  });
  const applied = appliedFloors({ floor, atlasFloor: modelFloors.atlas, gate }, vectors.unavailable);
  const state = { ...(vectors.unavailable ? { vectors: vectors.unavailable } : {}), ...(excludeIds ? { excludeIds } : {}) };
  // The Atlas floor and the relative rule weigh Atlas records against works when the question
  // chose the mode; a caller's glyph or layer scope asked for what it gets.
  const atlasFloor = intent ? applied.atlasFloor : undefined;
  let hits = aboveFloors(found, applied.floor, atlasFloor);
  if (intent) hits = admitAtlasByRelevance(hits, atlasRatio);
  if (!reweight) hits = hits.slice(0, limit);
  const turned = belowGate(hits, applied.gate);
  if (turned) return { hits: [], filters, relevance: { ...applied, closest: turned }, ...state };
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
  const relevance = { ...applied, closest: closestToFloors(found, applied.floor, atlasFloor) };
  return { hits, filters, relevance, ...state };
}

/**
 * The floors and the gate a retrieval applies: without the question's vector none of them, since
 * calibrated relevance reads its cosine (search/vectors.ts) — the ∞ glyph's wider field.
 */
function appliedFloors(floors: { floor: number; atlasFloor: number; gate: number }, unavailable: VectorsUnavailable | undefined) {
  return unavailable ? { floor: 0, atlasFloor: 0, gate: 0 } : floors;
}

/**
 * The question gate (retrieval-choice.ts): when even the best record a question found is below
 * what the corpus's own questions reach, the corpus does not answer it; the record and the gate
 * are what no_context reports. Null: the question passes (or found nothing, which says so itself).
 */
function belowGate(hits: readonly { calibrated: number }[], gate: number): { relevance: number; floor: number; gate: true } | null {
  if (gate <= 0 || hits.length === 0) return null;
  const best = hits.reduce((top, hit) => Math.max(top, hit.calibrated), 0);
  return best < gate ? { relevance: best, floor: gate, gate: true } : null;
}
