/** The build's longitudinal step: each re-elicitation pair summarised and attached to both records. */
import { longitudinalSummary } from '../../api/core/longitudinal.ts';
import type { DivergenceFull } from '../../api/core/records.ts';

export interface TextEmbedder {
  embedAll(texts: readonly string[]): Promise<{ vectors: ArrayLike<number>[] }>;
}

/** Adds `longitudinal` (one summary per pair the record belongs to) to both records of every pair. */
export async function attachLongitudinal(records: DivergenceFull[], embed: TextEmbedder, embedderId: string): Promise<number> {
  const byId = new Map(records.map((record) => [record.id, record]));
  const pairs = records.flatMap((later) => {
    const earlier = later.re_elicits ? byId.get(later.re_elicits) : undefined;
    return earlier ? [[earlier, later] as const] : [];
  });
  if (pairs.length === 0) return 0;
  const involved = [...new Set(pairs.flat())];
  const { vectors } = await embed.embedAll(involved.flatMap((record) => record.answers.map((answer) => answer.text)));
  const vectorsOf = new Map<string, ArrayLike<number>[]>();
  let offset = 0;
  for (const record of involved) {
    vectorsOf.set(record.id, vectors.slice(offset, offset + record.answers.length));
    offset += record.answers.length;
  }
  for (const [earlier, later] of pairs) {
    const summary = longitudinalSummary(
      earlier,
      vectorsOf.get(earlier.id)!,
      later,
      vectorsOf.get(later.id)!,
      embedderId,
    );
    for (const record of [earlier, later]) record.longitudinal = [...(record.longitudinal ?? []), summary];
  }
  return pairs.length;
}
