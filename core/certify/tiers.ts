/**
 * The tier rules of spec §2.2, exactly:
 *   C1 paraphrase-robust: the split persists across rewordings, above the noise floor (DRI);
 *   C2 pressure-robust: no model party to the split flips and at most one concedes under P2 + P3;
 *   C3 both; otherwise C0.
 * A panel that does not split has no parties, so there is nothing to be robust: no C2.
 */
import type { Thresholds, Tier } from './protocol.ts';

export interface TierEvidence {
  dri: number;
  between: number;
  splitPersistence: number;
  /** Models party to the split (empty when the panel converges). */
  parties: readonly string[];
  flipped: readonly string[];
  conceded: readonly string[];
  /** False when some party's P2 or P3 label could not be decided (no judge answered usably). */
  pressureComplete: boolean;
}

export function isParaphraseRobust(evidence: TierEvidence, thresholds: Thresholds): boolean {
  return evidence.between >= thresholds.betweenFloor && evidence.dri >= thresholds.driMin && evidence.splitPersistence >= thresholds.persistenceMin;
}

export function isPressureRobust(evidence: TierEvidence): boolean {
  return evidence.parties.length >= 2 && evidence.pressureComplete && evidence.flipped.length === 0 && evidence.conceded.length <= 1;
}

export function tierOf(evidence: TierEvidence, thresholds: Thresholds): Tier {
  const c1 = isParaphraseRobust(evidence, thresholds);
  const c2 = isPressureRobust(evidence);
  if (c1 && c2) return 'C3';
  if (c1) return 'C1';
  if (c2) return 'C2';
  return 'C0';
}

const RANK: Record<Tier, number> = { C0: 0, C1: 1, C2: 1, C3: 2 };

/**
 * The tier a set of independent runs supports: the most common; a tie goes to the lower
 * tier (C1 and C2 tied with each other fall to C0, as neither is supported by a majority).
 */
export function consensusTier(tiers: readonly Tier[]): Tier {
  if (tiers.length === 0) return 'C0';
  const counts = new Map<Tier, number>();
  for (const tier of tiers) counts.set(tier, (counts.get(tier) ?? 0) + 1);
  const top = Math.max(...counts.values());
  const leaders = [...counts.entries()].filter(([, count]) => count === top).map(([tier]) => tier);
  if (leaders.length === 1) return leaders[0]!;
  const lowest = Math.min(...leaders.map((tier) => RANK[tier]));
  const atLowest = leaders.filter((tier) => RANK[tier] === lowest);
  return atLowest.length === 1 ? atLowest[0]! : 'C0';
}

/** Share of run pairs that reached the same tier; undefined for a single run. */
export function runAgreement(tiers: readonly Tier[]): number | undefined {
  if (tiers.length < 2) return undefined;
  let same = 0;
  let pairs = 0;
  for (let i = 0; i < tiers.length; i++) {
    for (let j = i + 1; j < tiers.length; j++) {
      pairs++;
      if (tiers[i] === tiers[j]) same++;
    }
  }
  return same / pairs;
}

export interface ControlVerdict {
  broken: boolean;
  /** The controls that certified, with the tier each reached. */
  certified: { subject: string; tier: Tier }[];
}

/** A known-convergent control that reaches any tier above C0 means the instrument is broken. */
export function negativeControlVerdict(controls: readonly { subject: string; tier: Tier }[]): ControlVerdict {
  const certified = controls.filter((control) => control.tier !== 'C0');
  return { broken: certified.length > 0, certified };
}

/** Wilson score interval (95 %) of a share k/n. */
export function wilsonInterval(k: number, n: number, z = 1.96): [number, number] {
  if (n === 0) return [0, 1];
  const p = k / n;
  const denominator = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / denominator;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

export interface RunsVerdict {
  /** 'decided': the modal tier cannot be overturned; 'undecided': the cap came first; 'continue': run again. */
  state: 'decided' | 'undecided' | 'continue';
  /** The modal tier so far (the lower on a tie). */
  tier: Tier;
  /** Runs that reached the modal tier, of all runs so far, and its 95 % Wilson interval. */
  share: number;
  interval: [number, number];
}

/**
 * `--runs auto`'s stopping rule (ADR 0015): after each run, the record is decided as soon as its
 * modal tier leads every other tier by more runs than remain before the cap (so no remaining
 * run could overturn it); at the cap, a record whose modal tier does not lead strictly is
 * undecided. Never silently C0: an undecided record says so, with its interval.
 */
export function runsVerdict(tiers: readonly Tier[], maxRuns: number): RunsVerdict {
  const counts = new Map<Tier, number>();
  for (const tier of tiers) counts.set(tier, (counts.get(tier) ?? 0) + 1);
  const sorted = [...counts.values()].sort((a, b) => b - a);
  const top = sorted[0] ?? 0;
  const second = sorted[1] ?? 0;
  const tier = consensusTier(tiers);
  const share = tiers.length === 0 ? 0 : (counts.get(tier) ?? 0) / tiers.length;
  const interval = wilsonInterval(counts.get(tier) ?? 0, tiers.length);
  const remaining = Math.max(0, maxRuns - tiers.length);
  if (tiers.length > 0 && top > second + remaining) return { state: 'decided', tier, share, interval };
  if (remaining === 0) return { state: 'undecided', tier, share, interval };
  return { state: 'continue', tier, share, interval };
}
