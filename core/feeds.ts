/**
 * Feeds for readers (issue 45, part 2): the Atlas (new records, re-elicitations and answers
 * appended, tier changes with the evidence behind them, tension dispositions) and the corpus (new
 * works), as Atom (RFC 4287) and JSON Feed 1.1, cut from the content's history (docs/CHANGES.md).
 * Pure: the build gives the history, the records' titles and the site's absolute URL.
 *
 * One entry per commit and record; its id is a tag: URI (RFC 4151) naming the deployment's host,
 * the commit's date, the record and the commit, so it is the same in both formats and in every
 * build. Changes built from an uncommitted working tree have no commit, so no stable id, and are
 * left out; so are plain edits (a typo), which are in /changes/ and GET /api/changes.
 */
import type { ChangeHistory, ContentRevision, RecordChange } from '../schemas/api/changes.ts';
import type { JsonFeed } from '../schemas/api/feeds.ts';
import { describeChange } from './record-history.ts';

/** Entries per feed, newest first: a reader polls; the whole history is in /changes/. */
export const FEED_ENTRIES = 50;
export const FEED_PATHS = {
  atlas: { atom: '/feeds/atlas.atom', json: '/feeds/atlas.json' },
  works: { atom: '/feeds/works.atom', json: '/feeds/works.json' },
} as const;
export type FeedName = keyof typeof FEED_PATHS;
export const ATOM_TYPE = 'application/atom+xml';
export const JSON_FEED_TYPE = 'application/feed+json';

export interface FeedSite {
  name: string;
  slug: string;
  /** Absolute URL of the site, no trailing slash (site.yaml base_url, else PUBLIC_BASE_URL at build time). */
  base: string;
}

/** What the feeds say of a record that still exists (a removed one is named by its id). */
export interface FeedRecord {
  title: string;
  /** The evidence log of its certification (/records/<id>.certification.jsonl), when one backs its tier. */
  evidenceUrl?: string;
  /** The record it asks again (a re-elicitation). */
  reElicits?: string;
}

export interface FeedLookup {
  divergence(id: string): FeedRecord | undefined;
  work(id: string): FeedRecord | undefined;
}

export interface FeedLink {
  href: string;
  title: string;
}

export interface FeedEntry {
  id: string;
  title: string;
  /** The commit's author date (ISO 8601). */
  updated: string;
  author: string;
  /** The record's page (or the tension's). */
  link: string;
  /** Its JSON, its certification evidence, the commit's page of /changes/. */
  related: FeedLink[];
  summary: string;
  html: string;
  categories: string[];
}

export interface Feed {
  name: FeedName;
  id: string;
  title: string;
  subtitle: string;
  home: string;
  atom: string;
  json: string;
  updated: string;
  author: string;
  entries: FeedEntry[];
}

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const pagePath = (kind: RecordChange['kind'], id: string) =>
  kind === 'work' ? `/works/${encodeURIComponent(id)}/` : kind === 'tension' ? `/tensions/${encodeURIComponent(id)}/` : `/atlas/${encodeURIComponent(id)}/`;

type How = 'added' | 'changed' | 'removed';

/** Whether a reader of the feed wants this change: new, gone, a tier, answers, annotations, dispositions; not a plain edit. */
function worthAnEntry(feed: FeedName, change: RecordChange, how: How): boolean {
  if (feed === 'works') return change.kind === 'work' && how === 'added';
  if (change.kind === 'tension') return change.dispositions_added.length > 0;
  if (change.kind !== 'divergence') return false;
  return how !== 'changed' || change.tier !== null || change.answers_added > 0 || change.annotations_added > 0 || change.fields.includes('evidence');
}

function entryTitle(change: RecordChange, how: How, record: FeedRecord | undefined): string {
  const name = record ? `${change.id}: ${record.title}` : change.id;
  if (change.kind === 'work') return `New work ${name}`;
  if (change.kind === 'tension')
    return `Tension ${change.id}: ${change.dispositions_added.length === 1 ? 'disposition' : 'dispositions'} ${change.dispositions_added.join(', ')}`;
  if (how === 'added') return record?.reElicits ? `Asked again: ${name} (re-elicits ${record.reElicits})` : `New Atlas record ${name}`;
  if (how === 'removed') return `Removed from the Atlas: ${change.id}`;
  return `${change.id}: ${describeChange(change, how)}`;
}

/** The evidence behind a tier change, said plainly: the log that measured it, or that none does. */
function tierEvidence(change: RecordChange, evidence: string | undefined): string | undefined {
  if (!change.tier) return undefined;
  const tier = `Tier ${change.tier.from ?? 'none'} → ${change.tier.to ?? 'none'}.`;
  if (evidence) return `${tier} Measured: the certification evidence is the log at ${evidence}.`;
  const overridden = change.overrides.length > 0 ? ` A curator accepted it over the change check's rule ${change.overrides.join(', ')}.` : '';
  return `${tier} No evidence log backs this tier: it is stated in the content, not measured here.${overridden}`;
}

function entryOf(
  feed: FeedName,
  site: FeedSite,
  revision: ContentRevision & { commit: string; date: string },
  change: RecordChange,
  how: How,
  lookup: FeedLookup,
): FeedEntry {
  const record = change.kind === 'work' ? lookup.work(change.id) : change.kind === 'divergence' ? lookup.divergence(change.id) : undefined;
  const link = `${site.base}${pagePath(change.kind, change.id)}`;
  const related: FeedLink[] = [];
  if (how !== 'removed' && (change.kind === 'work' || change.kind === 'divergence')) {
    related.push({ href: `${site.base}/records/${encodeURIComponent(change.id)}.json`, title: 'The record as JSON, with its history' });
  }
  const evidence = record?.evidenceUrl && change.tier ? `${site.base}${record.evidenceUrl}` : undefined;
  if (evidence) related.push({ href: evidence, title: 'Certification evidence log' });
  if (change.tier && change.kind === 'divergence' && how !== 'removed') related.push({ href: `${link}#cert-heading`, title: "The record's certification" });
  const what = describeChange(change, how);
  const lines = [
    `${what} (commit ${revision.commit.slice(0, 12)} by ${revision.author ?? 'unknown'}: ${revision.subject ?? ''})`,
    tierEvidence(change, evidence),
    ...change.notes,
  ].filter((line): line is string => line !== undefined && line !== '');
  const html = [
    `<p><a href="${escapeHtml(link)}">${escapeHtml(entryTitle(change, how, record))}</a></p>`,
    `<ul>${lines.map((line) => `<li>${escapeHtml(line)}</li>`).join('')}</ul>`,
    related.length > 0 ? `<p>${related.map((item) => `<a href="${escapeHtml(item.href)}">${escapeHtml(item.title)}</a>`).join(' · ')}</p>` : '',
  ].join('');
  const authority = new URL(site.base).hostname;
  return {
    id: `tag:${authority},${revision.date.slice(0, 10)}:${site.slug}/${feed}/${change.kind}/${encodeURIComponent(change.id)}/${revision.commit}`,
    title: entryTitle(change, how, record),
    updated: revision.date,
    author: revision.author ?? site.name,
    link,
    related,
    summary: lines.join(' '),
    html,
    categories: [how, ...(change.tier ? ['tier'] : []), ...change.groups],
  };
}

const HOW: readonly [keyof Pick<ContentRevision, 'added' | 'changed' | 'removed'>, How][] = [
  ['added', 'added'],
  ['changed', 'changed'],
  ['removed', 'removed'],
];

const ABOUT: Record<FeedName, string> = {
  atlas:
    'New Divergence Atlas records, re-elicitations and answers appended, tier changes with the evidence behind them, and tension dispositions, as merged into the content.',
  works: 'New works in the corpus, as merged into the content.',
};

/** One feed, newest first, at most `limit` entries; `generatedAt` dates a feed with none. */
export function buildFeed(name: FeedName, history: ChangeHistory, site: FeedSite, lookup: FeedLookup, generatedAt: string, limit = FEED_ENTRIES): Feed {
  const entries: FeedEntry[] = [];
  for (const revision of history.revisions) {
    if (entries.length >= limit) break;
    if (revision.commit === null || revision.date === null) continue;
    const committed = revision as ContentRevision & { commit: string; date: string };
    for (const [list, how] of HOW) {
      for (const change of committed[list]) if (worthAnEntry(name, change, how)) entries.push(entryOf(name, site, committed, change, how, lookup));
    }
  }
  const kept = entries.slice(0, limit);
  const state =
    history.history === 'unavailable'
      ? ` History unavailable (${history.reason ?? 'no git history'}): this build had no git history of its content, so the feed lists nothing rather than guess.`
      : history.history === 'truncated'
        ? ` Older commits were not read (${history.reason ?? 'history truncated'}).`
        : '';
  return {
    name,
    id: `${site.base}${FEED_PATHS[name].atom}`,
    title: `${site.name}: ${name === 'atlas' ? 'Divergence Atlas' : 'Corpus'} changes`,
    subtitle: `${ABOUT[name]}${state}`,
    home: `${site.base}/${name}/`,
    atom: `${site.base}${FEED_PATHS[name].atom}`,
    json: `${site.base}${FEED_PATHS[name].json}`,
    updated: kept[0]?.updated ?? generatedAt,
    author: site.name,
    entries: kept,
  };
}

const xml = (text: string) => escapeHtml(text).replace(/'/g, '&apos;');

/** The feed as Atom (RFC 4287). */
export function renderAtom(feed: Feed): string {
  const entries = feed.entries.map((entry) =>
    [
      '  <entry>',
      `    <id>${xml(entry.id)}</id>`,
      `    <title type="text">${xml(entry.title)}</title>`,
      `    <updated>${xml(entry.updated)}</updated>`,
      `    <published>${xml(entry.updated)}</published>`,
      `    <author><name>${xml(entry.author)}</name></author>`,
      `    <link rel="alternate" type="text/html" href="${xml(entry.link)}"/>`,
      ...entry.related.map((link) => `    <link rel="related" href="${xml(link.href)}" title="${xml(link.title)}"/>`),
      ...entry.categories.map((term) => `    <category term="${xml(term)}"/>`),
      `    <summary type="text">${xml(entry.summary)}</summary>`,
      `    <content type="html">${xml(entry.html)}</content>`,
      '  </entry>',
    ].join('\n'),
  );
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<feed xmlns="http://www.w3.org/2005/Atom">',
    `  <id>${xml(feed.id)}</id>`,
    `  <title type="text">${xml(feed.title)}</title>`,
    `  <subtitle type="text">${xml(feed.subtitle)}</subtitle>`,
    `  <updated>${xml(feed.updated)}</updated>`,
    `  <author><name>${xml(feed.author)}</name></author>`,
    `  <link rel="self" type="${ATOM_TYPE}" href="${xml(feed.atom)}"/>`,
    `  <link rel="alternate" type="text/html" href="${xml(feed.home)}"/>`,
    `  <link rel="alternate" type="${JSON_FEED_TYPE}" href="${xml(feed.json)}"/>`,
    ...entries,
    '</feed>',
    '',
  ].join('\n');
}

/** The feed as JSON Feed 1.1 (https://www.jsonfeed.org/version/1.1/). */
export function renderJsonFeed(feed: Feed): JsonFeed {
  return {
    version: 'https://jsonfeed.org/version/1.1',
    title: feed.title,
    home_page_url: feed.home,
    feed_url: feed.json,
    description: feed.subtitle,
    authors: [{ name: feed.author }],
    language: 'en',
    items: feed.entries.map((entry) => ({
      id: entry.id,
      url: entry.link,
      title: entry.title,
      summary: entry.summary,
      content_html: entry.html,
      content_text: entry.summary,
      date_published: entry.updated,
      date_modified: entry.updated,
      authors: [{ name: entry.author }],
      tags: entry.categories,
      _polyphony: { related: entry.related },
    })),
  };
}
