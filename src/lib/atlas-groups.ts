/**
 * The Atlas organised by question: a record and its re-elicitations (the same question asked
 * again later, linked by `re_elicits`) form one entry, its members in date order. Filters match
 * an entry when one of its members matches, so an entry never hides half of its history.
 */
import { divergences, type DivergenceFull, type Freshness } from './artifacts.ts';

export interface AtlasEntry {
  /** The newest member: the entry's title and link. */
  latest: DivergenceFull;
  /** Every member, oldest first. */
  members: DivergenceFull[];
  voices: string[];
  themes: string[];
}

export interface AtlasFilter {
  tier?: string;
  freshness?: Freshness;
  voice?: string;
  theme?: string;
}

const unique = (values: string[]) => [...new Set(values)].sort((a, b) => a.localeCompare(b, 'en'));

export function groupByQuestion(records: readonly DivergenceFull[]): AtlasEntry[] {
  const byId = new Map(records.map((record) => [record.id, record]));
  const root = (record: DivergenceFull): string => {
    const seen = new Set<string>();
    let at = record;
    while (at.re_elicits && byId.has(at.re_elicits) && !seen.has(at.id)) {
      seen.add(at.id);
      at = byId.get(at.re_elicits)!;
    }
    return at.id;
  };
  const groups = new Map<string, DivergenceFull[]>();
  for (const record of records) {
    const key = root(record);
    const group = groups.get(key);
    if (group) group.push(record);
    else groups.set(key, [record]);
  }
  const entries = [...groups.values()].map((group) => {
    const members = [...group].sort((a, b) => a.date.localeCompare(b.date) || a.id.localeCompare(b.id));
    return {
      latest: members.at(-1)!,
      members,
      voices: unique(members.flatMap((record) => record.contributors)),
      themes: unique(members.flatMap((record) => (record.cluster ? [record.cluster] : []))),
    };
  });
  // The Atlas's own order: the order of each entry's first member in the source list.
  const position = new Map(records.map((record, index) => [record.id, index]));
  return entries.sort((a, b) => Math.min(...a.members.map((m) => position.get(m.id)!)) - Math.min(...b.members.map((m) => position.get(m.id)!)));
}

export function atlasEntries(): AtlasEntry[] {
  return groupByQuestion(divergences());
}

/** An entry matches when one of its records matches every dimension of the filter. */
export function entryMatches(entry: AtlasEntry, filter: AtlasFilter): boolean {
  return entry.members.some(
    (record) =>
      (!filter.tier || record.certification.tier === filter.tier) &&
      (!filter.freshness || (record.freshness.stale ? 'stale' : 'current') === filter.freshness) &&
      (!filter.voice || record.contributors.includes(filter.voice)) &&
      (!filter.theme || record.cluster === filter.theme),
  );
}

/** Each member's tier and freshness ("C1:stale C3:current"), for the in-place filter script. */
export function memberFacets(entry: AtlasEntry): string {
  return entry.members.map((record) => `${record.certification.tier}:${record.freshness.stale ? 'stale' : 'current'}`).join(' ');
}

/** The people's page of a voice or theme filter. */
export const atlasVoicePath = (slug: string) => `/atlas/voice/${encodeURIComponent(slug)}/`;
export const atlasThemePath = (theme: string) => `/atlas/theme/${encodeURIComponent(theme)}/`;

/** Every theme (cluster) named in the Atlas, sorted. */
export function atlasThemes(): string[] {
  return unique(divergences().flatMap((record) => (record.cluster ? [record.cluster] : [])));
}

/** The JSON twin of a filter page: the entries it shows, each with its members' ids and links. */
export function filterTwin(filter: AtlasFilter) {
  const entries = atlasEntries().filter((entry) => entryMatches(entry, filter));
  return {
    filter: { tier: filter.tier ?? null, freshness: filter.freshness ?? null, voice: filter.voice ?? null, theme: filter.theme ?? null },
    count: entries.length,
    note: 'One entry per question: a record and its re-elicitations. An entry matches when any of its records matches. Full records: /api/divergences?id=<id>.',
    entries: entries.map((entry) => ({
      question: entry.latest.question,
      records: entry.members.map((record) => ({
        id: record.id,
        date: record.date,
        tier: record.certification.tier,
        tier_source: record.certification.tier_source,
        stale: record.freshness.stale,
        voices: record.contributors,
        theme: record.cluster ?? null,
        tensions: record.tensions.map((tension) => tension.topic),
        href: `/api/divergences?id=${encodeURIComponent(record.id)}`,
        json_url: record.json_url,
        markdown_url: record.markdown_url,
      })),
    })),
  };
}
