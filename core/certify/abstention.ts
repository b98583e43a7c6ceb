/**
 * Abstention is not inconsistency (issue 46, ADR 0024). The side measure reads an answer as A, B
 * or neither; "neither" means the sentence matcher fell inside its dead zone δ — the instrument
 * abstained — not that the voice changed its mind. This file holds the rules that read a voice's
 * sides that way, and the small model of the measurement the ADR derives them from. Pure.
 *
 * The model: each reading of an answer is independent; a reading abstains with probability
 * 1 − coverage, and a reading that does not abstain puts the answer on the side it holds with
 * probability precision (the calibration's figures at δ, core/certify/calibration.ts).
 *   - a steadfast voice (every answer on its own side): own c·p, other c·(1 − p), unread 1 − c;
 *   - a truly alternating voice (each answer on either side, half the time): A c/2, B c/2, unread 1 − c.
 * An unread reading is equally likely under both, so it carries no evidence either way: it may
 * lower the confidence of a reading (fewer readings), never flip it.
 */
import type { Side } from './stance.ts';

/**
 * The side a voice's re-rolls kept: the one side they were read on; 'neither' when none was
 * read; null — noise, not a party — only when some were read on A and some on B.
 */
export function keptSide(sides: readonly Side[]): Side | null {
  if (sides.length === 0) return null;
  const a = sides.includes('A');
  const b = sides.includes('B');
  if (a && b) return null;
  return a ? 'A' : b ? 'B' : 'neither';
}

/**
 * Persistence of a voice holding `held`: the share of its paraphrase answers read on its side
 * among those read at all (unread ones count neither for nor against); 0 when none was read or
 * the voice held no side. Equal to the share of all paraphrases when none abstains.
 */
export function persistenceOf(sides: readonly Side[], held: Side | null): number {
  if (held === null || held === 'neither') return 0;
  const read = sides.filter((side) => side !== 'neither');
  return read.length === 0 ? 0 : read.filter((side) => side === held).length / read.length;
}

/**
 * `--runs auto`: whether a voice's re-rolls, read so far, call for another: they were read on one
 * side, but fewer than `t` of them were read. Not when read on both sides (noise is decided; more
 * re-rolls cannot undo it), nor when none was read: a voice the measure never places is where a
 * convergent panel sits (every answer at the panel's centre), and re-rolling it buys nothing.
 */
export function wantsAnotherReroll(sides: readonly Side[], t: number): boolean {
  const side = keptSide(sides);
  return (side === 'A' || side === 'B') && sides.filter((s) => s !== 'neither').length < t;
}

/** The calibrated figures the model needs: precision and coverage of the side measure at δ. */
export interface ReadingModel {
  precision: number;
  coverage: number;
}

/** Probabilities of one reading: on the voice's own side, on the other, unread. */
interface Outcome {
  own: number;
  other: number;
  unread: number;
}

export const steadfast = ({ precision: p, coverage: c }: ReadingModel): Outcome => ({ own: c * p, other: c * (1 - p), unread: 1 - c });
/** For a truly alternating voice "own" is whichever side it was first read on: the outcome is symmetric. */
export const alternating = ({ coverage: c }: ReadingModel): Outcome => ({ own: c / 2, other: c / 2, unread: 1 - c });

function factorial(n: number): number {
  let out = 1;
  for (let i = 2; i <= n; i++) out *= i;
  return out;
}

/** The probability of every (own, other, unread) count over n independent readings. */
function counts(n: number, outcome: Outcome): { own: number; other: number; unread: number; probability: number }[] {
  const out = [];
  for (let own = 0; own <= n; own++) {
    for (let other = 0; own + other <= n; other++) {
      const unread = n - own - other;
      const ways = factorial(n) / (factorial(own) * factorial(other) * factorial(unread));
      out.push({ own, other, unread, probability: ways * outcome.own ** own * outcome.other ** other * outcome.unread ** unread });
    }
  }
  return out;
}

export type NoiseRule = 'all-alike' | 'opposite-sides';

/**
 * How the control re-rolls of a voice come out under a noise rule:
 *   - 'all-alike' (ADR 0015): noise unless every re-roll took the same side, "neither" included;
 *     the voice keeps its own side only when all T were read on it;
 *   - 'opposite-sides' (ADR 0024): noise only when some were read on each side; it keeps its own
 *     side when at least one was read on it and none on the other.
 * `kept`: the voice keeps its own side (for an alternating voice: either side, as the other voice
 * of its tension may stand on either); `noise`: ruled noise.
 */
export function controlOdds(outcome: Outcome, t: number, rule: NoiseRule): { kept: number; noise: number } {
  let kept = 0;
  let noise = 0;
  for (const { own, other, unread, probability } of counts(t, outcome)) {
    if (rule === 'all-alike') {
      if (own === t) kept += probability;
      if (own !== t && other !== t && unread !== t) noise += probability;
    } else {
      if (own > 0 && other === 0) kept += probability;
      if (own > 0 && other > 0) noise += probability;
    }
  }
  return { kept, noise };
}

/**
 * `--runs auto` on the opposite-sides rule: re-rolls are drawn one after another, from t, while
 * some but fewer than t were read and none on opposite sides (wantsAnotherReroll), up to t + extra.
 * Same outputs as controlOdds, and the expected number of re-rolls.
 */
export function toppedUpOdds(outcome: Outcome, t: number, extra: number): { kept: number; noise: number; expectedRerolls: number } {
  let kept = 0;
  let noise = 0;
  let expectedRerolls = 0;
  // Walk the states (own, other, drawn) after the first t draws, then each extra draw while wanted.
  let states = counts(t, outcome).map(({ own, other, probability }) => ({ own, other, drawn: t, probability }));
  while (states.length > 0) {
    const next: typeof states = [];
    for (const state of states) {
      const read = state.own + state.other;
      const decided = read === 0 || (state.own > 0 && state.other > 0) || read >= t || state.drawn >= t + extra;
      if (decided) {
        expectedRerolls += state.drawn * state.probability;
        if (state.own > 0 && state.other === 0) kept += state.probability;
        if (state.own > 0 && state.other > 0) noise += state.probability;
        continue;
      }
      next.push({ ...state, own: state.own + 1, drawn: state.drawn + 1, probability: state.probability * outcome.own });
      next.push({ ...state, other: state.other + 1, drawn: state.drawn + 1, probability: state.probability * outcome.other });
      next.push({ ...state, drawn: state.drawn + 1, probability: state.probability * outcome.unread });
    }
    states = next;
  }
  return { kept, noise, expectedRerolls };
}

export type PersistenceRule = 'of-all' | 'of-read';

/**
 * The chance a voice persists on its side in at least `share` of K paraphrases: 'of-all' (ADR
 * 0015) counts unread paraphrases against it, 'of-read' (ADR 0024) counts only those read.
 */
export function persistenceOdds(outcome: Outcome, k: number, share: number, rule: PersistenceRule): number {
  let persists = 0;
  for (const { own, other, probability } of counts(k, outcome)) {
    const denominator = rule === 'of-all' ? k : own + other;
    if (denominator > 0 && own / denominator >= share - 1e-12) persists += probability;
  }
  return persists;
}
