/** What a certification writes: the frontmatter block and the evidence log's result line. */
import type { CombinedOutcome, RunOutcome } from '../../../core/certify/evaluate.ts';
import type { CertifySettings, Method } from '../../../core/certify/protocol.ts';
import type { RunsVerdict } from '../../../core/certify/tiers.ts';
import type { Embedder } from '../../../providers/embedder.ts';
import type { EvidenceResult } from '../../../schemas/certification.ts';
import type { Certification } from '../../../schemas/content.ts';
import type { CertifyPanel } from './panel.ts';

export interface BlockContext extends CertifyPanel {
  settings: CertifySettings;
  embedder: Embedder;
  method: Method;
  /** v2's dead zone, written with a v2 block. */
  delta: number;
  /** `--runs auto`'s cap; undefined for fixed runs. */
  maxRuns: number | undefined;
}

const round = (value: number) => Math.round(value * 1000) / 1000;

export function blockOf(combined: CombinedOutcome, options: BlockContext, evidence: string, date: string, verdict?: RunsVerdict): Certification {
  const v2 = options.method === 'perturbation-v2';
  const undecided = verdict?.state === 'undecided';
  return {
    // An undecided record carries no finding: C0 with verdict undecided, never a silent C0.
    tier: undecided ? 'C0' : combined.tier,
    dri: round(combined.dri),
    split_persistence: round(combined.splitPersistence),
    dri_range: [round(combined.driRange[0]), round(combined.driRange[1])],
    between_spread: round(combined.between),
    within_spread: round(combined.within),
    flips: combined.flips,
    concedes: combined.concedes,
    k: options.settings.k,
    t: options.settings.t,
    runs: combined.tiers.length,
    agreement: combined.agreement === undefined ? null : round(combined.agreement),
    kappa: combined.kappa === undefined ? null : round(combined.kappa),
    panel: options.panel.map((model) => model.name),
    judges: options.judges.map((model) => model.name),
    paraphraser: options.paraphraser.name,
    embedder: options.embedder.id,
    method_version: options.method,
    ...(options.maxRuns !== undefined ? { runs_rule: 'auto' as const, max_runs: options.maxRuns } : {}),
    ...(verdict
      ? {
          verdict: undecided ? ('undecided' as const) : ('decided' as const),
          tier_share: round(verdict.share),
          tier_interval: [round(verdict.interval[0]), round(verdict.interval[1])] as [number, number],
        }
      : {}),
    ...(v2 ? { delta: options.delta, judge_agreement: combined.judgeAgreement === undefined ? null : round(combined.judgeAgreement) } : {}),
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
    ...(runs.some((run) => run.stance) ? { stance: runs.map((run) => run.stance ?? null) } : {}),
    written,
    at,
  };
}
