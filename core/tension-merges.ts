/**
 * Tension merge proposals (issue 29 item 4, first half). Tensions are keyed by their two voices
 * and the topic's words, so one disagreement named in other words on two records stays two
 * tensions. This proposes, for each pair of tensions between the same two voices, a merge when
 * their topics and each voice's claims say much the same (content words compared, Dice
 * coefficient). A proposal is only that: a curator reads both and confirms or declines.
 */
import type { TrackedTension } from './tension-identity.ts';

/** What the merge map needs of a curator's decision (schemas/content.ts TensionMergeDecision). */
export interface MergeDecisionLike {
  from: string;
  into: string;
  decision: 'merged' | 'declined';
}

/**
 * The merges in force: key merged away → the key it resolves to (followed to the end of a
 * chain). The latest decision on a pair stands (a merge declined later is undone). Throws on a
 * circle, which the content check reports.
 */
export function mergeMap(decisions: readonly MergeDecisionLike[]): Map<string, string> {
  const latest = new Map<string, MergeDecisionLike>();
  for (const decision of decisions) latest.set(`${decision.from}\u0000${decision.into}`, decision);
  const direct = new Map<string, string>();
  for (const decision of latest.values()) {
    if (decision.decision === 'merged') direct.set(decision.from, decision.into);
    else if (direct.get(decision.from) === decision.into) direct.delete(decision.from);
  }
  const resolved = new Map<string, string>();
  for (const from of direct.keys()) {
    const seen = new Set([from]);
    let at = direct.get(from)!;
    while (direct.has(at)) {
      if (seen.has(at)) throw new Error(`the merges of ${[...seen].join(', ')} go round in a circle`);
      seen.add(at);
      at = direct.get(at)!;
    }
    resolved.set(from, at);
  }
  return resolved;
}

export interface MergeProposal {
  /** The surviving key: the tension seen more often (then first, then by key). */
  into: string;
  from: string;
  voices: [string, string];
  topics: [string, string];
  /** 0..1: the mean of the topics' and the claims' similarity. */
  similarity: number;
  topic_similarity: number;
  claim_similarity: number;
}

/** Proposals at or above this similarity; calibrated by reading the proposals on the imported Omnarai data (docs). */
export const MERGE_THRESHOLD = 0.35;

const STOPWORDS = new Set(
  'the and for with that this from into onto over under about than then them they their there these those what which who whom whose when where why how are was were been being has have had does did not but nor yet its it’s can could should would may might must will shall also more most less least very such only own same other each every any some all both either neither between versus vs one two'.split(
    ' ',
  ),
);

/** Content words, lower-cased, a plural or -ing/-ed ending taken off (a crude stem, enough to match "refusal" and "refusals"). */
export function contentWords(text: string): Set<string> {
  const words = text
    .normalize('NFKD')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length >= 3 && !STOPWORDS.has(word))
    .map((word) => word.replace(/(ies)$/, 'y').replace(/(ing|ed|es|s)$/, ''))
    .filter((word) => word.length >= 3);
  return new Set(words);
}

export function dice(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const word of a) if (b.has(word)) shared++;
  return (2 * shared) / (a.size + b.size);
}

/** Every claim a voice made in a tension's sightings, as one bag of content words. */
function claimsOf(tension: TrackedTension, voice: string): Set<string> {
  const text = tension.sightings.flatMap((sighting) => [
    ...(sighting.voice_a === voice ? [sighting.claim_a] : []),
    ...(sighting.voice_b === voice ? [sighting.claim_b] : []),
  ]);
  return contentWords(text.join(' '));
}

const rank = (tension: TrackedTension) => [-tension.sighting_count, tension.first_seen, tension.id] as const;

function survivorFirst(a: TrackedTension, b: TrackedTension): [TrackedTension, TrackedTension] {
  const [ra, rb] = [rank(a), rank(b)];
  for (let index = 0; index < ra.length; index++) {
    if (ra[index]! < rb[index]!) return [a, b];
    if (ra[index]! > rb[index]!) return [b, a];
  }
  return [a, b];
}

/** `decided`: pairs a curator already decided ("from\u0000into", either order), not proposed again. */
export function proposeTensionMerges(
  tensions: readonly TrackedTension[],
  threshold = MERGE_THRESHOLD,
  decided: ReadonlySet<string> = new Set(),
): MergeProposal[] {
  const byPair = new Map<string, TrackedTension[]>();
  for (const tension of tensions) {
    const pair = tension.voices.join('\u0000');
    byPair.set(pair, [...(byPair.get(pair) ?? []), tension]);
  }
  const proposals: MergeProposal[] = [];
  for (const group of byPair.values()) {
    for (let i = 0; i < group.length; i++) {
      for (let j = i + 1; j < group.length; j++) {
        const [into, from] = survivorFirst(group[i]!, group[j]!);
        if (decided.has(`${from.id}\u0000${into.id}`) || decided.has(`${into.id}\u0000${from.id}`)) continue;
        const topicSimilarity = dice(contentWords(into.topic), contentWords(from.topic));
        const claimSimilarity =
          (dice(claimsOf(into, into.voices[0]), claimsOf(from, into.voices[0])) + dice(claimsOf(into, into.voices[1]), claimsOf(from, into.voices[1]))) / 2;
        const similarity = (topicSimilarity + claimSimilarity) / 2;
        if (similarity < threshold) continue;
        proposals.push({
          into: into.id,
          from: from.id,
          voices: into.voices,
          topics: [into.topic, from.topic],
          similarity: Math.round(similarity * 1000) / 1000,
          topic_similarity: Math.round(topicSimilarity * 1000) / 1000,
          claim_similarity: Math.round(claimSimilarity * 1000) / 1000,
        });
      }
    }
  }
  return proposals.sort((a, b) => b.similarity - a.similarity || a.into.localeCompare(b.into) || a.from.localeCompare(b.from));
}
