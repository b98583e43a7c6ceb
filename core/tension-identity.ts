/**
 * Tension identity and lifecycle. A tension is one disagreement, keyed by its two voices
 * and its topic, so the same split named on several Atlas records is one tension with
 * several sightings. Its lifecycle comes from the curators' dispositions (content/tensions/):
 * the latest `reclassified` or `canon-note` repairs it; every other disposition leaves it open.
 */
import type { TensionDisposition } from '../schemas/content.ts';
import { TENSION_STATUSES, type TensionStatus } from '../schemas/vocab.ts';
import { sha256Hex } from './manifest.ts';
import type { DivergenceFull, TensionEntry } from './records.ts';

/** Dispositions after which a tension counts as repaired, when they are the latest one. */
export const REPAIRING_DISPOSITIONS: ReadonlySet<string> = new Set(['reclassified', 'canon-note']);

function keyPart(value: string): string {
  const ascii = value
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  // A value with no Latin letters or digits still needs a stable, distinct part.
  return ascii === '' ? `x${sha256Hex(value.normalize('NFC').trim()).slice(0, 10)}` : ascii;
}

/** `<voice>__<voice>__<topic>`: voices in sorted order, so A-versus-B and B-versus-A are one tension. */
export function tensionKey(voiceA: string, voiceB: string, topic: string): string {
  const [first, second] = [keyPart(voiceA), keyPart(voiceB)].sort();
  return `${first}__${second}__${keyPart(topic)}`;
}

export interface TensionSighting {
  /** atlas: a tension of a published Atlas record; deliberation: named by a live deliberation and kept by a curator. */
  source: 'atlas' | 'deliberation';
  /** <record id>-T<n>, or the sighting id of a deliberation. */
  tension_id: string;
  /** The Atlas record, or null for a deliberation. */
  record_id: string | null;
  date: string;
  question: string;
  topic: string;
  voice_a: string;
  claim_a: string;
  voice_b: string;
  claim_b: string;
  status: TensionStatus;
  href: string | null;
}

/** A curator-kept sighting from a live deliberation (the store's TensionSightingRecord). */
export interface KeptSighting {
  id: string;
  key: string;
  topic: string;
  voice_a: string;
  claim_a: string;
  voice_b: string;
  claim_b: string;
  status: string;
  question: string;
  seen_at: string;
}

export type Lifecycle = 'open' | 'repaired';

export interface TrackedTension {
  /** The stable key. */
  id: string;
  topic: string;
  voices: [string, string];
  /** The latest sighting's claims and status, so a tension reads like one of its sightings. */
  voice_a: string;
  claim_a: string;
  voice_b: string;
  claim_b: string;
  status: TensionStatus;
  first_seen: string;
  last_seen: string;
  lifecycle: Lifecycle;
  /** Kind of the latest disposition, or null when no curator has recorded one. */
  disposition: TensionDisposition['kind'] | null;
  dispositions: TensionDisposition[];
  concepts: string[];
  sighting_count: number;
  sightings: TensionSighting[];
  /** Keys a curator merged into this one (they resolve to it); present when there are any. */
  merged_keys?: string[];
}

function sightingOf(entry: TensionEntry): TensionSighting {
  return {
    source: 'atlas',
    tension_id: entry.id,
    record_id: entry.record_id,
    date: entry.date,
    question: entry.question,
    topic: entry.topic,
    voice_a: entry.voice_a,
    claim_a: entry.claim_a,
    voice_b: entry.voice_b,
    claim_b: entry.claim_b,
    status: entry.status,
    href: entry.href,
  };
}

/**
 * Groups tension entries by key. Sightings run oldest first; the tensions are ordered by
 * their latest sighting, newest first. `conceptsOf` names the concepts of a record.
 */
function keptSightingOf(kept: KeptSighting): TensionSighting {
  return {
    source: 'deliberation',
    tension_id: kept.id,
    record_id: null,
    date: kept.seen_at.slice(0, 10),
    question: kept.question,
    topic: kept.topic,
    voice_a: kept.voice_a,
    claim_a: kept.claim_a,
    voice_b: kept.voice_b,
    claim_b: kept.claim_b,
    status: (TENSION_STATUSES as readonly string[]).includes(kept.status) ? (kept.status as TensionStatus) : 'unresolved',
    href: null,
  };
}

export function trackTensions(
  entries: readonly TensionEntry[],
  dispositions: Readonly<Record<string, readonly TensionDisposition[]>>,
  conceptsOf: (recordId: string) => readonly string[] = () => [],
  kept: readonly KeptSighting[] = [],
  /** Merges in force (core/tension-merges.ts mergeMap): a merged key's sightings and dispositions join the key it resolves to. */
  merges: ReadonlyMap<string, string> = new Map(),
): TrackedTension[] {
  const groups = new Map<string, TensionSighting[]>();
  const add = (key: string, sighting: TensionSighting) => {
    const into = merges.get(key) ?? key;
    groups.set(into, [...(groups.get(into) ?? []), sighting]);
  };
  const mergedInto = new Map<string, string[]>();
  for (const [from, into] of merges) mergedInto.set(into, [...(mergedInto.get(into) ?? []), from].sort());
  for (const entry of entries) add(tensionKey(entry.voice_a, entry.voice_b, entry.topic), sightingOf(entry));
  for (const sighting of kept) add(sighting.key, keptSightingOf(sighting));
  const tracked: TrackedTension[] = [];
  for (const [key, group] of groups) {
    const sightings = [...group].sort((a, b) => a.date.localeCompare(b.date) || a.tension_id.localeCompare(b.tension_id, 'en', { numeric: true }));
    const latest = sightings[sightings.length - 1]!;
    const merged = mergedInto.get(key) ?? [];
    // Every disposition of the merged keys too, in the order they were recorded.
    const history = [key, ...merged].flatMap((each) => dispositions[each] ?? []).sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
    const last = history[history.length - 1];
    const voices = [latest.voice_a, latest.voice_b].sort() as [string, string];
    tracked.push({
      id: key,
      topic: latest.topic,
      voices,
      voice_a: latest.voice_a,
      claim_a: latest.claim_a,
      voice_b: latest.voice_b,
      claim_b: latest.claim_b,
      status: latest.status,
      first_seen: sightings[0]!.date,
      last_seen: latest.date,
      lifecycle: last && REPAIRING_DISPOSITIONS.has(last.kind) ? 'repaired' : 'open',
      disposition: last?.kind ?? null,
      dispositions: history,
      concepts: [...new Set(sightings.flatMap((sighting) => (sighting.record_id ? conceptsOf(sighting.record_id) : [])))].sort(),
      sighting_count: sightings.length,
      sightings,
      ...(merged.length > 0 ? { merged_keys: merged } : {}),
    });
  }
  return tracked.sort((a, b) => b.last_seen.localeCompare(a.last_seen) || a.id.localeCompare(b.id));
}

/** Concepts of an Atlas record: its cluster, when the cluster is a concept id. */
export function recordConcepts(record: Pick<DivergenceFull, 'cluster'>, conceptIds: ReadonlySet<string>): string[] {
  return record.cluster && conceptIds.has(record.cluster) ? [record.cluster] : [];
}
