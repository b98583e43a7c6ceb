/**
 * The build's share of certification: the evidence log's last written result (who held,
 * who moved in each run) for the derived record, and the log itself copied beside the
 * record's other twins as /records/<id>.certification.jsonl.
 */
import { copyFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import type { WrittenResult } from '../../../core/certify/record-view.ts';
import type { DivergenceFrontmatter } from '../../../schemas/content.ts';
import type { EvidenceResult } from '../../../schemas/certification.ts';
import { readEvidence } from '../../../content-files/evidence-log.ts';

function logOf(contentDir: string, data: DivergenceFrontmatter): string | undefined {
  const name = data.certification.evidence;
  if (name === undefined) return undefined;
  const file = path.join(contentDir, 'divergences', name);
  return existsSync(file) ? file : undefined;
}

/** The last result line that wrote this record's block, matching its date and tier. */
export function writtenResult(contentDir: string, data: DivergenceFrontmatter): WrittenResult | undefined {
  const file = logOf(contentDir, data);
  if (file === undefined) return undefined;
  const results = readEvidence(file).filter(
    (line): line is EvidenceResult =>
      line.kind === 'result' &&
      line.written &&
      line.subject === data.id &&
      line.certification.tier === data.certification.tier &&
      line.certification.date === data.certification.date,
  );
  return results.at(-1);
}

/** Copies each record's evidence log to <publicDir>/records/<id>.certification.jsonl. */
export function publishEvidence(contentDir: string, entries: readonly { data: DivergenceFrontmatter }[], publicDir: string): number {
  let copied = 0;
  for (const { data } of entries) {
    const file = logOf(contentDir, data);
    if (file === undefined) continue;
    copyFileSync(file, path.join(publicDir, 'records', `${data.id}.certification.jsonl`));
    copied += 1;
  }
  return copied;
}
