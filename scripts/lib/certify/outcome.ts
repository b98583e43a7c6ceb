/** What a certification writes: the frontmatter block and the evidence log's result line. */
import type { CombinedOutcome, RunOutcome } from '../../../core/certify/evaluate.ts';
import { METHOD_VERSION, type CertifySettings } from '../../../core/certify/protocol.ts';
import type { Embedder } from '../../../providers/embedder.ts';
import type { EvidenceResult } from '../../../schemas/certification.ts';
import type { Certification } from '../../../schemas/content.ts';
import type { CertifyPanel } from './panel.ts';

export interface BlockContext extends CertifyPanel {
  settings: CertifySettings;
  embedder: Embedder;
}

const round = (value: number) => Math.round(value * 1000) / 1000;

export function blockOf(combined: CombinedOutcome, options: BlockContext, evidence: string, date: string): Certification {
  return {
    tier: combined.tier,
    dri: round(combined.dri),
    split_persistence: round(combined.splitPersistence),
    dri_range: [round(combined.driRange[0]), round(combined.driRange[1])],
    between_spread: round(combined.between),
    within_spread: round(combined.within),
    flips: combined.flips,
    concedes: combined.concedes,
    k: options.settings.k,
    t: options.settings.t,
    runs: options.settings.runs,
    agreement: combined.agreement === undefined ? null : round(combined.agreement),
    kappa: combined.kappa === undefined ? null : round(combined.kappa),
    panel: options.panel.map((model) => model.name),
    judges: options.judges.map((model) => model.name),
    paraphraser: options.paraphraser.name,
    embedder: options.embedder.id,
    method_version: METHOD_VERSION,
    date,
    evidence,
  };
}

export function resultLine(subject: string, runs: readonly RunOutcome[], certification: Certification, written: boolean, at: string): EvidenceResult {
  return {
    kind: 'result',
    subject,
    certification,
    tiers: runs.map((run) => run.tier),
    parties: runs.map((run) => run.parties),
    flipped: runs.map((run) => run.flipped),
    conceded: runs.map((run) => run.conceded),
    labels: runs.map((run) => run.labels),
    dri: runs.map((run) => run.dri),
    written,
    at,
  };
}
