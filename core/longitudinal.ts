/**
 * The longitudinal summary of a re-elicitation pair (issue 15): the same question asked on an
 * earlier and a later date. Per model family: how far its answers moved between the dates,
 * in the engine's embedding space (centroid cosine distance). Per tension named on the
 * earlier record: whether its two voices still stand apart on the later date. Pure: vectors in.
 */
import { DEFAULT_THRESHOLDS, type PressureLabel } from './certify/protocol.ts';
import { centroid, cosineDistance, type Vector } from './certify/spread.ts';

/** A family moved, or a tension still holds, at or above this distance (the certification's between-model floor). */
export const LONGITUDINAL_FLOOR = DEFAULT_THRESHOLDS.betweenFloor;

export interface PairRecord {
  id: string;
  date: string;
  answers: readonly { model: string; model_id: string }[];
  tensions: readonly { topic: string; voice_a: string; voice_b: string }[];
}

export interface FamilyShift {
  model: string;
  earlier_model_ids: string[];
  later_model_ids: string[];
  /** Cosine distance between the family's answer centroids on the two dates; null when it answered only once. */
  distance: number | null;
  status: 'moved' | 'steady' | 'only-earlier' | 'only-later';
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
  earlier_distance: number | null;
  later_distance: number | null;
  status: 'still-holds' | 'converged' | 'voice-missing';
}

export interface LongitudinalSummary {
  earlier: { id: string; date: string };
  later: { id: string; date: string };
  embedder: string;
  floor: number;
  judges?: string[];
  families: FamilyShift[];
  tensions: TensionCheck[];
  moved: string[];
  note: string;
}

const round = (value: number) => Math.round(value * 1000) / 1000;

function byFamily(record: PairRecord, vectors: readonly Vector[]): Map<string, { ids: Set<string>; vectors: Vector[] }> {
  const out = new Map<string, { ids: Set<string>; vectors: Vector[] }>();
  record.answers.forEach((answer, index) => {
    const entry = out.get(answer.model) ?? { ids: new Set<string>(), vectors: [] };
    entry.ids.add(answer.model_id);
    entry.vectors.push(vectors[index]!);
    out.set(answer.model, entry);
  });
  return out;
}

function voiceDistance(families: Map<string, { vectors: Vector[] }>, a: string, b: string): number | null {
  const left = families.get(a);
  const right = families.get(b);
  if (!left || !right) return null;
  return round(cosineDistance(centroid(left.vectors), centroid(right.vectors)));
}

/** `earlierVectors[i]` embeds `earlier.answers[i]`, likewise for the later record. */
export function longitudinalSummary(
  earlier: PairRecord,
  earlierVectors: readonly Vector[],
  later: PairRecord,
  laterVectors: readonly Vector[],
  embedder: string,
  judged?: PairJudgement,
  floor = LONGITUDINAL_FLOOR,
): LongitudinalSummary {
  const before = byFamily(earlier, earlierVectors);
  const after = byFamily(later, laterVectors);
  const names = [...new Set([...before.keys(), ...after.keys()])];
  const families: FamilyShift[] = names.map((model) => {
    const a = before.get(model);
    const b = after.get(model);
    const distance = a && b ? round(cosineDistance(centroid(a.vectors), centroid(b.vectors))) : null;
    return {
      model,
      earlier_model_ids: [...(a?.ids ?? [])],
      later_model_ids: [...(b?.ids ?? [])],
      distance,
      status: !a ? 'only-later' : !b ? 'only-earlier' : distance! >= floor ? 'moved' : 'steady',
      ...(judged && a && b ? { judge_label: judged.labels[model]?.label ?? null } : {}),
    };
  });
  const tensions: TensionCheck[] = earlier.tensions.map((tension) => {
    const earlierDistance = voiceDistance(before, tension.voice_a, tension.voice_b);
    const laterDistance = voiceDistance(after, tension.voice_a, tension.voice_b);
    return {
      topic: tension.topic,
      voice_a: tension.voice_a,
      voice_b: tension.voice_b,
      earlier_distance: earlierDistance,
      later_distance: laterDistance,
      status: laterDistance === null ? 'voice-missing' : laterDistance >= floor ? 'still-holds' : 'converged',
    };
  });
  return {
    earlier: { id: earlier.id, date: earlier.date },
    later: { id: later.id, date: later.date },
    embedder,
    floor,
    ...(judged ? { judges: judged.judges } : {}),
    families,
    tensions,
    moved: families.filter((family) => family.status === 'moved').map((family) => family.model),
    note: `Computed from the pair: a family moved when its answers' centroid lies at least ${floor} (cosine distance in ${embedder}) from where it lay on the earlier date; a tension still holds when its two voices' answers lie at least ${floor} apart on the later date. Distances measure topic more than stance; read the verbatim answers.`,
  };
}
