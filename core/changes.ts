/**
 * The content's history as readers follow it (issue 45, docs/CHANGES.md): the build's revisions
 * cut into pages for /changes/, and the delta from a revision a reader holds to the current one
 * for GET /api/changes?since=. Pure over the history the build read from git.
 */
import type {
  ChangeHistory,
  ChangesDelta,
  ChangesIndex,
  ChangesPage,
  CollapsedChange,
  ContentRevision,
  FileChange,
  RecordChange,
} from '../schemas/api/changes.ts';

/** Revisions per page of /changes/page-<n>.json. */
export const CHANGES_PAGE_SIZE = 50;
export const CHANGES_INDEX_PATH = '/changes/index.json';
export const changesPagePath = (page: number) => `/changes/page-${page}.json`;

/** /changes/index.json and its pages, newest revisions first. */
export function changesPages(history: ChangeHistory, pageSize = CHANGES_PAGE_SIZE): { index: ChangesIndex; pages: ChangesPage[] } {
  // Page 1 always exists, empty when nothing is listed: a reader following the index finds a page.
  const count = Math.max(1, Math.ceil(history.revisions.length / pageSize));
  const pages = Array.from({ length: count }, (_, at): ChangesPage => ({
    page: at + 1,
    pages: count,
    current_rev: history.current_rev,
    revisions: history.revisions.slice(at * pageSize, (at + 1) * pageSize),
    previous: at === 0 ? null : changesPagePath(at),
    next: at + 1 === count ? null : changesPagePath(at + 2),
  }));
  return {
    index: {
      history: history.history,
      reason: history.reason,
      current_rev: history.current_rev,
      oldest_rev: history.oldest_rev,
      revisions: history.revisions.length,
      page_size: pageSize,
      pages: pages.map((page) => changesPagePath(page.page)),
      since_url: '/api/changes?since=<corpus_rev>',
      note:
        history.history === 'unavailable'
          ? 'This build had no git history of its content, so it lists no revisions; it does not guess. Read /records.json and /api/manifest whole.'
          : 'Each revision is one commit that touched the content folder, newest first, with the records it added, changed and removed relative to its first parent. corpus_rev is what /api/manifest reports for a build of that commit; hold it and ask GET /api/changes?since=<it> for everything after it.',
    },
    pages,
  };
}

export type DeltaOutcome = { kind: 'delta'; delta: ChangesDelta } | { kind: 'unknown-revision' } | { kind: 'history-unavailable' };

/**
 * The revisions after `since` (an earlier revision than the current one): from the newest point
 * of history with that revision, moved back over older points with the same one (a commit that
 * changed only files outside the revision, such as an evidence log, keeps it), so a reader at
 * any of them misses nothing.
 */
function revisionsAfter(history: ChangeHistory, since: string): ContentRevision[] | undefined {
  const points = history.revisions.map((revision) => revision.corpus_rev);
  const oldest = history.revisions.at(-1);
  if (oldest) points.push(oldest.parent_rev);
  let at = points.indexOf(since);
  if (at < 0) return undefined;
  while (points[at + 1] === since) at++;
  return history.revisions.slice(0, at);
}

export function changesSince(history: ChangeHistory, since: string): DeltaOutcome {
  const { history: state, reason, current_rev, oldest_rev } = history;
  const frame = { since, history: state, reason, current_rev, oldest_rev };
  if (since !== current_rev && state === 'unavailable') return { kind: 'history-unavailable' };
  // The current revision is up to date: what kept it (an evidence log) cannot be told apart by revision.
  const revisions = since === current_rev ? [] : revisionsAfter(history, since);
  if (revisions === undefined) return { kind: 'unknown-revision' };
  const { added, changed, removed } = collapseRecords(revisions);
  return {
    kind: 'delta',
    delta: {
      ...frame,
      up_to_date: since === current_rev,
      revisions: revisions.map(({ corpus_rev, parent_rev, commit, date, author, subject }) => ({ corpus_rev, parent_rev, commit, date, author, subject })),
      added,
      changed,
      removed,
      files: collapseFiles(revisions),
    },
  };
}

const ID_ORDER = new Intl.Collator('en', { numeric: true });
const union = (a: readonly string[], b: readonly string[]) => [...a, ...b.filter((item) => !a.includes(item))];

/** One record's changes across revisions, oldest first, as one (see CollapsedChangeSchema). */
function merge(earlier: CollapsedChange, later: RecordChange, commit: string | null): CollapsedChange {
  const first = earlier.tier ?? later.tier;
  const last = later.tier ?? earlier.tier;
  const tier = first && last ? { from: first.from, to: last.to } : null;
  return {
    ...later,
    previous_content_hash: earlier.previous_content_hash,
    fields: union(earlier.fields, later.fields),
    tier,
    answers_added: earlier.answers_added + later.answers_added,
    annotations_added: earlier.annotations_added + later.annotations_added,
    dispositions_added: [...earlier.dispositions_added, ...later.dispositions_added],
    groups: union(earlier.groups, later.groups),
    notes: [...earlier.notes, ...later.notes],
    overrides: union(earlier.overrides, later.overrides),
    commits: commit === null || earlier.commits.includes(commit) ? earlier.commits : [commit, ...earlier.commits],
  };
}

function collapseRecords(revisions: readonly ContentRevision[]): { added: CollapsedChange[]; changed: CollapsedChange[]; removed: CollapsedChange[] } {
  const records = new Map<string, CollapsedChange>();
  for (const revision of [...revisions].reverse()) {
    for (const change of [...revision.added, ...revision.changed, ...revision.removed]) {
      const key = `${change.kind}\u0000${change.id}`;
      const earlier = records.get(key);
      records.set(key, earlier ? merge(earlier, change, revision.commit) : { ...change, commits: revision.commit === null ? [] : [revision.commit] });
    }
  }
  const all = [...records.values()]
    .map((change) => (change.tier && change.tier.from === change.tier.to ? { ...change, tier: null } : change))
    .sort((a, b) => a.kind.localeCompare(b.kind) || ID_ORDER.compare(a.id, b.id));
  return {
    // Present now and not at since; present at both; present at since and gone now (one added and removed again is left out).
    added: all.filter((change) => change.previous_content_hash === null && change.content_hash !== null),
    changed: all.filter((change) => change.previous_content_hash !== null && change.content_hash !== null),
    removed: all.filter((change) => change.previous_content_hash !== null && change.content_hash === null),
  };
}

function collapseFiles(revisions: readonly ContentRevision[]): FileChange[] {
  const files = new Map<string, { before: boolean; now: boolean }>();
  for (const revision of [...revisions].reverse()) {
    for (const { file, change } of revision.files) {
      const seen = files.get(file);
      files.set(file, { before: seen ? seen.before : change !== 'added', now: change !== 'removed' });
    }
  }
  return [...files]
    .filter(([, { before, now }]) => before || now)
    .map(([file, { before, now }]): FileChange => ({ file, change: !before ? 'added' : !now ? 'removed' : 'changed' }))
    .sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}
