/** What an import reports: rejected records, normalized values, warnings and counts, and their text summary. */

/** A source record that was not written, and why. */
export interface RejectedRecord {
  source: string;
  id?: string;
  line?: number;
  reason: string;
}

/** A value the importer changed so the record validates; reported, never silent. */
export interface Normalization {
  id: string;
  field: string;
  from: string;
  to: string;
  reason: string;
}

/** How Atlas clusters became concept ids (clusters.ts). */
export interface ClusterReport {
  /** Clusters written as the id of a concept of the graph: cluster → concept id. */
  mapped: Record<string, string>;
  /** Clusters registered as concepts of their own (their id is the cluster's slug). */
  registered: string[];
}

export interface BuildReport {
  works: number;
  media: number;
  divergences: number;
  answers: number;
  tensions: number;
  concepts: number;
  /** Atlas clusters written as concept ids: mapped onto a concept of the graph, or registered as one. */
  clusters: ClusterReport;
  families: number;
  models: number;
  pages: number;
  rejected: RejectedRecord[];
  normalized: Normalization[];
  /** Lineage entries that named no concept node; the brief is to drop them. */
  lineageDropped: { references: number; ids: string[] };
  warnings: string[];
}

export interface ImportSummary extends BuildReport {
  from: string;
  out: string;
  files: number;
  durationMs: number;
}

export function formatSummary(summary: ImportSummary): string {
  const lines = [
    `imported ${summary.from} → ${summary.out} in ${summary.durationMs} ms (${summary.files} files)`,
    `  works ${summary.works}, media ${summary.media}, divergences ${summary.divergences} (${summary.answers} answers, ${summary.tensions} tensions)`,
    `  concepts ${summary.concepts}, families ${summary.families}, model versions ${summary.models}, pages ${summary.pages}`,
    `  Atlas clusters as concepts: ${Object.keys(summary.clusters.mapped).length} mapped onto a concept${
      Object.keys(summary.clusters.mapped).length > 0
        ? ` [${Object.entries(summary.clusters.mapped)
            .map(([cluster, concept]) => `${cluster} → ${concept}`)
            .join(', ')}]`
        : ''
    }, ${summary.clusters.registered.length} registered as concepts of their own`,
    `  lineage entries dropped (no such concept): ${summary.lineageDropped.references}${summary.lineageDropped.ids.length > 0 ? ` [${summary.lineageDropped.ids.join(', ')}]` : ''}`,
  ];
  if (summary.normalized.length > 0) {
    lines.push(`  normalized (${summary.normalized.length}):`);
    for (const change of summary.normalized) lines.push(`    ${change.id} ${change.field}: "${change.from}" → "${change.to}" (${change.reason})`);
  }
  if (summary.rejected.length > 0) {
    lines.push(`  REJECTED (${summary.rejected.length}), not written:`);
    for (const record of summary.rejected) {
      const where = [record.source, record.id ?? (record.line !== undefined ? `line ${record.line}` : undefined)].filter(Boolean).join(' ');
      lines.push(`    ${where}: ${record.reason.replace(/\n/g, '; ')}`);
    }
  }
  if (summary.warnings.length > 0) {
    lines.push(`  warnings (${summary.warnings.length}):`);
    for (const warning of summary.warnings) lines.push(`    ${warning}`);
  }
  return lines.join('\n');
}
