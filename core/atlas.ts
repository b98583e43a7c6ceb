/** The Divergence Atlas read side (spec §2.3, §4.5). */
import type { Tier } from '../schemas/vocab.ts';
import type { CalibrationSummary } from './certify/calibration-summary.ts';
import { certificationCounts, isUndecided } from './certify/record-view.ts';
import { tierSourceCounts } from './certify/tier-source.ts';
import { toSummary, type DivergenceFull } from './records.ts';

export const CERT_FILTERS = ['C1', 'C2', 'C3', 'certified'] as const;
export type CertFilter = (typeof CERT_FILTERS)[number];

/** C3 is C1 and C2 together, so it satisfies both; `certified` is any tier above C0. An undecided record matches none. */
const CERT_MATCHES: Record<CertFilter, readonly Tier[]> = {
  C1: ['C1', 'C3'],
  C2: ['C2', 'C3'],
  C3: ['C3'],
  certified: ['C1', 'C2', 'C3'],
};

export const CERTIFICATION_LEGEND = {
  C0: 'Displayed, not certified. Either never perturbation-tested, or tested and did not clear a tier.',
  C1: 'Paraphrase-robust: the split persists across rewordings, above the within-model noise floor (DRI).',
  C2: 'Pressure-robust: no model flips and at most 1 concedes under the most-opposed peer plus stance-flip pressure.',
  C3: "C1 and C2 together. Only this tier earns unqualified 'genuine divergence' language.",
  method:
    "Perturbation testing re-asks the question in paraphrases (C1) and under peer and stance-flip pressure (C2). perturbation-v1 measures the split as whole-answer distance (dri is the divergence robustness index); perturbation-v2 reads each answer's side on the claims a tension names. split_persistence is the share of perturbations in which the split held. A record whose runs could not decide carries verdict: undecided with tier_interval; its tier is not a finding and no cert filter returns it. cert=C1 also returns C3 records, cert=C2 also returns C3, cert=certified returns C1, C2 and C3. calibration says how well this Atlas's instrument sees splits.",
};

/** Terms joined by + (or spaces); a record matches when any term appears in its text. */
export function searchTerms(value: string): string[] {
  return value
    .split(/[+\s]+/)
    .map((term) => term.trim().toLowerCase())
    .filter((term) => term.length > 0);
}

function searchableText(record: DivergenceFull): string {
  return [
    record.id,
    record.question,
    record.cluster ?? '',
    ...record.contributors,
    ...record.tensions.flatMap((tension) => [tension.topic, tension.claim_a, tension.claim_b]),
    ...record.answers.map((answer) => answer.text),
  ]
    .join('\n')
    .toLowerCase();
}

export function filterRecords(records: readonly DivergenceFull[], terms: readonly string[] | undefined, cert: CertFilter | undefined): DivergenceFull[] {
  return records.filter((record) => {
    if (cert && (!CERT_MATCHES[cert].includes(record.certification.tier) || isUndecided(record.certification))) return false;
    if (terms && terms.length > 0) {
      const text = searchableText(record);
      if (!terms.some((term) => text.includes(term))) return false;
    }
    return true;
  });
}

export function indexEnvelope(
  all: readonly DivergenceFull[],
  shown: readonly DivergenceFull[],
  received: { id: string | null; search: string | null; cert: string | null },
  calibration?: CalibrationSummary,
) {
  const counts = certificationCounts(all);
  const reElicitations = all.filter((record) => record.re_elicits !== undefined).length;
  return {
    count: shown.length,
    total: all.length,
    distinct_questions: new Set(all.map((record) => record.question)).size,
    re_elicitation_note: `${reElicitations} record${reElicitations === 1 ? '' : 's'} re-elicit an earlier question with later models: same question, later date, current models. Each pair is a longitudinal probe, not a duplicate; distinct_questions counts the shared question once.`,
    received_params: received,
    certified_count: counts.certified,
    tested_count: counts.tested,
    ...(counts.undecided > 0 ? { undecided_count: counts.undecided } : {}),
    ...(calibration ? { calibration } : {}),
    tier_distribution: counts.tiers,
    tier_sources: tierSourceCounts(all),
    annotated_count: all.filter((record) => record.annotated).length,
    annotation_legend: {
      meaning: 'An append-only annotation layer on a record, readable on the ?id= read. Annotations never edit the verbatim answers.',
      statuses: {
        open: 'Raised, not yet reviewed.',
        confirmed: 'Reviewed and upheld by a curator.',
        disputed: 'Reviewed and contested; the record stands with the dispute visible.',
        withdrawn: 'Retracted by its author or a curator; kept for the record.',
      },
    },
    freshness_note:
      'freshness.stale is true when a participating model_id is a retired version in the model registry. A stale record is a witness of what that version said on its date, not a current claim; superseded_by names the successor when known.',
    note: 'Answers are verbatim and attributed by model id. Panel outputs are perspectives, not truth. Read one record in full with ?id=<record_id>.',
    certification_legend: CERTIFICATION_LEGEND,
    records: shown.map(toSummary),
  };
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length]!;
}

/** Closest ids to a mistyped one: case-insensitive match first, then small edit distance. */
export function nearestIds(wanted: string, ids: readonly string[], count = 3): string[] {
  const lowered = wanted.toLowerCase();
  const caseMatch = ids.filter((id) => id.toLowerCase() === lowered);
  if (caseMatch.length > 0) return caseMatch;
  return ids
    .map((id) => ({ id, distance: editDistance(lowered, id.toLowerCase()) }))
    .filter((candidate) => candidate.distance <= Math.max(2, Math.floor(wanted.length / 3)))
    .sort((a, b) => a.distance - b.distance || a.id.localeCompare(b.id))
    .slice(0, count)
    .map((candidate) => candidate.id);
}
