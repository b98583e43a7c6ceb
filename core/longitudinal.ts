/**
 * The longitudinal summary of a re-elicitation pair (issues 15, 23): the same question asked on
 * an earlier and a later date. Who moved is read on stance, with certification's side measure
 * (core/certify/stance.ts): for each tension named on the earlier record, each family's answers
 * on each date are placed on claim A's side, claim B's or neither (best-matching sentence,
 * margin centred on the mean margin of that record's answers, dead zone δ). A family moved when
 * its side on some named tension changed between the dates; a tension still holds when its two
 * voices stand on opposite sides on the later date. The centroid distance between the dates
 * stays as a secondary figure: it measures topic more than stance. Pure: vectors in.
 */
import { DEFAULT_DELTA, DEFAULT_THRESHOLDS, type PressureLabel } from './certify/protocol.ts';
import { centroid, cosineDistance, type Vector } from './certify/spread.ts';
import { mean, sideMargin, sideOf, sideStrength, type EmbeddedAnswer, type Side } from './certify/stance.ts';

/** The secondary distance figure's floor (the certification's between-model floor). */
export const LONGITUDINAL_FLOOR = DEFAULT_THRESHOLDS.betweenFloor;

export interface PairRecord {
  id: string;
  date: string;
  answers: readonly { model: string; model_id: string }[];
  tensions: readonly { topic: string; voice_a: string; voice_b: string; claim_a: string; claim_b: string }[];
}

/** The two claims of each tension of the earlier record, embedded, in the record's order. */
export interface ClaimVectors {
  a: Vector;
  b: Vector;
}

/** A family's side on one named tension on each date (null: it did not answer that day). */
export interface FamilySide {
  topic: string;
  earlier: Side | null;
  later: Side | null;
}

export interface FamilyShift {
  model: string;
  earlier_model_ids: string[];
  later_model_ids: string[];
  /** Secondary: cosine distance between the family's answer centroids on the two dates; null when it answered only once. */
  distance: number | null;
  /** Its side on each tension named on the earlier record, on each date. */
  sides: FamilySide[];
  /** moved: its side changed on at least one named tension (`changed` lists them). */
  status: 'moved' | 'steady' | 'only-earlier' | 'only-later';
  changed: string[];
  /** The judges' majority label of the move, when judges were configured for the re-elicitation. */
  judge_label?: PressureLabel | null;
}

/** Judges' labels of each family's move (from `<later id>.longitudinal.json`). */
export interface PairJudgement {
  judges: string[];
  labels: Record<string, { label: PressureLabel | null }>;
}

export interface TensionCheck {
  topic: string;
  voice_a: string;
  voice_b: string;
  /** Side of voice A and of voice B on each date; null when the voice did not answer. */
  earlier_sides: [Side | null, Side | null];
  later_sides: [Side | null, Side | null];
  /** Secondary: distance between the two voices on each date. */
  earlier_distance: number | null;
  later_distance: number | null;
  /** still-holds: the two voices stand on opposite sides on the later date. */
  status: 'still-holds' | 'converged' | 'voice-missing';
}

export interface LongitudinalSummary {
  earlier: { id: string; date: string };
  later: { id: string; date: string };
  embedder: string;
  /** Dead zone δ of the side measure. */
  delta: number;
  /** Secondary: the distance floor. */
  floor: number;
  judges?: string[];
  families: FamilyShift[];
  tensions: TensionCheck[];
  moved: string[];
  note: string;
}

const round = (value: number) => Math.round(value * 1000) / 1000;

function byFamily(record: PairRecord, answers: readonly EmbeddedAnswer[]): Map<string, { ids: Set<string>; answers: EmbeddedAnswer[] }> {
  const out = new Map<string, { ids: Set<string>; answers: EmbeddedAnswer[] }>();
  record.answers.forEach((answer, index) => {
    const entry = out.get(answer.model) ?? { ids: new Set<string>(), answers: [] };
    entry.ids.add(answer.model_id);
    entry.answers.push(answers[index]!);
    out.set(answer.model, entry);
  });
  return out;
}

const wholes = (answers: readonly EmbeddedAnswer[]) => answers.map((answer) => answer.whole);

function voiceDistance(families: Map<string, { answers: EmbeddedAnswer[] }>, a: string, b: string): number | null {
  const left = families.get(a);
  const right = families.get(b);
  if (!left || !right) return null;
  return round(cosineDistance(centroid(wholes(left.answers)), centroid(wholes(right.answers))));
}

/**
 * Each family's side on each tension on one date: its answers' margins (claim A over claim B,
 * best-matching sentence) averaged over the family's answers, read as certification reads a side
 * (core/certify/stance.ts sideStrength: on its own and against the mean margin of all the record's
 * answers, both beyond δ).
 */
function sidesOn(record: PairRecord, answers: readonly EmbeddedAnswer[], claims: readonly ClaimVectors[], delta: number): Map<string, Side>[] {
  return claims.map((claim) => {
    const margins = answers.map((answer) => sideMargin(answer.sentences, claim.a, claim.b));
    const centre = mean(margins);
    const byModel = new Map<string, number[]>();
    record.answers.forEach((answer, index) => byModel.set(answer.model, [...(byModel.get(answer.model) ?? []), margins[index]!]));
    // As certification reads a side: the family's own margin and its margin against the centre must agree beyond δ.
    return new Map([...byModel].map(([model, own]) => [model, sideOf(sideStrength(mean(own), centre), delta)]));
  });
}

const opposed = (a: Side | null, b: Side | null) => (a === 'A' && b === 'B') || (a === 'B' && b === 'A');

export interface LongitudinalOptions {
  /** The side measure's dead zone δ (the Atlas's calibration, else DEFAULT_DELTA). */
  delta?: number;
  /** Floor of the secondary distance figure. */
  floor?: number;
}

/**
 * `earlierAnswers[i]` embeds `earlier.answers[i]` (whole answer and sentences), likewise for the
 * later record; `claims[j]` embeds the claims of `earlier.tensions[j]`.
 */
export function longitudinalSummary(
  earlier: PairRecord,
  earlierAnswers: readonly EmbeddedAnswer[],
  later: PairRecord,
  laterAnswers: readonly EmbeddedAnswer[],
  claims: readonly ClaimVectors[],
  embedder: string,
  judged?: PairJudgement,
  options: LongitudinalOptions = {},
): LongitudinalSummary {
  const delta = options.delta ?? DEFAULT_DELTA;
  const floor = options.floor ?? LONGITUDINAL_FLOOR;
  const before = byFamily(earlier, earlierAnswers);
  const after = byFamily(later, laterAnswers);
  const sidesBefore = sidesOn(earlier, earlierAnswers, claims, delta);
  const sidesAfter = sidesOn(later, laterAnswers, claims, delta);
  const names = [...new Set([...before.keys(), ...after.keys()])];
  const families: FamilyShift[] = names.map((model) => {
    const a = before.get(model);
    const b = after.get(model);
    const distance = a && b ? round(cosineDistance(centroid(wholes(a.answers)), centroid(wholes(b.answers)))) : null;
    const sides = earlier.tensions.map((tension, index) => ({
      topic: tension.topic,
      earlier: sidesBefore[index]?.get(model) ?? null,
      later: sidesAfter[index]?.get(model) ?? null,
    }));
    const changed = a && b ? sides.filter((side) => side.earlier !== side.later).map((side) => side.topic) : [];
    return {
      model,
      earlier_model_ids: [...(a?.ids ?? [])],
      later_model_ids: [...(b?.ids ?? [])],
      distance,
      sides,
      status: !a ? 'only-later' : !b ? 'only-earlier' : changed.length > 0 ? 'moved' : 'steady',
      changed,
      ...(judged && a && b ? { judge_label: judged.labels[model]?.label ?? null } : {}),
    };
  });
  const tensions: TensionCheck[] = earlier.tensions.map((tension, index) => {
    const side = (sides: Map<string, Side>[], voice: string) => sides[index]?.get(voice) ?? null;
    const laterSides: [Side | null, Side | null] = [side(sidesAfter, tension.voice_a), side(sidesAfter, tension.voice_b)];
    return {
      topic: tension.topic,
      voice_a: tension.voice_a,
      voice_b: tension.voice_b,
      earlier_sides: [side(sidesBefore, tension.voice_a), side(sidesBefore, tension.voice_b)],
      later_sides: laterSides,
      earlier_distance: voiceDistance(before, tension.voice_a, tension.voice_b),
      later_distance: voiceDistance(after, tension.voice_a, tension.voice_b),
      status: laterSides.includes(null) ? 'voice-missing' : opposed(...laterSides) ? 'still-holds' : 'converged',
    };
  });
  return {
    earlier: { id: earlier.id, date: earlier.date },
    later: { id: later.id, date: later.date },
    embedder,
    delta,
    floor,
    ...(judged ? { judges: judged.judges } : {}),
    families,
    tensions,
    moved: families.filter((family) => family.status === 'moved').map((family) => family.model),
    note: `Computed from the pair with certification's side measure (perturbation-v2): on each tension named on the earlier record, a family's answers stand on claim A's side, claim B's or neither (best-matching sentence in ${embedder}, margin centred on the record's answers, dead zone δ = ${delta}). A family moved when its side on a named tension changed between the dates; a tension still holds when its two voices stand on opposite sides on the later date. The distance between a family's answers on the two dates (cosine, floor ${floor}) is a secondary figure: it measures topic more than stance. Read the verbatim answers.`,
  };
}
