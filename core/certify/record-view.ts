/**
 * How a record's certification reads on the API, the manifest and the record page: the
 * written block, the evidence file's public address and, from the evidence log's last
 * written result, who held and who moved in each run. Pure.
 */
import type { Certification } from '../../schemas/content.ts';
import type { StanceRun } from '../../schemas/certification.ts';
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
  /**
   * perturbation-v2: each named tension read on its two claims (each voice's side per re-roll,
   * per paraphrase and under P2/P3), the measured moves and the judges beside them; null when
   * the run read no stance.
   */
  stance?: StanceRun | null;
}

/** The certification on the full record: the written block, the evidence link, the runs. */
export type CertificationView = Omit<Certification, 'evidence'> & {
  evidence_url?: string;
  per_run?: CertificationRun[];
};

/**
 * The summary's share of it: tier, dri, split_persistence, and `verdict` (with its interval)
 * when the runs could not decide, so an undecided record never reads as a plain tier.
 */
export interface CertificationSummary {
  tier: Tier;
  dri?: number;
  split_persistence?: number;
  /** Only ever 'undecided' on a summary: a decided record carries no verdict there. */
  verdict?: 'decided' | 'undecided';
  tier_interval?: [number, number];
  method_version?: string;
}

/** The result line of a written certification, reduced to what a reader needs. */
export interface WrittenResult {
  tiers: readonly Tier[];
  dri: readonly number[];
  parties: readonly (readonly string[])[];
  flipped: readonly (readonly string[])[];
  conceded: readonly (readonly string[])[];
  labels: readonly Record<string, { p2?: PressureLabel; p3?: PressureLabel }>[];
  /** perturbation-v2: per run, the stance readings (absent on v1 result lines). */
  stance?: readonly (StanceRun | null)[];
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
      ...(result.stance ? { stance: result.stance[run] ?? null } : {}),
    }));
  }
  return view;
}

export function certificationSummary(view: Partial<CertificationView> & { tier: Tier }): CertificationSummary {
  const summary: CertificationSummary = { tier: view.tier };
  if (view.dri !== undefined) summary.dri = view.dri;
  if (view.split_persistence !== undefined) summary.split_persistence = view.split_persistence;
  if (view.method_version !== undefined) summary.method_version = view.method_version;
  if (isUndecided(view)) {
    summary.verdict = 'undecided';
    if (view.tier_interval !== undefined) summary.tier_interval = [...view.tier_interval];
  }
  return summary;
}

/** The runs reached their cap without deciding: the carried tier is the modal one so far, not a finding. */
export function isUndecided(certification: { verdict?: string }): boolean {
  return certification.verdict === 'undecided';
}

/** Which method measured the tier, in words a reader can check against the ADR. */
export function methodLabel(methodVersion: string | undefined): string | undefined {
  const description = methodVersion === undefined ? undefined : methodDescription(methodVersion);
  return description ? `${methodVersion}: ${description}` : methodVersion;
}

/** What each method measures, in a few words (undefined: a method this engine does not know). */
export function methodDescription(method: string): string | undefined {
  if (method === 'perturbation-v1') return 'whole-answer distance';
  if (method === 'perturbation-v2') return 'stance on the named claims';
  return undefined;
}

/** A record was put through perturbation when it carries a measurement or an earned tier. */
export function wasTested(certification: Partial<CertificationView> & { tier: Tier }): boolean {
  return (
    certification.tier !== 'C0' ||
    certification.dri !== undefined ||
    certification.split_persistence !== undefined ||
    certification.method_version !== undefined ||
    certification.verdict !== undefined
  );
}

export interface CertificationCounts {
  tested: number;
  /** Decided records above C0; an undecided record is not certified whatever tier it carries. */
  certified: number;
  undecided: number;
  tiers: Record<Tier, number>;
}

/** The one count of tested, certified, undecided and per-tier records every surface shows. */
export function certificationCounts(records: readonly { certification: Partial<CertificationView> & { tier: Tier } }[]): CertificationCounts {
  const tiers = Object.fromEntries(TIERS.map((tier) => [tier, 0])) as Record<Tier, number>;
  for (const record of records) tiers[record.certification.tier] += 1;
  return {
    tested: records.filter((record) => wasTested(record.certification)).length,
    certified: records.filter((record) => record.certification.tier !== 'C0' && !isUndecided(record.certification)).length,
    undecided: records.filter((record) => isUndecided(record.certification)).length,
    tiers,
  };
}
