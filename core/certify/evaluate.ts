/** One run's evidence → its tier; several runs → the certification a record carries. */
import { fleissKappa } from './kappa.ts';
import { aggregatePressure } from './labels.ts';
import type { Pressure, PressureLabel, Thresholds, Tier } from './protocol.ts';
import { controlSpread, paraphraseDrift, splitParties, splitPersistence, type Vector } from './spread.ts';
import type { StanceOutcome } from './stance.ts';
import { consensusTier, runAgreement, tierOf } from './tiers.ts';

export interface RunEvidence {
  /** Control re-roll vectors per model. */
  rerolls: Record<string, readonly Vector[]>;
  /** `paraphraseAnswers[j][model]`: the vector of model's answer to paraphrase j. */
  paraphraseAnswers: readonly Record<string, Vector>[];
  /** Judge votes per model per pressure, one per judge in a fixed judge order. */
  votes: Record<string, Partial<Record<Pressure, readonly PressureLabel[]>>>;
}

export interface RunOutcome {
  tier: Tier;
  dri: number;
  between: number;
  within: number;
  splitPersistence: number;
  parties: string[];
  flipped: string[];
  conceded: string[];
  labels: Record<string, Partial<Record<Pressure, PressureLabel>>>;
  /** Fleiss' kappa over every (model, pressure) item that all judges labelled. */
  kappa: number | undefined;
  /** Per model: mean distance of paraphrase answers from its own control centroid. */
  paraphraseDrift: Record<string, number>;
  /** perturbation-v2 only: each named tension's reading, measured moves, the judges' cross-reading. */
  stance?: StanceOutcome;
}

export function evaluateRun(evidence: RunEvidence, thresholds: Thresholds): RunOutcome {
  const spread = controlSpread(evidence.rerolls);
  const parties = splitParties(spread, thresholds);
  const persistence = splitPersistence(evidence.paraphraseAnswers, spread.within, thresholds);
  const pressure = aggregatePressure(evidence.votes, parties);
  const pressureComplete = parties.every((model) => pressure.labels[model]?.p2 !== undefined && pressure.labels[model]?.p3 !== undefined);
  const tier = tierOf(
    {
      dri: spread.dri,
      between: spread.between,
      splitPersistence: persistence,
      parties,
      flipped: pressure.flipped,
      conceded: pressure.conceded,
      pressureComplete,
    },
    thresholds,
  );
  const rows = Object.values(evidence.votes).flatMap((byPressure) =>
    Object.values(byPressure).filter((row): row is readonly PressureLabel[] => row !== undefined),
  );
  const judges = Math.max(0, ...rows.map((row) => row.length));
  return {
    tier,
    dri: spread.dri,
    between: spread.between,
    within: spread.within,
    splitPersistence: persistence,
    parties,
    flipped: pressure.flipped,
    conceded: pressure.conceded,
    labels: pressure.labels,
    kappa: fleissKappa(rows.filter((row) => row.length === judges)),
    paraphraseDrift: paraphraseDrift(evidence.paraphraseAnswers, spread.centroids),
  };
}

export interface CombinedOutcome {
  tier: Tier;
  tiers: Tier[];
  /** Median over runs. */
  dri: number;
  driRange: [number, number];
  splitPersistence: number;
  between: number;
  within: number;
  /** The largest count over runs (the cautious reading). */
  flips: number;
  concedes: number;
  agreement: number | undefined;
  kappa: number | undefined;
  /** perturbation-v2: median over runs with judges of the share of moves on which the judges agreed with the measure. */
  judgeAgreement: number | undefined;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function combineRuns(runs: readonly RunOutcome[]): CombinedOutcome {
  if (runs.length === 0) throw new Error('combineRuns needs at least one run');
  const tiers = runs.map((run) => run.tier);
  const dris = runs.map((run) => run.dri);
  const kappas = runs.map((run) => run.kappa).filter((kappa): kappa is number => kappa !== undefined);
  const agreements = runs.flatMap((run) => (run.stance?.judge_agreement == null ? [] : [run.stance.judge_agreement]));
  return {
    tier: consensusTier(tiers),
    tiers,
    dri: median(dris),
    driRange: [Math.min(...dris), Math.max(...dris)],
    splitPersistence: median(runs.map((run) => run.splitPersistence)),
    between: median(runs.map((run) => run.between)),
    within: median(runs.map((run) => run.within)),
    flips: Math.max(...runs.map((run) => run.flipped.length)),
    concedes: Math.max(...runs.map((run) => run.conceded.length)),
    agreement: runAgreement(tiers),
    kappa: kappas.length === 0 ? undefined : median(kappas),
    judgeAgreement: agreements.length === 0 ? undefined : median(agreements),
  };
}
