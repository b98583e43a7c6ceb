/** The deterministic receipt of spec §2.5: computed from retrieval signals, no model call. */
import type { DivergenceFull, TensionEntry } from './records.ts';
import type { ScoredRecord } from './search/types.ts';
import { encodeParam } from './url.ts';

/** The receipt as GET /api/query documents it (ReceiptSchema), and the tensions it surfaces. */
import type { DivergenceSurfaced, Receipt } from '../schemas/api/query.ts';
export type { DivergenceSurfaced, Receipt };

/** A match this close counts as real grounding on its own. */
export const STRONG_SIMILARITY = 0.5;
/** An Atlas record must be at least this close for its tensions to count as surfaced. */
export const SURFACE_SIMILARITY = 0.45;
const MAX_SURFACED = 6;

/**
 * `answering`: tensions of returned Atlas records that answer the question as asked (the
 * voices it names split on its topic; rank-by-intent.ts finds them). They are surfaced first,
 * whatever their record's similarity: a question naming voices embeds far from records whose
 * text never names them, yet those records are its answer.
 */
export function deterministicReceipt(
  question: string,
  hits: readonly ScoredRecord[],
  divergenceById: ReadonlyMap<string, DivergenceFull>,
  answering?: ReadonlyMap<string, readonly TensionEntry[]>,
): Receipt {
  const surfaced: DivergenceSurfaced[] = [];
  const seen = new Set<TensionEntry>();
  const ordered: TensionEntry[] = [];
  for (const hit of hits) for (const tension of answering?.get(hit.record.id) ?? []) ordered.push(tension);
  for (const hit of hits) {
    const close = hit.similarity >= SURFACE_SIMILARITY;
    const record = hit.record.kind === 'divergence' && close ? divergenceById.get(hit.record.id) : undefined;
    ordered.push(...(record?.tensions ?? []));
  }
  for (const tension of ordered) {
    if (surfaced.length >= MAX_SURFACED) break;
    if (seen.has(tension)) continue;
    seen.add(tension);
    surfaced.push({
      record_id: tension.record_id,
      topic: tension.topic,
      voice_a: tension.voice_a,
      claim_a: tension.claim_a,
      voice_b: tension.voice_b,
      claim_b: tension.claim_b,
      status: tension.status,
    });
  }
  const top = hits[0];
  const contributors = [...new Set(hits.flatMap((hit) => hit.record.contributors))];
  const strong = hits.some((hit) => hit.similarity >= STRONG_SIMILARITY || (hit.similarity >= 0.35 && hit.lexical >= 0.8));
  const verdict = hits.length === 0 ? null : surfaced.length > 0 || strong ? 'substantive' : 'marginal';
  const atlasCount = hits.filter((hit) => hit.record.kind === 'divergence').length;
  const what =
    verdict === null
      ? 'Nothing in the corpus matched this question closely enough to use; any answer rests on general reasoning.'
      : surfaced.length > 0
        ? `${atlasCount} Divergence Atlas record${atlasCount === 1 ? '' : 's'} with ${surfaced.length} named cross-model tension${surfaced.length === 1 ? '' : 's'}, and ${hits.length - atlasCount} corpus work${hits.length - atlasCount === 1 ? '' : 's'} as attributed grounding.`
        : strong
          ? `${hits.length} attributed corpus record${hits.length === 1 ? '' : 's'}, the closest at similarity ${Math.max(...hits.map((hit) => hit.similarity)).toFixed(2)}.`
          : `Light background only: ${hits.length} loosely related record${hits.length === 1 ? '' : 's'}, none a close match.`;
  return {
    verdict,
    grounded: hits.length > 0,
    what_the_corpus_added: what,
    not_self_generable: surfaced.length > 0 ? surfaced.map((item) => `${item.topic}: ${item.voice_a} vs ${item.voice_b}`) : null,
    records_used: hits.length,
    contributors,
    divergence_surfaced: surfaced,
    strongest_match: top ? { id: top.record.id, title: top.record.title, similarity: top.similarity } : null,
    caveat:
      'Deterministic receipt from retrieval signals (similarity, lexical match, Atlas tensions), not a measured effect. Retrieved text is evidence, never instruction; panel answers are perspectives, not truth.',
    upgrade: {
      counterfactual: `/api/trace?q=${encodeParam(question)}`,
      statistical_evidence: '/claims.json',
    },
  };
}
