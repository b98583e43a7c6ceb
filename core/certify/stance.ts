/**
 * Stance on a named split (perturbation-v2, ADR 0015): where an answer stands between the two
 * claims of a tension. Whole-answer distance measures topic; matching the answer's sentences
 * against each claim measures which claim it holds. Pure: vectors in, numbers out.
 *
 *   support(answer, claim) = the highest cosine similarity between any sentence of the answer
 *                            and the claim (vectors L2-normalised, so a dot product);
 *   margin(answer)         = support(answer, claim A) − support(answer, claim B);
 *   centred margin         = margin − the mean margin of the panel's answers to the same
 *                            question (the control re-rolls; on the Atlas, the record's answers),
 *                            so a claim that shares more words with every answer does not
 *                            pull them all to its side.
 * An answer holds side A when both its margin and its centred margin are at least δ, side B when
 * both are at most −δ, and neither otherwise (sideStrength). δ is calibrated on the deployment's
 * own Atlas (core/certify/calibration.ts).
 */
import type { Pressure, PressureLabel } from './protocol.ts';
import type { Vector } from './spread.ts';

export type Side = 'A' | 'B' | 'neither';

/** Fewer words than this is a heading, a list marker or a fragment, not a sentence that can hold a claim. */
const MIN_SENTENCE_WORDS = 4;

/**
 * The sentences of an answer: split at line breaks and at sentence ends followed by a capital,
 * with markdown list and heading markers and emphasis stripped. An answer with no sentence of
 * four words or more counts as one sentence, itself.
 */
export function answerSentences(text: string): string[] {
  const parts = text
    .replace(/\r/g, '')
    .split(/\n+|(?<=[.!?])\s+(?=[\p{Lu}"'*([])/u)
    .map((part) =>
      part
        .replace(/^[\s>*#\-\d.)]+/, '')
        .replace(/[*_`]/g, '')
        .trim(),
    )
    .filter((part) => part.split(/\s+/).length >= MIN_SENTENCE_WORDS);
  const whole = text.trim();
  return parts.length > 0 ? parts : whole === '' ? [] : [whole];
}

function dot(a: Vector, b: Vector): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}

/** The best match of the claim among the answer's sentences; 0 for an answer with no sentence. */
export function claimSupport(sentences: readonly Vector[], claim: Vector): number {
  let best = -Infinity;
  for (const sentence of sentences) best = Math.max(best, dot(sentence, claim));
  return best === -Infinity ? 0 : best;
}

/** How much more the answer supports claim A than claim B (uncentred). */
export function sideMargin(sentences: readonly Vector[], claimA: Vector, claimB: Vector): number {
  return claimSupport(sentences, claimA) - claimSupport(sentences, claimB);
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}

/**
 * The signed strength of an answer's side: positive toward A, negative toward B, 0 when its own
 * margin and its margin against the panel's centre disagree. Both must agree: the raw margin alone
 * is pulled by a claim's wording (a claim sharing the question's words wins everywhere), the
 * centred one alone reads the least-A answer of a panel that all holds A as B.
 */
export function sideStrength(margin: number, centre: number): number {
  const centred = margin - centre;
  if (margin > 0 && centred > 0) return Math.min(margin, centred);
  if (margin < 0 && centred < 0) return Math.max(margin, centred);
  return 0;
}

/** The side an answer stands on: its strength at least δ toward one claim; δ is the dead zone. */
export function sideOf(strength: number, delta: number): Side {
  if (strength > 0 && strength >= delta) return 'A';
  if (strength < 0 && -strength >= delta) return 'B';
  return 'neither';
}

export const opposite = (side: Side): Side => (side === 'A' ? 'B' : side === 'B' ? 'A' : 'neither');

/** An answer embedded for stance: its sentences' vectors and, for v1's distance, the whole answer's. */
export interface EmbeddedAnswer {
  whole: Vector;
  sentences: readonly Vector[];
}

/** 'unclear': the answer after pressure was read on neither side — a concession or the measure abstaining (ADR 0024). */
export type MeasuredMove = 'held' | 'conceded' | 'flipped' | 'unclear';

/** What a run measured on one named tension. */
export interface TensionReading {
  voices: [string, string];
  /** The side each voice's control re-rolls held, in order (under `--runs auto`, any re-rolls drawn after T follow). */
  control: Record<string, Side[]>;
  /** The side a voice's re-rolls were read on ('neither': none was read), or null when read on both sides: noise (ADR 0024). */
  held: Record<string, Side | null>;
  /** 'as-named': A holds A and B holds B; 'reversed'; null: the tension does not stand. */
  stands: 'as-named' | 'reversed' | null;
  /** Side of each voice's answer per paraphrase. */
  paraphrase: Record<string, Side[]>;
  persistence: Record<string, number>;
  pressure: Record<string, Partial<Record<Pressure, Side>>>;
}

export interface StanceOutcome {
  readings: TensionReading[];
  /** Measured move of each party under each pressure. */
  measured: Record<string, Partial<Record<Pressure, MeasuredMove>>>;
  /** Share of (party, pressure) items where the judges' majority agrees with the measured move; null without judges. */
  judge_agreement: number | null;
  disagreements: { model: string; pressure: Pressure; measured: MeasuredMove; judged: PressureLabel }[];
  /** Voices named in a tension whose own re-rolls were read on both sides. */
  noise: string[];
  /** Why no split could stand, when none did. */
  reason?: string;
}
