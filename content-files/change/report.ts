/**
 * What a content change does, as a curator reads it: allowed changes grouped by kind, and the
 * refusals, each naming the file, the field and the rule it breaks (docs/CONTRIBUTING.md).
 */

/** The files of a content folder at one moment, by path relative to the folder (forward slashes). */
export type Snapshot = ReadonlyMap<string, Buffer>;

export const CHANGE_GROUPS = {
  'new-records': 'New records',
  'new-answers': 'New answers',
  'new-works': 'New works',
  annotations: 'Annotations appended',
  dispositions: 'Dispositions appended',
  certification: 'Certification written by npm run certify -- --write',
  imports: 'Federated imports',
  evidence: 'Evidence logs appended',
  edits: 'Edits to existing prose',
  other: 'Other files',
} as const;
export type ChangeGroup = keyof typeof CHANGE_GROUPS;

/** The rules a change may break; each is refused unless the curator types the override. */
export const CHANGE_RULES = {
  'verbatim-answer': 'a stored answer is verbatim: its text, model, model_id, date and truncated never change',
  'answer-removed': 'a stored answer is never removed',
  'record-removed': 'a record or work is never removed or renamed (supersede it: a re-elicitation, an annotation)',
  'id-changed': 'a record or work keeps its id',
  'append-only': 'an append-only file or list grows at its end only',
  'certification-unearned': 'a certification block is what the evidence log of the same change states (tiers are earned, not typed)',
  'federation-provenance': 'the provenance of a federated import never changes',
} as const;
export type ChangeRule = keyof typeof CHANGE_RULES;

export interface AllowedChange {
  group: ChangeGroup;
  file: string;
  message: string;
}

export interface Refusal {
  file: string;
  field: string;
  rule: ChangeRule;
  message: string;
}

export interface ChangeReport {
  allowed: AllowedChange[];
  refusals: Refusal[];
}

/** The report for a curator: one line each, grouped, refusals last. */
export function formatReport(report: ChangeReport, heading: string): string {
  const lines = [heading];
  for (const [group, title] of Object.entries(CHANGE_GROUPS)) {
    const entries = report.allowed.filter((entry) => entry.group === group);
    if (entries.length === 0) continue;
    lines.push('', `${title} (${entries.length})`);
    for (const entry of entries) lines.push(`  + ${entry.file}: ${entry.message}`);
  }
  if (report.allowed.length === 0 && report.refusals.length === 0) lines.push('', 'No change to the content.');
  if (report.refusals.length > 0) {
    lines.push('', `Refused (${report.refusals.length})`);
    for (const refusal of report.refusals) lines.push(`  x ${refusal.file}: ${refusal.field}: [${refusal.rule}] ${refusal.message}`);
  }
  return lines.join('\n');
}
