/**
 * What one change to a content folder did, record by record, for readers who follow the Atlas
 * (issue 45, docs/CHANGES.md): each record added, changed or removed with its id, kind, content
 * hash and the fields that changed, beside what the change check (classify.ts) says of it. Pure
 * over two snapshots; reading them from git is scripts/lib/change-history.ts's share.
 */
import { createHash } from 'node:crypto';
import { EVIDENCE_FILE_SUFFIX } from '../../schemas/certification.ts';
import type { ChangedRecordKind, FileChange, RecordChange } from '../../schemas/api/changes.ts';
import { classifyChange } from './classify.ts';
import type { ChangeReport, Snapshot } from './report.ts';
import { asArray, asRecord, asString, readMarkdown, readYamlData, same, type Data } from './values.ts';

export interface ContentChanges {
  added: RecordChange[];
  changed: RecordChange[];
  removed: RecordChange[];
  files: FileChange[];
}

const RECORD_FOLDERS: Record<string, ChangedRecordKind> = {
  works: 'work',
  proposals: 'work',
  divergences: 'divergence',
  concepts: 'concept',
  audio: 'audio',
};

/** The kind of record a file is the source of, or undefined for any other file. */
function kindOf(file: string): ChangedRecordKind | undefined {
  const match = /^([a-z]+)\/[^/]+\.(md|yaml)$/.exec(file);
  if (!match) return undefined;
  if (match[2] === 'yaml') return match[1] === 'tensions' ? 'tension' : undefined;
  return RECORD_FOLDERS[match[1]!];
}

/** The front matter (markdown) or the data (YAML) of a record file, or undefined when absent or unreadable. */
function dataOf(snapshot: Snapshot, file: string): { data: Data; body: string } | undefined {
  if (file.endsWith('.yaml')) {
    const data = readYamlData(snapshot, file);
    return data === undefined ? undefined : { data, body: '' };
  }
  return readMarkdown(snapshot, file);
}

function idOf(kind: ChangedRecordKind, file: string, data: Data | undefined): string {
  const named = kind === 'tension' ? asString(data?.key) : kind === 'audio' ? asString(data?.slug) : asString(data?.id);
  return named ?? file.slice(file.indexOf('/') + 1).replace(/\.(md|yaml)$/, '');
}

const sha256 = (bytes: Buffer | undefined) => (bytes === undefined ? null : createHash('sha256').update(bytes).digest('hex'));
const tierOf = (data: Data | undefined) => (data === undefined ? null : (asString(asRecord(data.certification ?? { tier: 'C0' }).tier) ?? null));

/** One record file that differs between the snapshots, as a RecordChange without the change check's words. */
function recordChange(kind: ChangedRecordKind, file: string, base: Snapshot, head: Snapshot): RecordChange {
  const before = dataOf(base, file);
  const after = dataOf(head, file);
  const both = base.has(file) && head.has(file);
  const fields =
    both && before && after
      ? [...new Set([...Object.keys(before.data), ...Object.keys(after.data)])].filter((key) => !same(before.data[key], after.data[key])).sort()
      : [];
  if (both && before && after && before.body !== after.body) fields.push('body');
  const grown = (field: string) => (both ? Math.max(0, asArray(after?.data[field]).length - asArray(before?.data[field]).length) : 0);
  const tiers = kind === 'divergence' ? { from: tierOf(before?.data), to: tierOf(after?.data) } : undefined;
  return {
    id: idOf(kind, file, (after ?? before)?.data),
    kind,
    file,
    content_hash: sha256(head.get(file)),
    previous_content_hash: sha256(base.get(file)),
    fields,
    tier: tiers && tiers.from !== tiers.to ? tiers : null,
    answers_added: kind === 'divergence' ? grown('answers') : 0,
    annotations_added: kind === 'divergence' ? grown('annotations') : 0,
    dispositions_added:
      kind === 'tension'
        ? asArray(after?.data.dispositions)
            .slice(asArray(before?.data.dispositions).length)
            .map((entry) => String(asRecord(entry).kind))
        : [],
    groups: [],
    notes: [],
    overrides: [],
  };
}

/** The change check's lines about a file, added to the record it belongs to. */
function addCheckLines(change: RecordChange, file: string, report: ChangeReport): void {
  for (const entry of report.allowed.filter((allowed) => allowed.file === file)) {
    if (!change.groups.includes(entry.group)) change.groups.push(entry.group);
    change.notes.push(entry.message);
  }
  for (const refusal of report.refusals.filter((refused) => refused.file === file)) {
    if (!change.overrides.includes(refusal.rule)) change.overrides.push(refusal.rule);
    change.notes.push(`${refusal.field}: ${refusal.message}`);
  }
}

const ID_ORDER = new Intl.Collator('en', { numeric: true });
const byKindThenId = (a: RecordChange, b: RecordChange) => a.kind.localeCompare(b.kind) || ID_ORDER.compare(a.id, b.id);

export function contentChanges(base: Snapshot, head: Snapshot): ContentChanges {
  const report = classifyChange(base, head);
  const differing = [...new Set([...base.keys(), ...head.keys()])].filter((file) => {
    const before = base.get(file);
    const after = head.get(file);
    return before === undefined || after === undefined || !before.equals(after);
  });
  const records = new Map<string, RecordChange>();
  const files: FileChange[] = [];
  for (const file of differing.sort()) {
    const kind = kindOf(file);
    if (kind === undefined) continue;
    const change = recordChange(kind, file, base, head);
    addCheckLines(change, file, report);
    records.set(file, change);
  }
  for (const file of differing) {
    if (kindOf(file) !== undefined) continue;
    // An evidence log is the record's too: the certification that was measured, appended beside it.
    const owner =
      file.startsWith('divergences/') && file.endsWith(EVIDENCE_FILE_SUFFIX) ? `divergences/${file.slice(12, -EVIDENCE_FILE_SUFFIX.length)}.md` : undefined;
    if (owner !== undefined && (head.has(owner) || base.has(owner))) {
      const change = records.get(owner) ?? recordChange('divergence', owner, base, head);
      records.set(owner, change);
      if (base.has(owner) && head.has(owner) && !change.fields.includes('evidence')) change.fields.push('evidence');
      addCheckLines(change, file, report);
      continue;
    }
    files.push({ file, change: !base.has(file) ? 'added' : !head.has(file) ? 'removed' : 'changed' });
  }
  const all = [...records.values()];
  return {
    added: all.filter((change) => change.previous_content_hash === null).sort(byKindThenId),
    changed: all.filter((change) => change.previous_content_hash !== null && change.content_hash !== null).sort(byKindThenId),
    removed: all.filter((change) => change.content_hash === null).sort(byKindThenId),
    files,
  };
}
