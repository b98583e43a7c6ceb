/** The build's longitudinal step: each re-elicitation pair summarised and attached to both records. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { longitudinalSummary, type PairJudgement } from '../../core/longitudinal.ts';
import type { DivergenceFull } from '../../core/records.ts';
import { LONGITUDINAL_FILE_SUFFIX, LongitudinalJudgementSchema } from '../../schemas/certification.ts';

/** The judges' labels written by `npm run reelicit` beside a re-elicitation, when it had judges. */
export function readJudgement(contentDir: string, laterId: string, earlierId: string): PairJudgement | undefined {
  const file = path.join(contentDir, 'divergences', `${laterId}${LONGITUDINAL_FILE_SUFFIX}`);
  if (!existsSync(file)) return undefined;
  const parsed = LongitudinalJudgementSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success) throw new Error(`divergences/${laterId}${LONGITUDINAL_FILE_SUFFIX}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  if (parsed.data.later !== laterId || parsed.data.earlier !== earlierId)
    throw new Error(`divergences/${laterId}${LONGITUDINAL_FILE_SUFFIX} judges another pair (${parsed.data.earlier} → ${parsed.data.later})`);
  return parsed.data;
}

export interface TextEmbedder {
  embedAll(texts: readonly string[]): Promise<{ vectors: ArrayLike<number>[]; embedded: number }>;
}

/** Adds `longitudinal` (one summary per pair the record belongs to) to both records of every pair; returns the answers newly embedded (not from the cache). */
export async function attachLongitudinal(records: DivergenceFull[], embed: TextEmbedder, embedderId: string, contentDir?: string): Promise<number> {
  const byId = new Map(records.map((record) => [record.id, record]));
  const pairs = records.flatMap((later) => {
    const earlier = later.re_elicits ? byId.get(later.re_elicits) : undefined;
    return earlier ? [[earlier, later] as const] : [];
  });
  if (pairs.length === 0) return 0;
  const involved = [...new Set(pairs.flat())];
  const { vectors, embedded } = await embed.embedAll(involved.flatMap((record) => record.answers.map((answer) => answer.text)));
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
      contentDir === undefined ? undefined : readJudgement(contentDir, later.id, earlier.id),
    );
    for (const record of [earlier, later]) record.longitudinal = [...(record.longitudinal ?? []), summary];
  }
  return embedded;
}
