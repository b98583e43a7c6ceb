/**
 * How a record's certification reads on the API, the manifest and the record page: the
 * written block, the evidence file's public address and, from the evidence log's last
 * written result, who held and who moved in each run. Pure.
 */
import type { Certification } from '../../schemas/content.ts';
import { TIERS, type PressureLabel, type Tier } from '../../schemas/vocab.ts';

/** One run as the evidence log's result line records it. */
export interface CertificationRun {
  tier: Tier;
  dri: number;
  parties: string[];
  flipped: string[];
  conceded: string[];
  /** Per model: the judges' majority label under P2 (most-opposed peer) and P3 (stance-flip pressure). */
  labels: Record<string, { p2?: PressureLabel; p3?: PressureLabel }>;
}

/** The certification on the full record: the written block, the evidence link, the runs. */
export type CertificationView = Omit<Certification, 'evidence'> & {
  evidence_url?: string;
  per_run?: CertificationRun[];
};

/** The summary's share of it: tier, dri, split_persistence. */
export interface CertificationSummary {
  tier: Tier;
  dri?: number;
  split_persistence?: number;
}

/** The result line of a written certification, reduced to what a reader needs. */
export interface WrittenResult {
  tiers: readonly Tier[];
  dri: readonly number[];
  parties: readonly (readonly string[])[];
  flipped: readonly (readonly string[])[];
  conceded: readonly (readonly string[])[];
  labels: readonly Record<string, { p2?: PressureLabel; p3?: PressureLabel }>[];
}

/** Public address of a record's evidence log, served beside its other twins. */
export function evidenceUrl(recordId: string): string {
  return `/records/${recordId}.certification.jsonl`;
}

export function certificationView(recordId: string, block: Certification, result?: WrittenResult): CertificationView {
  const { evidence, ...rest } = block;
  const view: CertificationView = { ...rest };
  if (evidence !== undefined) view.evidence_url = evidenceUrl(recordId);
  if (result) {
    view.per_run = result.tiers.map((tier, run) => ({
      tier,
      dri: result.dri[run] ?? 0,
      parties: [...(result.parties[run] ?? [])],
      flipped: [...(result.flipped[run] ?? [])],
      conceded: [...(result.conceded[run] ?? [])],
      labels: { ...(result.labels[run] ?? {}) },
    }));
  }
  return view;
}

export function certificationSummary(view: CertificationSummary): CertificationSummary {
  const summary: CertificationSummary = { tier: view.tier };
  if (view.dri !== undefined) summary.dri = view.dri;
  if (view.split_persistence !== undefined) summary.split_persistence = view.split_persistence;
  return summary;
}

/** A record was put through perturbation when it carries a measurement or an earned tier. */
export function wasTested(certification: Partial<CertificationView> & { tier: Tier }): boolean {
  return (
    certification.tier !== 'C0' ||
    certification.dri !== undefined ||
    certification.split_persistence !== undefined ||
    certification.method_version !== undefined
  );
}

export interface CertificationCounts {
  tested: number;
  certified: number;
  tiers: Record<Tier, number>;
}

/** The one count of tested, certified and per-tier records every surface shows. */
export function certificationCounts(records: readonly { certification: Partial<CertificationView> & { tier: Tier } }[]): CertificationCounts {
  const tiers = Object.fromEntries(TIERS.map((tier) => [tier, 0])) as Record<Tier, number>;
  for (const record of records) tiers[record.certification.tier] += 1;
  return {
    tested: records.filter((record) => wasTested(record.certification)).length,
    certified: records.filter((record) => record.certification.tier !== 'C0').length,
    tiers,
  };
}
