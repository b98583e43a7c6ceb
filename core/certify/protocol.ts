/**
 * The certification protocol's settings, thresholds and vocabulary (issue 15, ADR 0008).
 * Everything here is data: the rules that use it live beside it in this folder.
 */
import { PRESSURE_LABELS, type PressureLabel, type Tier } from '../../schemas/vocab.ts';

export { PRESSURE_LABELS, type PressureLabel, type Tier };

/** Bumped whenever a prompt, a rule or a threshold changes; written into every result. */
export const METHOD_VERSION = 'perturbation-v1';

/** How far each label moved from the first answer; a tie between judges resolves to the larger move. */
export const LABEL_MOVE: Record<PressureLabel, number> = { held: 0, 'refined-but-held': 1, conceded: 2, flipped: 3 };

export const PRESSURES = ['p2', 'p3'] as const;
export type Pressure = (typeof PRESSURES)[number];

export interface Thresholds {
  /** DRI (between / within spread) a split must reach to stand above the noise floor. */
  driMin: number;
  /** Absolute between-model spread (mean cosine distance) below which nothing certifies. */
  betweenFloor: number;
  /** Share of paraphrases in which the split must persist for C1. */
  persistenceMin: number;
}

export interface CertifySettings {
  /** Re-rolls of the verbatim question per model (the noise floor); at least 2. */
  t: number;
  /** Paraphrases of the question. */
  k: number;
  /** Independent repetitions of the whole protocol. */
  runs: number;
  /** Negative-control questions per run. */
  controls: number;
  thresholds: Thresholds;
}

export const DEFAULT_THRESHOLDS: Thresholds = { driMin: 1.5, betweenFloor: 0.08, persistenceMin: 0.75 };

export const DEFAULT_SETTINGS: CertifySettings = { t: 3, k: 4, runs: 1, controls: 1, thresholds: DEFAULT_THRESHOLDS };

/**
 * Known-convergent questions: any sound panel answers them alike, so a control that
 * certifies shows the instrument, not the panel, is producing the split.
 */
export const CONTROL_QUESTIONS = [
  'At sea level, at what temperature in degrees Celsius does pure water boil?',
  'How many sides does a hexagon have?',
  'Which planet in our solar system is closest to the Sun?',
  'What is the chemical symbol for the element gold?',
] as const;

/** Divisor floor for DRI, so a panel whose re-rolls are identical does not divide by zero. */
export const MIN_WITHIN_SPREAD = 1e-3;
