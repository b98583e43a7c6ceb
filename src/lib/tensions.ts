/**
 * The tracked tensions for the static site: the build's tension entries and dispositions grouped
 * by the same pure function GET /api/tensions uses (core/tension-identity.ts), so the pages and
 * the API agree. Deliberation sightings a curator kept live in the store, not in the artifacts:
 * the site shows the Atlas's sightings, and the API adds the kept ones.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { recordConcepts, trackTensions, type Lifecycle, type TrackedTension } from '../../core/tension-identity.ts';
import type { TensionDisposition } from '../../schemas/content.ts';
import { artifactsDir, atlasPath, conceptGraph, divergences, readArtifact, type TensionEntry } from './artifacts.ts';
import { voiceSlug } from './voices.ts';

export type { Lifecycle, TrackedTension } from '../../core/tension-identity.ts';
export const LIFECYCLES = ['open', 'repaired'] as const satisfies readonly Lifecycle[];

let tracked: TrackedTension[] | undefined;

export function trackedTensions(): TrackedTension[] {
  if (tracked) return tracked;
  const entries = readArtifact<TensionEntry[]>('data', 'tensions.json');
  // Artifacts built before dispositions existed have none (as api/load-artifacts.ts reads them).
  const dispositions = existsSync(path.join(artifactsDir(), 'data', 'dispositions.json'))
    ? readArtifact<Record<string, TensionDisposition[]>>('data', 'dispositions.json')
    : {};
  const conceptIds = new Set(conceptGraph().nodes.map((node) => node.id));
  const byRecord = new Map(divergences().map((record) => [record.id, recordConcepts(record, conceptIds)]));
  // Artifacts built before merges existed have none.
  const merges = existsSync(path.join(artifactsDir(), 'data', 'tension-merges.json'))
    ? new Map(Object.entries(readArtifact<Record<string, string>>('data', 'tension-merges.json')))
    : new Map<string, string>();
  tracked = trackTensions(entries, dispositions, (id) => byRecord.get(id) ?? [], [], merges);
  return tracked;
}

export interface TensionFilter {
  lifecycle?: Lifecycle;
  /** A voice name, as the tension names it. */
  voice?: string;
}

export function tensionMatches(tension: TrackedTension, filter: TensionFilter): boolean {
  return (!filter.lifecycle || tension.lifecycle === filter.lifecycle) && (!filter.voice || tension.voices.includes(filter.voice));
}

/** Every voice on either side of a tracked tension, sorted by name. */
export function tensionVoices(): string[] {
  return [...new Set(trackedTensions().flatMap((tension) => tension.voices))].sort((a, b) => a.localeCompare(b, 'en'));
}

export const tensionPath = (key: string) => `/tensions/${encodeURIComponent(key)}/`;
export const tensionVoicePath = (voice: string) => `/tensions/voice/${encodeURIComponent(voiceSlug(voice))}/`;
export const tensionApiPath = (query: Record<string, string> = {}) => {
  const search = new URLSearchParams(query).toString();
  return `/api/tensions${search ? `?${search}` : ''}`;
};

/** The people's page of a filter: /tensions/, /tensions/open/, /tensions/voice/<voice>/. */
export function tensionFilterPath(filter: TensionFilter): string {
  if (filter.voice) return tensionVoicePath(filter.voice);
  return filter.lifecycle ? `/tensions/${filter.lifecycle}/` : '/tensions/';
}

export const LIFECYCLE_MEANING: Record<Lifecycle, string> = {
  open: 'No curator disposition yet, or the latest one leaves the tension open (held, crux, synthesis drafted, council review).',
  repaired: 'The latest curator disposition settles it: reclassified (one side is an earlier-stage view) or a canon note (a ruling).',
};

/** Why this tension is open or repaired, in one sentence. */
export function lifecycleSentence(tension: TrackedTension): string {
  if (!tension.disposition) return 'Open: no curator has recorded a disposition yet.';
  const label = DISPOSITION_LABEL[tension.disposition].toLowerCase();
  return tension.lifecycle === 'repaired'
    ? `Repaired by the latest curator disposition (${label}).`
    : `Open: the latest curator disposition (${label}) leaves it open.`;
}

export const DISPOSITION_LABEL: Record<TensionDisposition['kind'], string> = {
  held: 'Held open',
  reclassified: 'Reclassified',
  'canon-note': 'Canon note',
  crux: 'Crux',
  'synthesis-drafted': 'Synthesis drafted',
  'council-review': 'Council review',
};

/** The words of a disposition, one line per thought: its reason, ruling, crux or pointer. */
export function dispositionLines(disposition: TensionDisposition, sides: { a: string; b: string } = { a: 'side A', b: 'side B' }): string[] {
  switch (disposition.kind) {
    case 'held':
      return [disposition.reason];
    case 'reclassified':
      return [`${disposition.earlier_voice}’s side is an earlier-stage view.`, disposition.note];
    case 'canon-note':
      return [disposition.note];
    case 'crux': {
      const moves = [
        ...(disposition.moves_a ? [`What would move ${sides.a}: ${disposition.moves_a}`] : []),
        ...(disposition.moves_b ? [`What would move ${sides.b}: ${disposition.moves_b}`] : []),
      ];
      return disposition.undecidable ? [...moves, 'Marked undecidable: no evidence named settles it.'] : moves;
    }
    case 'synthesis-drafted':
      return [`A synthesis is drafted as proposal ${disposition.proposal_id}.`];
    case 'council-review':
      return [`A council reviewed it; the panel result is Atlas record ${disposition.record_id}.`];
  }
}

export function dispositionText(disposition: TensionDisposition, sides?: { a: string; b: string }): string {
  return dispositionLines(disposition, sides).join(' ');
}

/** The page link of a sighting: the record's tension card, when it is an Atlas sighting. */
export function sightingHref(sighting: TrackedTension['sightings'][number]): string | null {
  return sighting.record_id ? `${atlasPath(sighting.record_id)}#${encodeURIComponent(sighting.tension_id)}` : null;
}

/** The JSON twin of a filter page: what it lists, and the API request that answers the same. */
export function tensionFilterTwin(filter: TensionFilter) {
  const all = trackedTensions();
  const tensions = all.filter((tension) => tensionMatches(tension, filter));
  const query: Record<string, string> = {};
  if (filter.lifecycle) query.lifecycle = filter.lifecycle;
  if (filter.voice) query.voice = filter.voice;
  return {
    filter: { lifecycle: filter.lifecycle ?? null, voice: filter.voice ?? null },
    count: tensions.length,
    total: all.length,
    api: tensionApiPath(query),
    note: 'One entry per tension (id <voice>__<voice>__<topic>), with its Atlas sightings and curator dispositions, as GET /api/tensions gives it; the API also adds deliberation sightings a curator kept.',
    tensions: tensions.map((tension) => ({ ...tension, page: tensionPath(tension.id), json: tensionApiPath({ key: tension.id }) })),
  };
}
