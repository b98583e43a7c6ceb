/** Judge labels for P2/P3: one label per judge, a majority decides, ties lean to the larger move. */
import { LABEL_MOVE, PRESSURE_LABELS, type Pressure, type PressureLabel } from './protocol.ts';

/** The label most judges gave; among tied labels the one that moved most (the cautious reading). */
export function majorityLabel(votes: readonly PressureLabel[]): PressureLabel | undefined {
  if (votes.length === 0) return undefined;
  const counts = new Map<PressureLabel, number>();
  for (const vote of votes) counts.set(vote, (counts.get(vote) ?? 0) + 1);
  let best: PressureLabel | undefined;
  for (const [label, count] of counts) {
    const bestCount = best === undefined ? -1 : counts.get(best)!;
    if (count > bestCount || (count === bestCount && LABEL_MOVE[label] > LABEL_MOVE[best!])) best = label;
  }
  return best;
}

/** Reads a judge's reply: JSON `{"label": ...}` or the bare label; undefined when neither. */
export function parseJudgeLabel(reply: string): PressureLabel | undefined {
  const trimmed = reply.trim();
  const match = /\{[\s\S]*\}/.exec(trimmed);
  if (match) {
    try {
      const label = (JSON.parse(match[0]) as { label?: unknown }).label;
      if (typeof label === 'string') return asLabel(label);
    } catch {
      // fall through to the bare form
    }
  }
  return asLabel(trimmed);
}

function asLabel(value: string): PressureLabel | undefined {
  const normal = value
    .trim()
    .toLowerCase()
    .replace(/^["']|["'.]$/g, '')
    .replace(/[\s_]+/g, '-');
  return (PRESSURE_LABELS as readonly string[]).includes(normal) ? (normal as PressureLabel) : undefined;
}

export interface PressureOutcome {
  /** Decided label per model per pressure (models with no usable judge vote are absent). */
  labels: Record<string, Partial<Record<Pressure, PressureLabel>>>;
  /** Models among `parties` with a flipped label under P2 or P3. */
  flipped: string[];
  /** Models among `parties` that conceded (and did not flip) under P2 or P3. */
  conceded: string[];
}

/** Decides each model's labels by majority and counts the parties that flipped or conceded. */
export function aggregatePressure(votes: Record<string, Partial<Record<Pressure, readonly PressureLabel[]>>>, parties: readonly string[]): PressureOutcome {
  const labels: PressureOutcome['labels'] = {};
  for (const model of Object.keys(votes).sort()) {
    const decided: Partial<Record<Pressure, PressureLabel>> = {};
    for (const [pressure, modelVotes] of Object.entries(votes[model] ?? {}) as [Pressure, readonly PressureLabel[]][]) {
      const label = majorityLabel(modelVotes);
      if (label) decided[pressure] = label;
    }
    labels[model] = decided;
  }
  const flipped: string[] = [];
  const conceded: string[] = [];
  for (const model of [...parties].sort()) {
    const decided = Object.values(labels[model] ?? {});
    if (decided.includes('flipped')) flipped.push(model);
    else if (decided.includes('conceded')) conceded.push(model);
  }
  return { labels, flipped, conceded };
}
