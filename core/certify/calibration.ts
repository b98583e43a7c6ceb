/**
 * Calibration of a split measure on the deployment's own Atlas (issue 23, ADR 0015): how well
 * does it recover the splits the records name?
 *
 * - Pair AUC: in every record, every pair of answering voices is positive when some tension of
 *   the record names the two voices, negative otherwise; the score is the measure's split
 *   strength for the pair. AUC = P(a positive pair scores above a negative one), ties counting
 *   half (Mann–Whitney), pooled over records.
 * - Side accuracy: for every tension whose two voices answered, whether the measure puts claim A
 *   with voice A's answer and claim B with voice B's.
 * Intervals: percentile bootstrap, resampling records with replacement. Records fall into a
 * tuning half and a held-out half by a hash of their id, so a threshold fitted on one half is
 * reported on the other. Pure: scores in, figures out.
 */
import { fnv1a } from '../random.ts';
import { cosineDistance, type Vector } from './spread.ts';
import { mean, sideMargin, sideStrength, type EmbeddedAnswer, type Side } from './stance.ts';

export interface CalibrationTension {
  voiceA: string;
  voiceB: string;
  claimA: Vector;
  claimB: Vector;
}

/** One record as a measure sees it: one embedded answer per voice, its named tensions. */
export interface CalibrationInput {
  id: string;
  answers: ReadonlyMap<string, EmbeddedAnswer>;
  tensions: readonly CalibrationTension[];
}

/** One record as the statistics see it, whatever the measure. */
export interface ScoredRecord {
  id: string;
  /** Every pair of answering voices: its split strength and whether a tension names it. */
  pairs: { a: string; b: string; score: number; named: boolean }[];
  /** Per tension with both voices answering: claims placed with their voices (true), or not. */
  sides: boolean[];
}

export const pairKey = (a: string, b: string) => (a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`);

function pairsOf(input: Pick<CalibrationInput, 'answers' | 'tensions'>, score: (a: string, b: string) => number): ScoredRecord['pairs'] {
  const voices = [...input.answers.keys()].sort();
  const named = new Set(input.tensions.map((tension) => pairKey(tension.voiceA, tension.voiceB)));
  const pairs: ScoredRecord['pairs'] = [];
  for (let i = 0; i < voices.length; i++) {
    for (let j = i + 1; j < voices.length; j++) {
      pairs.push({ a: voices[i]!, b: voices[j]!, score: score(voices[i]!, voices[j]!), named: named.has(pairKey(voices[i]!, voices[j]!)) });
    }
  }
  return pairs;
}

const answered = (input: CalibrationInput) => input.tensions.filter((t) => input.answers.has(t.voiceA) && input.answers.has(t.voiceB));

/**
 * perturbation-v1, as v1 measures: the pair score is the cosine distance between the two whole
 * answers' embeddings; side accuracy asks the same whole-answer vectors which claim is nearer
 * (claims placed right when sim(A, a) + sim(B, b) > sim(A, b) + sim(B, a)).
 */
export function scoreV1(input: CalibrationInput): ScoredRecord {
  const whole = (voice: string) => input.answers.get(voice)!.whole;
  const similarity = (x: Vector, y: Vector) => 1 - cosineDistance(x, y);
  return {
    id: input.id,
    pairs: pairsOf(input, (a, b) => cosineDistance(whole(a), whole(b))),
    sides: answered(input).map((t) => {
      const a = whole(t.voiceA);
      const b = whole(t.voiceB);
      return similarity(a, t.claimA) + similarity(b, t.claimB) > similarity(b, t.claimA) + similarity(a, t.claimB);
    }),
  };
}

/** Each voice's signed side strength on each tension of the record (core/certify/stance.ts). */
export function sideStrengths(input: CalibrationInput): Map<string, number>[] {
  return input.tensions.map((tension) => {
    const raw = new Map([...input.answers].map(([voice, answer]) => [voice, sideMargin(answer.sentences, tension.claimA, tension.claimB)]));
    const centre = mean([...raw.values()]);
    return new Map([...raw].map(([voice, margin]) => [voice, sideStrength(margin, centre)]));
  });
}

/** Each voice's raw margin on each tension (side accuracy compares these, threshold-free). */
function rawMargins(input: CalibrationInput): Map<string, number>[] {
  return input.tensions.map(
    (tension) => new Map([...input.answers].map(([voice, answer]) => [voice, sideMargin(answer.sentences, tension.claimA, tension.claimB)])),
  );
}

/**
 * perturbation-v2: the pair score is the largest δ at which v2 would put the two voices on
 * opposite sides of some named tension — max over tensions of min(s_a, −s_b) or min(s_b, −s_a)
 * for side strengths s; side accuracy asks whether voice A's answer leans further to claim A
 * than voice B's does (m_A > m_B), by each answer's best-matching sentence.
 */
export function scoreV2(input: CalibrationInput): ScoredRecord {
  const strengths = sideStrengths(input);
  const margins = rawMargins(input);
  const opposed = (a: string, b: string) => {
    let best = -Infinity;
    for (const byVoice of strengths) {
      const ma = byVoice.get(a)!;
      const mb = byVoice.get(b)!;
      best = Math.max(best, Math.min(ma, -mb), Math.min(mb, -ma));
    }
    return best === -Infinity ? 0 : best;
  };
  return {
    id: input.id,
    pairs: pairsOf(input, opposed),
    sides: input.tensions.flatMap((tension, index) =>
      input.answers.has(tension.voiceA) && input.answers.has(tension.voiceB)
        ? [margins[index]!.get(tension.voiceA)! > margins[index]!.get(tension.voiceB)!]
        : [],
    ),
  };
}

/** What judges said of each (tension, voice): which claim the voice's answer supports. */
export type JudgedSides = readonly ReadonlyMap<string, Side | 'both'>[];

/**
 * Judges as a stance instrument: the pair score is the share of the record's tensions on which
 * the judges put the two voices on opposite claims; a tension's claims are placed right when
 * voice A's answer is judged to support A and voice B's to support B.
 */
export function scoreJudges(input: Pick<CalibrationInput, 'id' | 'answers' | 'tensions'>, judged: JudgedSides): ScoredRecord {
  const opposite = (a: string, b: string) => {
    if (judged.length === 0) return 0;
    let count = 0;
    for (const byVoice of judged) {
      const sa = byVoice.get(a);
      const sb = byVoice.get(b);
      if ((sa === 'A' && sb === 'B') || (sa === 'B' && sb === 'A')) count++;
    }
    return count / judged.length;
  };
  return {
    id: input.id,
    pairs: pairsOf(input, opposite),
    sides: input.tensions.flatMap((tension, index) =>
      input.answers.has(tension.voiceA) && input.answers.has(tension.voiceB)
        ? [judged[index]?.get(tension.voiceA) === 'A' && judged[index]?.get(tension.voiceB) === 'B']
        : [],
    ),
  };
}

/** Mann–Whitney AUC of named pairs over unnamed ones; undefined without both kinds. */
export function pairAuc(records: readonly ScoredRecord[]): number | undefined {
  const positives: number[] = [];
  const negatives: number[] = [];
  for (const record of records) for (const pair of record.pairs) (pair.named ? positives : negatives).push(pair.score);
  if (positives.length === 0 || negatives.length === 0) return undefined;
  // Rank-sum form: O(n log n), ties share the mean rank.
  const all = [...positives.map((score) => ({ score, positive: true })), ...negatives.map((score) => ({ score, positive: false }))].sort(
    (x, y) => x.score - y.score,
  );
  let rankSum = 0;
  for (let i = 0; i < all.length;) {
    let j = i;
    while (j + 1 < all.length && all[j + 1]!.score === all[i]!.score) j++;
    const rank = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) if (all[k]!.positive) rankSum += rank;
    i = j + 1;
  }
  const p = positives.length;
  return (rankSum - (p * (p + 1)) / 2) / (p * negatives.length);
}

export function sideAccuracy(records: readonly ScoredRecord[]): number | undefined {
  const sides = records.flatMap((record) => record.sides);
  return sides.length === 0 ? undefined : sides.filter(Boolean).length / sides.length;
}

/** Percentile bootstrap interval of a statistic over records resampled with replacement. */
export function bootstrapInterval(
  records: readonly ScoredRecord[],
  statistic: (sample: readonly ScoredRecord[]) => number | undefined,
  resamples: number,
  random: () => number,
  level = 0.95,
): [number, number] | undefined {
  if (records.length === 0) return undefined;
  const values: number[] = [];
  for (let r = 0; r < resamples; r++) {
    const sample = Array.from({ length: records.length }, () => records[Math.floor(random() * records.length)]!);
    const value = statistic(sample);
    if (value !== undefined) values.push(value);
  }
  if (values.length === 0) return undefined;
  values.sort((a, b) => a - b);
  const at = (q: number) => values[Math.min(values.length - 1, Math.max(0, Math.floor(q * values.length)))]!;
  return [at((1 - level) / 2), at(1 - (1 - level) / 2)];
}

export interface Figure {
  value: number | null;
  /** 95 % bootstrap interval over records. */
  interval: [number, number] | null;
  tune: number | null;
  held_out: number | null;
}

export interface MethodCalibration {
  pair_auc: Figure;
  side_accuracy: Figure;
  records: number;
  tensions: number;
  pairs: { named: number; unnamed: number };
}

export type Half = 'tune' | 'held_out';

/** FNV-1a of the id: which half a record falls in, the same on every machine and run. */
export function halfOf(id: string): Half {
  return fnv1a(id) % 2 === 0 ? 'tune' : 'held_out';
}

const round = (value: number | undefined) => (value === undefined ? null : Math.round(value * 1000) / 1000);

function figure(
  records: readonly ScoredRecord[],
  statistic: (sample: readonly ScoredRecord[]) => number | undefined,
  resamples: number,
  random: () => number,
): Figure {
  const interval = bootstrapInterval(records, statistic, resamples, random);
  return {
    value: round(statistic(records)),
    interval: interval ? [round(interval[0])!, round(interval[1])!] : null,
    tune: round(statistic(records.filter((record) => halfOf(record.id) === 'tune'))),
    held_out: round(statistic(records.filter((record) => halfOf(record.id) === 'held_out'))),
  };
}

export function calibrate(records: readonly ScoredRecord[], options: { resamples: number; random: () => number }): MethodCalibration {
  const pairs = records.flatMap((record) => record.pairs);
  return {
    pair_auc: figure(records, pairAuc, options.resamples, options.random),
    side_accuracy: figure(records, sideAccuracy, options.resamples, options.random),
    records: records.length,
    tensions: records.reduce((sum, record) => sum + record.sides.length, 0),
    pairs: { named: pairs.filter((pair) => pair.named).length, unnamed: pairs.filter((pair) => !pair.named).length },
  };
}

/**
 * δ, v2's dead zone: the smallest centred margin at which, on the tuning half, the named voices'
 * answers that clear it stand on their named side with at least `precision` (voice A's answer
 * on A, voice B's on B). Reported with its precision and coverage (share of those answers that
 * clear it) on both halves. Undefined when no margin reaches the precision.
 */
export interface MarginCalibration {
  delta: number | null;
  precision_target: number;
  tune: { precision: number | null; coverage: number | null };
  held_out: { precision: number | null; coverage: number | null };
}

/** Named voices' side strengths, signed so that positive is their named side. */
export function ownSideMargins(input: CalibrationInput): number[] {
  const margins = sideStrengths(input);
  return input.tensions.flatMap((tension, index) => {
    const byVoice = margins[index]!;
    const out: number[] = [];
    if (byVoice.has(tension.voiceA)) out.push(byVoice.get(tension.voiceA)!);
    if (byVoice.has(tension.voiceB)) out.push(-byVoice.get(tension.voiceB)!);
    return out;
  });
}

function precisionCoverage(margins: readonly number[], delta: number) {
  const decided = margins.filter((margin) => margin !== 0 && Math.abs(margin) >= delta);
  return {
    precision: decided.length === 0 ? null : round(decided.filter((margin) => margin > 0).length / decided.length),
    coverage: margins.length === 0 ? null : round(decided.length / margins.length),
  };
}

export function calibrateMargin(inputs: readonly CalibrationInput[], precisionTarget: number): MarginCalibration {
  const tune = inputs.filter((input) => halfOf(input.id) === 'tune').flatMap(ownSideMargins);
  const held = inputs.filter((input) => halfOf(input.id) === 'held_out').flatMap(ownSideMargins);
  // 0 first: when every answer already stands on its named side, no dead zone is needed.
  const candidates = [...new Set([0, ...tune.map((margin) => Math.abs(margin))])].sort((a, b) => a - b);
  // Need a few decided answers, or one lucky answer would set δ.
  const minimum = Math.max(5, Math.ceil(tune.length * 0.05));
  const delta = candidates.find((candidate) => {
    const decided = tune.filter((margin) => margin !== 0 && Math.abs(margin) >= candidate);
    return decided.length >= minimum && decided.filter((margin) => margin > 0).length / decided.length >= precisionTarget;
  });
  if (delta === undefined)
    return { delta: null, precision_target: precisionTarget, tune: { precision: null, coverage: null }, held_out: { precision: null, coverage: null } };
  return { delta: round(delta)!, precision_target: precisionTarget, tune: precisionCoverage(tune, delta), held_out: precisionCoverage(held, delta) };
}
