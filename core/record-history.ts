/**
 * Each record's revisions (issue 45, part 3), cut from the content's history (docs/CHANGES.md):
 * the commits that added, changed or removed it, newest first, each with a short line of what
 * changed ("tier C0 → C2", "2 answers appended", "added"). Pure over the history the build read.
 */
import type { ChangedRecordKind, ChangeHistory, ContentRevision, RecordChange } from '../schemas/api/changes.ts';
import type { RecordHistory, RecordRevision } from '../schemas/api/record-history.ts';

type Change = RecordRevision['change'];
type Described = Pick<RecordChange, 'tier' | 'answers_added' | 'annotations_added' | 'dispositions_added' | 'fields'>;

const counted = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** Fields a part of the line already says (the tier says certification, the counts say answers and annotations). */
function spokenFor(change: Described): Set<string> {
  const said = new Set<string>();
  if (change.tier) said.add('certification');
  if (change.answers_added > 0) said.add('answers');
  if (change.annotations_added > 0) said.add('annotations');
  if (change.dispositions_added.length > 0) said.add('dispositions');
  return said;
}

/** What changed, in a few words: "added", "removed", "tier C0 → C2; 2 answers appended", "edited: body". */
export function describeChange(change: Described, how: Change): string {
  if (how !== 'changed') return how;
  const parts: string[] = [];
  if (change.tier) parts.push(`tier ${change.tier.from ?? 'none'} → ${change.tier.to ?? 'none'}`);
  if (change.answers_added > 0) parts.push(`${counted(change.answers_added, 'answer', 'answers')} appended`);
  if (change.annotations_added > 0) parts.push(`${counted(change.annotations_added, 'annotation', 'annotations')} added`);
  if (change.dispositions_added.length > 0)
    parts.push(`${change.dispositions_added.length === 1 ? 'disposition' : 'dispositions'} ${change.dispositions_added.join(', ')}`);
  const said = spokenFor(change);
  if (change.fields.includes('evidence')) parts.push('certification evidence added');
  const edited = change.fields.filter((field) => !said.has(field) && field !== 'evidence');
  if (edited.length > 0) parts.push(`edited: ${edited.join(', ')}`);
  return parts.length > 0 ? parts.join('; ') : 'edited';
}

export const recordKey = (kind: ChangedRecordKind, id: string) => `${kind}\u0000${id}`;

function revisionOf(revision: ContentRevision, change: RecordChange, how: Change): RecordRevision {
  return {
    corpus_rev: revision.corpus_rev,
    commit: revision.commit,
    date: revision.date,
    author: revision.author,
    subject: revision.subject,
    change: how,
    what: describeChange(change, how),
    tier: change.tier,
    answers_added: change.answers_added,
    annotations_added: change.annotations_added,
    fields: change.fields,
  };
}

/**
 * Every record's revisions, newest first (the history's order), keyed by recordKey(kind, id);
 * `kinds` keeps only those kinds (the API keeps the Atlas's, the build works' and the Atlas's).
 */
export function recordRevisions(history: Pick<ChangeHistory, 'revisions'>, kinds: readonly ChangedRecordKind[]): Map<string, RecordRevision[]> {
  const byRecord = new Map<string, RecordRevision[]>();
  for (const revision of history.revisions) {
    const lists: [RecordChange[], Change][] = [
      [revision.added, 'added'],
      [revision.changed, 'changed'],
      [revision.removed, 'removed'],
    ];
    for (const [changes, how] of lists) {
      for (const change of changes) {
        if (!kinds.includes(change.kind)) continue;
        const key = recordKey(change.kind, change.id);
        const list = byRecord.get(key);
        if (list) list.push(revisionOf(revision, change, how));
        else byRecord.set(key, [revisionOf(revision, change, how)]);
      }
    }
  }
  return byRecord;
}

/** The sentence a page shows above the list (and the twins carry as note). */
function historyNote(history: Pick<ChangeHistory, 'history' | 'reason'>, revisions: readonly RecordRevision[]): string {
  if (history.history === 'unavailable') return `History unavailable: ${history.reason ?? 'this build had no git history of its content'}.`;
  const latest = revisions[0];
  const listed =
    latest === undefined
      ? 'No commit of the content lists this record (a record kept by the running service and not yet exported to the content, or not yet built from git).'
      : `${counted(revisions.length, 'revision', 'revisions')}, the latest ${latest.date === null ? 'not yet committed' : latest.date.slice(0, 10)}.`;
  return history.history === 'truncated' ? `${listed} Older commits were not read (${history.reason ?? 'history truncated'}).` : listed;
}

/** One record's history: its revisions (from recordRevisions) with the state of the whole history. */
export function recordHistory(history: Pick<ChangeHistory, 'history' | 'reason'>, revisions: readonly RecordRevision[] | undefined): RecordHistory {
  const listed = history.history === 'unavailable' ? [] : [...(revisions ?? [])];
  return { history: history.history, reason: history.reason, revisions: listed, note: historyNote(history, listed) };
}
