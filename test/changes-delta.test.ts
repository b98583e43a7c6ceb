/**
 * The rules of the delta GET /api/changes answers (core/changes.ts), on histories written out by
 * hand: how one record's changes across revisions collapse, where a delta starts when several
 * points of history share a revision, the pages, and what no history answers. And what one change
 * did, record by record (content-files/change/record-changes.ts), on snapshots written out by hand.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { contentChanges } from '../content-files/change/record-changes.ts';
import { changesPages, changesSince, type DeltaOutcome } from '../core/changes.ts';
import {
  ChangesDeltaSchema,
  ChangesIndexSchema,
  ChangesPageSchema,
  type ChangeHistory,
  type ChangesDelta,
  type ContentRevision,
  type RecordChange,
} from '../schemas/api/changes.ts';

const rev = (n: number) => n.toString(16).padStart(16, '0');
const hash = (n: number) => n.toString(16).padStart(64, '0');

function change(id: string, before: number | null, after: number | null, extra: Partial<RecordChange> = {}): RecordChange {
  return {
    id,
    kind: 'divergence',
    file: `divergences/${id}.md`,
    content_hash: after === null ? null : hash(after),
    previous_content_hash: before === null ? null : hash(before),
    fields: [],
    tier: null,
    answers_added: 0,
    annotations_added: 0,
    dispositions_added: [],
    groups: [],
    notes: [],
    overrides: [],
    ...extra,
  };
}

/** Revisions given oldest first, each moving the revision from n to n + 1 unless `same`. */
function history(steps: { changes: RecordChange[]; files?: ContentRevision['files']; same?: boolean }[]): ChangeHistory {
  let at = 1;
  const revisions: ContentRevision[] = steps.map((step, index) => {
    const parent = at;
    if (!step.same) at++;
    const lists = { added: [] as RecordChange[], changed: [] as RecordChange[], removed: [] as RecordChange[] };
    for (const item of step.changes) {
      (item.previous_content_hash === null ? lists.added : item.content_hash === null ? lists.removed : lists.changed).push(item);
    }
    return {
      corpus_rev: rev(at),
      parent_rev: rev(parent),
      commit: `c${index}`,
      date: '2026-01-01T00:00:00Z',
      author: 'A',
      subject: `step ${index}`,
      ...lists,
      files: step.files ?? [],
    };
  });
  return { history: 'complete', reason: null, current_rev: rev(at), oldest_rev: rev(1), revisions: revisions.reverse() };
}

function delta(outcome: DeltaOutcome): ChangesDelta {
  if (outcome.kind !== 'delta') throw new Error(`expected a delta, got ${outcome.kind}`);
  return ChangesDeltaSchema.parse(outcome.delta);
}

describe('one record across revisions', () => {
  const steps = history([
    { changes: [change('D1', null, 1, { tier: { from: null, to: 'C0' } }), change('D2', 20, 21, { fields: ['body'] }), change('D3', 30, null)] },
    {
      changes: [
        change('D1', 1, 2, { fields: ['annotations'], annotations_added: 1, groups: ['annotations'] }),
        change('D2', 21, null),
        change('D3', null, 31),
        change('D4', null, 40),
      ],
    },
    {
      changes: [
        change('D1', 2, 3, { fields: ['answers'], answers_added: 2, tier: { from: 'C0', to: 'C2' }, groups: ['new-answers'] }),
        change('D4', 40, null),
        change('D5', 50, 51, { tier: { from: 'C1', to: 'C2' } }),
      ],
    },
    { changes: [change('D5', 51, 52, { tier: { from: 'C2', to: 'C1' }, overrides: ['certification-unearned'] })] },
  ]);

  it('added then changed is added; changed then removed is removed; removed then added is changed; added then removed is left out', () => {
    const all = delta(changesSince(steps, rev(1)));
    expect(all.revisions.map((revision) => revision.commit)).toEqual(['c3', 'c2', 'c1', 'c0']);
    expect(all.added.map((item) => [item.id, item.previous_content_hash, item.content_hash, item.commits])).toEqual([
      ['D1', null, hash(3), ['c2', 'c1', 'c0']],
    ]);
    expect(all.removed.map((item) => [item.id, item.previous_content_hash, item.content_hash])).toEqual([['D2', hash(20), null]]);
    expect(all.changed.map((item) => [item.id, item.previous_content_hash, item.content_hash])).toEqual([
      ['D3', hash(30), hash(31)],
      ['D5', hash(50), hash(52)],
    ]);
    expect(all.added.concat(all.changed, all.removed).map((item) => item.id)).not.toContain('D4');
  });

  it('fields and groups united, counts summed, the tier from the first to the last (none when it came back)', () => {
    const [d1] = delta(changesSince(steps, rev(1))).added;
    expect(d1).toMatchObject({
      fields: ['annotations', 'answers'],
      answers_added: 2,
      annotations_added: 1,
      groups: ['annotations', 'new-answers'],
      tier: { from: null, to: 'C2' },
    });
    const d5 = delta(changesSince(steps, rev(1))).changed.find((item) => item.id === 'D5')!;
    expect(d5).toMatchObject({ tier: null, overrides: ['certification-unearned'], commits: ['c3', 'c2'] });
    const lastOnly = delta(changesSince(steps, rev(4))).changed;
    expect(lastOnly.map((item) => [item.id, item.tier])).toEqual([['D5', { from: 'C2', to: 'C1' }]]);
  });

  it('the current revision is up to date; an unknown one is unknown', () => {
    expect(delta(changesSince(steps, steps.current_rev))).toMatchObject({ up_to_date: true, revisions: [], added: [], changed: [], removed: [] });
    expect(changesSince(steps, rev(99)).kind).toBe('unknown-revision');
  });
});

describe('points of history with the same revision', () => {
  // An evidence log appended (the revision kept), then a record changed.
  const steps = history([
    { changes: [change('D1', 1, 2)] },
    { changes: [change('D1', 2, 2, { fields: ['evidence'], groups: ['evidence'] })], same: true },
    { changes: [change('D2', 20, 21)] },
  ]);

  it('a reader at a revision two commits share is given both: it may have read before the first', () => {
    const from = delta(changesSince(steps, rev(2)));
    expect(from.revisions.map((revision) => revision.commit)).toEqual(['c2', 'c1']);
    expect(from.changed.map((item) => [item.id, item.fields])).toEqual([
      ['D1', ['evidence']],
      ['D2', []],
    ]);
  });

  it('files collapse the same way', () => {
    const files = history([
      {
        changes: [],
        files: [
          { file: 'models.yaml', change: 'changed' },
          { file: 'federation/X.md', change: 'added' },
        ],
      },
      {
        changes: [],
        files: [
          { file: 'federation/X.md', change: 'removed' },
          { file: 'claims.yaml', change: 'removed' },
        ],
      },
    ]);
    expect(delta(changesSince(files, rev(1))).files).toEqual([
      { file: 'claims.yaml', change: 'removed' },
      { file: 'models.yaml', change: 'changed' },
    ]);
  });
});

describe('pages and no history', () => {
  it('pages of the given size, newest first, linked both ways, and an index naming them', () => {
    const long = history(Array.from({ length: 5 }, (_, index) => ({ changes: [change(`D${index}`, index, index + 100)] })));
    const { index, pages } = changesPages(long, 2);
    ChangesIndexSchema.parse(index);
    for (const page of pages) ChangesPageSchema.parse(page);
    expect(index).toMatchObject({ revisions: 5, page_size: 2, pages: ['/changes/page-1.json', '/changes/page-2.json', '/changes/page-3.json'] });
    expect(pages.map((page) => [page.page, page.previous, page.next, page.revisions.map((revision) => revision.commit)])).toEqual([
      [1, null, '/changes/page-2.json', ['c4', 'c3']],
      [2, '/changes/page-1.json', '/changes/page-3.json', ['c2', 'c1']],
      [3, '/changes/page-2.json', null, ['c0']],
    ]);
  });

  it('without history: one empty page, every earlier revision unanswerable, the current one up to date', () => {
    const none: ChangeHistory = { history: 'unavailable', reason: 'a tarball', current_rev: rev(7), oldest_rev: null, revisions: [] };
    const { index, pages } = changesPages(none);
    expect(pages).toEqual([{ page: 1, pages: 1, current_rev: rev(7), revisions: [], previous: null, next: null }]);
    expect(index).toMatchObject({ history: 'unavailable', reason: 'a tarball', pages: ['/changes/page-1.json'], revisions: 0 });
    expect(index.note).toMatch(/does not guess/);
    expect(changesSince(none, rev(6)).kind).toBe('history-unavailable');
    expect(delta(changesSince(none, rev(7)))).toMatchObject({ up_to_date: true, history: 'unavailable', revisions: [] });
  });
});

describe('what one change did, record by record', () => {
  const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
  const d1 = Buffer.from('---\nid: TST-D1\nquestion: Q\nanswers: []\n---\nBody\n');
  const base = new Map<string, Buffer>([
    ['divergences/TST-D1.md', d1],
    ['divergences/TST-D1.certification.jsonl', Buffer.from('{"kind":"call"}\n')],
    ['divergences/TST-D2.md', Buffer.from('---\nid: TST-D2\nquestion: Q\nanswers: []\n---\n')],
    ['models.yaml', Buffer.from('a: 1\n')],
  ]);
  const head = new Map<string, Buffer>([
    ['divergences/TST-D1.md', d1],
    ['divergences/TST-D1.certification.jsonl', Buffer.from('{"kind":"call"}\n{"kind":"call"}\n')],
    ['models.yaml', Buffer.from('a: 2\n')],
    ['works/TST-9.md', Buffer.from('---\nid: TST-9\ntitle: Tides\ncontributors: [Ana]\n---\nText\n')],
  ]);
  const changes = contentChanges(base, head);

  it('an evidence log appended beside a record is that record changed in its evidence', () => {
    expect(changes.changed).toEqual([
      expect.objectContaining({ id: 'TST-D1', kind: 'divergence', file: 'divergences/TST-D1.md', fields: ['evidence'], groups: ['evidence'], tier: null }),
    ]);
    expect(changes.changed[0]!.content_hash).toBe(sha(d1));
    expect(changes.changed[0]!.previous_content_hash).toBe(sha(d1));
  });

  it('a record added, a record removed (named as overridden: records are never removed), other files as files', () => {
    expect(changes.added).toEqual([
      expect.objectContaining({ id: 'TST-9', kind: 'work', groups: ['new-works'], notes: ['TST-9: "Tides" by Ana'], previous_content_hash: null }),
    ]);
    expect(changes.removed).toEqual([
      expect.objectContaining({ id: 'TST-D2', kind: 'divergence', content_hash: null, overrides: ['record-removed'], tier: { from: 'C0', to: null } }),
    ]);
    expect(changes.files).toEqual([{ file: 'models.yaml', change: 'changed' }]);
  });
});
