/**
 * `curate sightings` and `curate sighting <id> keep|dismiss`: tensions named by live
 * deliberations, pending in the store until a curator keeps (they then join their tension on
 * GET /api/tensions) or dismisses them. Listed grouped by tension key, most sighted first, so
 * a disagreement that recurs surfaces; each group says whether the Atlas already names it.
 */
import type { SightingsStore, TensionSightingRecord } from '../../storage/sightings.ts';
import { tensionKey } from '../../core/tension-identity.ts';
import { UsageError } from './curation-list.ts';
import { loadContent } from '../../content-files/load-content.ts';

const STATES = ['pending', 'kept', 'dismissed', 'all'] as const;

export interface SightingGroup {
  key: string;
  topic: string;
  voices: [string, string];
  count: number;
  /** The Atlas already names this tension (same key on a published record). */
  in_atlas: boolean;
  sightings: TensionSightingRecord[];
}

export async function listSightings(store: SightingsStore, contentDir: string, status = 'pending'): Promise<SightingGroup[]> {
  if (!(STATES as readonly string[]).includes(status)) throw new UsageError(`--status is one of ${STATES.join(', ')}`);
  const items = await store.listTensionSightings(status === 'all' ? undefined : (status as TensionSightingRecord['state']));
  const content = loadContent(contentDir);
  const published = new Set(
    content.divergences.flatMap((entry) => entry.data.tensions.map((tension) => tensionKey(tension.voice_a, tension.voice_b, tension.topic))),
  );
  const groups = new Map<string, TensionSightingRecord[]>();
  for (const item of items) groups.set(item.key, [...(groups.get(item.key) ?? []), item]);
  return [...groups]
    .map(([key, sightings]) => {
      const latest = sightings[sightings.length - 1]!;
      return {
        key,
        topic: latest.topic,
        voices: [latest.voice_a, latest.voice_b].sort() as [string, string],
        count: sightings.length,
        in_atlas: published.has(key),
        sightings,
      };
    })
    .sort((a, b) => b.count - a.count || a.key.localeCompare(b.key));
}

export function describeSightings(groups: readonly SightingGroup[]): string {
  if (groups.length === 0) return 'no tension sightings';
  return groups
    .map((group) =>
      [
        `${group.key}  ${group.count} sighting${group.count === 1 ? '' : 's'}${group.in_atlas ? ' (also named in the Atlas)' : ''}`,
        `  ${group.topic}: ${group.voices.join(' vs ')}`,
        ...group.sightings.map((item) => `  ${item.id} ${item.state} ${item.seen_at}: ${item.voice_a}: ${item.claim_a} / ${item.voice_b}: ${item.claim_b}`),
      ].join('\n'),
    )
    .join('\n\n');
}

export async function reviewSighting(
  store: SightingsStore,
  id: string | undefined,
  decision: string | undefined,
  by: string | undefined,
): Promise<TensionSightingRecord> {
  if (!id || (decision !== 'keep' && decision !== 'dismiss') || !by) throw new UsageError('sighting needs <id>, keep or dismiss, and --by <curator>');
  const reviewed = await store.reviewTensionSighting(id, { state: decision === 'keep' ? 'kept' : 'dismissed', reviewer: by }, new Date());
  if (!reviewed) throw new Error(`no pending sighting ${id}`);
  return reviewed;
}
