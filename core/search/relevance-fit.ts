/**
 * Fitting calibrated relevance (relevance.ts) on judged questions: the logistic model from
 * judged pairs, then the floors and the signal thresholds from whole questions. Pure: the
 * calibration command (scripts/lib/relevance-calibration.ts) gathers the candidates.
 */
import type { RelevanceModel } from './relevance.ts';

export interface JudgedPair {
  cosine: number;
  coverage: number;
  /** 1: a record the judged question expects; 0: a record retrieved for a question the corpus does not cover. */
  label: 0 | 1;
}

export type Family = 'answers' | 'off_corpus' | 'contested';

/** One judged question and what retrieval found for it, before any relevance floor. */
export interface JudgedCandidates {
  family: Family;
  expect: readonly string[];
  candidates: readonly { id: string; atlas: boolean; relevance: number }[];
}

export type Coefficients = Pick<RelevanceModel, 'intercept' | 'cosine' | 'coverage'>;

/**
 * Logistic regression of the label on cosine and coverage by Newton's method, the two classes
 * weighted to count the same (so 0.5 is the equal-odds point whatever the set's proportions),
 * with a small ridge on the two slopes so a set both features separate still gives finite ones.
 */
export function fitLogistic(pairs: readonly JudgedPair[], ridge = 1e-3): Coefficients {
  const positives = pairs.filter((pair) => pair.label === 1).length;
  const negatives = pairs.length - positives;
  if (positives === 0 || negatives === 0) throw new Error('fitting relevance needs judged pairs of both kinds');
  const weightOf = (label: 0 | 1) => (label === 1 ? pairs.length / (2 * positives) : pairs.length / (2 * negatives));
  let beta = [0, 0, 0];
  for (let iteration = 0; iteration < 100; iteration++) {
    const gradient = [0, ridge * beta[1]!, ridge * beta[2]!];
    const hessian = [
      [1e-9, 0, 0],
      [0, ridge, 0],
      [0, 0, ridge],
    ];
    for (const pair of pairs) {
      const x = [1, pair.cosine, pair.coverage];
      const p = 1 / (1 + Math.exp(-(beta[0]! + beta[1]! * x[1]! + beta[2]! * x[2]!)));
      const w = weightOf(pair.label);
      for (let i = 0; i < 3; i++) {
        gradient[i] = gradient[i]! + w * (p - pair.label) * x[i]!;
        for (let j = 0; j < 3; j++) hessian[i]![j] = hessian[i]![j]! + w * p * (1 - p) * x[i]! * x[j]!;
      }
    }
    const step = solve3(hessian, gradient);
    beta = beta.map((value, i) => value - step[i]!);
    if (Math.max(...step.map(Math.abs)) < 1e-10) break;
  }
  return { intercept: beta[0]!, cosine: beta[1]!, coverage: beta[2]! };
}

/** Solves the 3×3 system a·x = b by Gaussian elimination with partial pivoting. */
function solve3(a: number[][], b: number[]): number[] {
  const m = a.map((row, i) => [...row, b[i]!]);
  for (let col = 0; col < 3; col++) {
    let pivot = col;
    for (let row = col + 1; row < 3; row++) if (Math.abs(m[row]![col]!) > Math.abs(m[pivot]![col]!)) pivot = row;
    [m[col], m[pivot]] = [m[pivot]!, m[col]!];
    for (let row = col + 1; row < 3; row++) {
      const factor = m[row]![col]! / m[col]![col]!;
      for (let k = col; k < 4; k++) m[row]![k] = m[row]![k]! - factor * m[col]![k]!;
    }
  }
  const x = [0, 0, 0];
  for (let row = 2; row >= 0; row--) {
    let sum = m[row]![3]!;
    for (let k = row + 1; k < 3; k++) sum -= m[row]![k]! * x[k]!;
    x[row] = sum / m[row]![row]!;
  }
  return x;
}

/** The value `share` of the sorted values lie at or below (nearest rank). */
export function quantile(values: readonly number[], share: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))]!;
}

/** What each family asks of the floors, as the share of its questions that get it. */
export interface FloorOutcome {
  /** Questions the corpus answers whose expected work stays above the floor. */
  answersKept: number;
  /** Contested questions whose Atlas record stays above both floors. */
  contestedKept: number;
  /** Questions off the corpus with no record above the floor (no_context). */
  offCorpusEmpty: number;
  /** Questions off the corpus with no Atlas record above both floors. */
  offCorpusNoAtlas: number;
  /** Questions the corpus answers with no Atlas record above both floors. */
  answersNoAtlas: number;
}

export function floorOutcome(questions: readonly JudgedCandidates[], relevant: number, atlas: number): FloorOutcome {
  const share = (family: Family, test: (question: JudgedCandidates) => boolean) => {
    const members = questions.filter((question) => question.family === family);
    return members.length === 0 ? 1 : members.filter(test).length / members.length;
  };
  const atlasBar = Math.max(relevant, atlas);
  const kept = (question: JudgedCandidates, bar: number) => question.candidates.some((hit) => question.expect.includes(hit.id) && hit.relevance >= bar);
  const noAtlas = (question: JudgedCandidates) => !question.candidates.some((hit) => hit.atlas && hit.relevance >= atlasBar);
  return {
    answersKept: share('answers', (question) => kept(question, relevant)),
    contestedKept: share('contested', (question) => kept(question, atlasBar)),
    offCorpusEmpty: share('off_corpus', (question) => !question.candidates.some((hit) => hit.relevance >= relevant)),
    offCorpusNoAtlas: share('off_corpus', noAtlas),
    answersNoAtlas: share('answers', noAtlas),
  };
}

const GRID = Array.from({ length: 91 }, (_, i) => Math.round((0.05 + i * 0.01) * 100) / 100);

/**
 * The middle of the widest run of grid values that score best: a floor inside a plateau moves
 * no judged question when it is nudged, where the plateau's edge would.
 */
function middleOfBest(score: (value: number) => number, grid: readonly number[]): number {
  const scores = grid.map(score);
  const best = Math.max(...scores);
  let run: number[] = [];
  let widest: number[] = [];
  grid.forEach((value, i) => {
    if (Math.abs(scores[i]! - best) < 1e-12) run.push(value);
    else run = [];
    if (run.length > widest.length) widest = [...run];
  });
  return widest[Math.floor((widest.length - 1) / 2)]!;
}

/**
 * Floors chosen on judged questions. The relevance floor balances the works kept for
 * questions the corpus answers (and Atlas records for contested ones) against no_context for
 * questions off the corpus, each family weighing the same. The Atlas floor, never below it,
 * balances contested questions keeping their record against Atlas records shown to questions
 * off the corpus or answered by works.
 */
export function fitFloors(questions: readonly JudgedCandidates[]): RelevanceModel['floors'] {
  const relevant = middleOfBest((floor) => {
    const outcome = floorOutcome(questions, floor, floor);
    return (outcome.answersKept + outcome.contestedKept + outcome.offCorpusEmpty) / 3;
  }, GRID);
  // No Atlas record for a question off the corpus is a requirement, not one aim among others:
  // the lowest floor that meets it on the judged questions, then the best balance above it.
  const clean = GRID.filter((value) => value >= relevant && floorOutcome(questions, relevant, value).offCorpusNoAtlas === 1);
  const atlas = middleOfBest(
    (floor) => {
      const outcome = floorOutcome(questions, relevant, floor);
      return (outcome.contestedKept + outcome.answersNoAtlas) / 2;
    },
    clean.length > 0 ? clean.slice(0, 1) : [GRID[GRID.length - 1]!],
  );
  return { relevant, atlas };
}

/** A signal counts when it is above what 90 % of the judged irrelevant pairs reach on it. */
export function fitSignals(pairs: readonly JudgedPair[]): RelevanceModel['signals'] {
  const negatives = pairs.filter((pair) => pair.label === 0);
  return {
    cosine: round(
      quantile(
        negatives.map((pair) => pair.cosine),
        0.9,
      ),
    ),
    coverage: round(
      quantile(
        negatives.map((pair) => pair.coverage),
        0.9,
      ),
    ),
  };
}

function round(value: number): number {
  return Math.round(value * 10000) / 10000;
}
