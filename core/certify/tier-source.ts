/**
 * Where a record's tier came from, for every surface that shows it (issue 28): measured here
 * (a result line with `written: true` in the evidence log beside the record backs the block),
 * stated by the origin (a federated import keeps the tier its origin stated), or stated in the
 * content without evidence (typed by hand, or the default C0 of a record never tested). Pure.
 */
import type { TierSource } from '../../schemas/api/atlas.ts';
import { evidenceUrl } from './record-view.ts';

export type { TierSource } from '../../schemas/api/atlas.ts';

export interface TierSourceInput {
  id: string;
  /** The record's block names an evidence log (`certification.evidence`). */
  evidence?: string;
  /** The build found that log's last written result for this block (same tier and date). */
  written: boolean;
  provenance?: { federation?: { origin: string; origin_name: string } };
}

export function tierSource(input: TierSourceInput): TierSource {
  const federation = input.provenance?.federation;
  if (federation) return { kind: 'origin', origin: federation.origin, origin_name: federation.origin_name };
  if (input.written && input.evidence !== undefined) return { kind: 'measured', evidence_url: evidenceUrl(input.id) };
  return { kind: 'content' };
}

/** One line a reader can take in: where the tier came from. */
export function describeTierSource(source: TierSource): string {
  if (source.kind === 'measured') return 'measured here: the evidence log holds every prompt, answer and label';
  if (source.kind === 'origin') return `stated by the origin, ${source.origin_name} (${source.origin}); not measured here`;
  return 'stated in the content without evidence: no evidence log backs this tier or its figures, so read them as illustrative';
}

/** Records per tier source, for the manifest and the index. */
export function tierSourceCounts(records: readonly { certification: { tier_source: TierSource } }[]): Record<TierSource['kind'], number> {
  const counts = { measured: 0, origin: 0, content: 0 };
  for (const record of records) counts[record.certification.tier_source.kind] += 1;
  return counts;
}
