/**
 * The pure parts of issue 45's feeds and record histories (core/feeds.ts, core/record-history.ts)
 * over histories written by hand: what each change reads as, which changes make an entry (answers
 * appended, a measured tier with its evidence log, a tension disposition; not a plain edit, not an
 * uncommitted build), the cap, and markup in a question. The feeds are read back with feedsmith.
 */
import { parseAtomFeed, parseJsonFeed } from 'feedsmith';
import { describe, expect, it } from 'vitest';
import { buildFeed, FEED_ENTRIES, renderAtom, renderJsonFeed, type FeedLookup } from '../core/feeds.ts';
import { describeChange, recordHistory, recordKey, recordRevisions } from '../core/record-history.ts';
import { JsonFeedSchema } from '../schemas/api/feeds.ts';
import type { ChangeHistory, ContentRevision, RecordChange } from '../schemas/api/changes.ts';

const SITE = { name: 'Test <Atlas>', slug: 'test', base: 'https://example.org/atlas' };
const hash = (n: number) => n.toString(16).padStart(64, '0');
const rev = (n: number) => n.toString(16).padStart(16, '0');

function change(id: string, fields: Partial<RecordChange> = {}): RecordChange {
  return {
    id,
    kind: 'divergence',
    file: `divergences/${id}.md`,
    content_hash: hash(1),
    previous_content_hash: hash(2),
    fields: [],
    tier: null,
    answers_added: 0,
    annotations_added: 0,
    dispositions_added: [],
    groups: [],
    notes: [],
    overrides: [],
    ...fields,
  };
}

function revision(n: number, lists: Partial<Pick<ContentRevision, 'added' | 'changed' | 'removed'>>, committed = true): ContentRevision {
  return {
    corpus_rev: rev(n + 1),
    parent_rev: rev(n),
    commit: committed ? `c${n}`.padEnd(40, '0') : null,
    date: committed ? `2026-03-0${n}T10:00:00+01:00` : null,
    author: committed ? 'Ana' : null,
    subject: committed ? `Commit ${n}` : null,
    added: [],
    changed: [],
    removed: [],
    files: [],
    ...lists,
  };
}

const lookup: FeedLookup = {
  divergence: (id) =>
    id === 'T-D1'
      ? { title: 'Is <b>this</b> & "that" owned?', evidenceUrl: '/records/T-D1.certification.jsonl' }
      : id === 'T-D2'
        ? { title: 'Second?' }
        : undefined,
  work: (id) => (id === 'T-1' ? { title: 'A work' } : undefined),
};

const history: ChangeHistory = {
  history: 'complete',
  reason: null,
  current_rev: rev(6),
  oldest_rev: rev(1),
  revisions: [
    revision(5, { changed: [change('T-D2', { fields: ['question'] })] }, false),
    revision(4, { changed: [change('T-D2', { fields: ['body', 'question'] })] }),
    revision(3, {
      changed: [
        change('T-D1', { fields: ['certification', 'evidence'], tier: { from: 'C0', to: 'C2' }, groups: ['certification', 'evidence'] }),
        change('a__b__topic', { kind: 'tension', file: 'tensions/a__b__topic.yaml', fields: ['dispositions'], dispositions_added: ['held'] }),
      ],
    }),
    revision(2, { changed: [change('T-D2', { fields: ['annotations', 'answers'], answers_added: 2, annotations_added: 1 })] }),
    revision(1, {
      added: [
        change('T-D1', { previous_content_hash: null }),
        change('T-D2', { previous_content_hash: null }),
        change('T-1', { kind: 'work', previous_content_hash: null }),
      ],
    }),
  ],
};

describe('what a change reads as', () => {
  it('says the tier, the answers and annotations, the dispositions, the evidence, then what else was edited', () => {
    expect(describeChange(change('x'), 'added')).toBe('added');
    expect(describeChange(change('x'), 'removed')).toBe('removed');
    expect(describeChange(change('x', { tier: { from: 'C0', to: 'C2' }, fields: ['certification'] }), 'changed')).toBe('tier C0 → C2');
    expect(describeChange(change('x', { answers_added: 2, annotations_added: 1, fields: ['annotations', 'answers', 'body'] }), 'changed')).toBe(
      '2 answers appended; 1 annotation added; edited: body',
    );
    expect(describeChange(change('x', { answers_added: 1, fields: ['answers'] }), 'changed')).toBe('1 answer appended');
    expect(describeChange(change('x', { dispositions_added: ['held', 'repaired'], fields: ['dispositions'] }), 'changed')).toBe('dispositions held, repaired');
    expect(describeChange(change('x', { fields: ['evidence'] }), 'changed')).toBe('certification evidence added');
    expect(describeChange(change('x', { tier: { from: null, to: 'C1' }, fields: ['certification'] }), 'changed')).toBe('tier none → C1');
    expect(describeChange(change('x'), 'changed')).toBe('edited');
  });

  it("a record's history lists its commits newest first, the uncommitted one without a commit, and says when the history is cut", () => {
    const revisions = recordRevisions(history, ['divergence']);
    const d2 = recordHistory(history, revisions.get(recordKey('divergence', 'T-D2')));
    expect(d2.revisions.map((entry) => [entry.commit?.slice(0, 2) ?? null, entry.what])).toEqual([
      [null, 'edited: question'],
      ['c4', 'edited: body, question'],
      ['c2', '2 answers appended; 1 annotation added'],
      ['c1', 'added'],
    ]);
    expect(d2.note).toBe('4 revisions, the latest not yet committed.');
    expect(revisions.has(recordKey('work', 'T-1'))).toBe(false);
    const truncated = recordHistory({ history: 'truncated', reason: 'the newest 5 commits' }, revisions.get(recordKey('divergence', 'T-D1')));
    expect(truncated.note).toBe('2 revisions, the latest 2026-03-03. Older commits were not read (the newest 5 commits).');
    const none = recordHistory({ history: 'unavailable', reason: 'a tarball' }, revisions.get(recordKey('divergence', 'T-D1')));
    expect(none).toEqual({ history: 'unavailable', reason: 'a tarball', revisions: [], note: 'History unavailable: a tarball.' });
    expect(recordHistory(history, undefined).note).toMatch(/^No commit of the content lists this record/);
  });
});

describe('the feeds', () => {
  const atlas = buildFeed('atlas', history, SITE, lookup, '2026-04-01T00:00:00Z');

  it('hold the answers appended, a measured tier with its evidence log, a disposition and the new records; not a plain edit, not an uncommitted build', () => {
    expect(atlas.entries.map((entry) => entry.title)).toEqual([
      'T-D1: tier C0 → C2; certification evidence added',
      'Tension a__b__topic: disposition held',
      'T-D2: 2 answers appended; 1 annotation added',
      'New Atlas record T-D1: Is <b>this</b> & "that" owned?',
      'New Atlas record T-D2: Second?',
    ]);
    const tier = atlas.entries[0]!;
    expect(tier.related).toEqual([
      { href: 'https://example.org/atlas/records/T-D1.json', title: 'The record as JSON, with its history' },
      { href: 'https://example.org/atlas/records/T-D1.certification.jsonl', title: 'Certification evidence log' },
      { href: 'https://example.org/atlas/atlas/T-D1/#cert-heading', title: "The record's certification" },
    ]);
    expect(tier.summary).toContain('Measured: the certification evidence is the log at https://example.org/atlas/records/T-D1.certification.jsonl.');
    expect(atlas.entries[1]!.link).toBe('https://example.org/atlas/tensions/a__b__topic/');
    expect(tier.id).toBe(`tag:example.org,2026-03-03:test/atlas/divergence/T-D1/${'c3'.padEnd(40, '0')}`);
    const works = buildFeed('works', history, SITE, lookup, '2026-04-01T00:00:00Z');
    expect(works.entries.map((entry) => [entry.title, entry.link])).toEqual([['New work T-1: A work', 'https://example.org/atlas/works/T-1/']]);
  });

  it('render as Atom and JSON Feed that feedsmith reads back the same, markup in a title escaped, not interpreted', () => {
    const atom = parseAtomFeed(renderAtom(atlas));
    const jsonText = JSON.stringify(renderJsonFeed(atlas));
    const json = parseJsonFeed(JSON.parse(jsonText));
    JsonFeedSchema.parse(JSON.parse(jsonText));
    expect(atom.title?.value).toBe('Test <Atlas>: Divergence Atlas changes');
    expect(atom.entries!.map((entry) => entry.title?.value)).toEqual(atlas.entries.map((entry) => entry.title));
    expect(json.items!.map((item) => item.title)).toEqual(atlas.entries.map((entry) => entry.title));
    expect(atom.entries!.map((entry) => entry.id)).toEqual(json.items!.map((item) => item.id));
    const newRecord = atom.entries![3]!;
    expect(newRecord.content?.value).toContain('Is &lt;b&gt;this&lt;/b&gt; &amp; &quot;that&quot; owned?');
    expect(newRecord.content?.value).not.toContain('<b>');
  });

  it('keep the newest entries only, and a feed without any is dated by the build', () => {
    const many: ChangeHistory = {
      ...history,
      revisions: Array.from({ length: 80 }, (_, n) => revision(1, { added: [change(`T-D${100 + n}`, { previous_content_hash: null })] })),
    };
    expect(buildFeed('atlas', many, SITE, lookup, '2026-04-01T00:00:00Z').entries).toHaveLength(FEED_ENTRIES);
    const empty = buildFeed('works', { ...history, history: 'unavailable', reason: 'a tarball', revisions: [] }, SITE, lookup, '2026-04-01T00:00:00Z');
    expect(empty).toMatchObject({ entries: [], updated: '2026-04-01T00:00:00Z' });
    expect(empty.subtitle).toMatch(/History unavailable \(a tarball\)/);
    expect(parseAtomFeed(renderAtom(empty)).entries ?? []).toEqual([]);
  });
});
