/**
 * The certification protocol's settings, thresholds and vocabulary (issue 15, ADR 0008).
 * Everything here is data: the rules that use it live beside it in this folder.
 */
import { PRESSURE_LABELS, type PressureLabel, type Tier } from '../../schemas/vocab.ts';

export { PRESSURE_LABELS, type PressureLabel, type Tier };

/** Bumped whenever a prompt, a rule or a threshold changes; written into every result. */
export const METHOD_VERSION = 'perturbation-v1';
// (perturbation-v1 is kept readable and runnable; METHODS below lists both, DEFAULT_METHOD the newest.)

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

/** The methods a deployment can certify with; the default is the newest. */
export const METHODS = ['perturbation-v1', 'perturbation-v2'] as const;
export type Method = (typeof METHODS)[number];
export const DEFAULT_METHOD: Method = 'perturbation-v2';

/**
 * v2's dead zone δ when the Atlas has no calibration of its own: the value fitted on the tuning
 * half of the imported Omnarai Atlas (USE-lite, precision target 0.9; ADR 0015). A deployment's
 * `npm run certify -- --calibrate` replaces it with its own.
 */
export const DEFAULT_DELTA = 0.014;

/** Precision at which δ is fitted: named voices' answers beyond δ stand on their named side this often. */
export const MARGIN_PRECISION_TARGET = 0.9;

/**
 * The calibration a method must reach on this Atlas before `--write` writes its tiers: the low
 * end of the 95 % interval of pair AUC and of side accuracy (ADR 0015 says why these values).
 */
export interface CalibrationFloor {
  pair_auc: number;
  side_accuracy: number;
}
export const DEFAULT_FLOOR: CalibrationFloor = { pair_auc: 0.55, side_accuracy: 0.8 };

/**
 * A decoy split for each control question: the true claim given to the first panel model, a
 * false one to the second. A sound instrument finds both on the true side, so no split.
 */
export const CONTROL_CLAIMS: Record<(typeof CONTROL_QUESTIONS)[number], { true: string; false: string }> = {
  'At sea level, at what temperature in degrees Celsius does pure water boil?': {
    true: 'Pure water boils at 100 degrees Celsius at sea level.',
    false: 'Pure water boils at 80 degrees Celsius at sea level.',
  },
  'How many sides does a hexagon have?': { true: 'A hexagon has six sides.', false: 'A hexagon has eight sides.' },
  'Which planet in our solar system is closest to the Sun?': {
    true: 'Mercury is the planet closest to the Sun.',
    false: 'Mars is the planet closest to the Sun.',
  },
  'What is the chemical symbol for the element gold?': { true: 'The chemical symbol for gold is Au.', false: 'The chemical symbol for gold is Ag.' },
};

/** `--runs auto`: the most runs a boundary record may take before it is reported undecided. */
export const DEFAULT_MAX_RUNS = 5;
