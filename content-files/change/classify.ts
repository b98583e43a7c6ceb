/**
 * Classifies every difference between two snapshots of a content folder (the base of a pull
 * request and its result) for a curator, and refuses what would rewrite the record: see
 * CHANGE_RULES and docs/CONTRIBUTING.md. Pure over the two snapshots; reading them from git is
 * the CLI's share (scripts/lib/git-snapshot.ts).
 */
import { EVIDENCE_FILE_SUFFIX } from '../../schemas/certification.ts';
import { checkAppended, checkRecord } from './records.ts';
import type { ChangeReport, Snapshot } from './report.ts';
import { asArray, asRecord, asString, jsonLines, readMarkdown, readYamlData, same, type ParsedFile } from './values.ts';

type Kind = 'record' | 'work' | 'evidence' | 'tension' | 'origin-copy' | 'claims' | 'other';

function kindOf(file: string): Kind {
  if (/^divergences\/[^/]+\.md$/.test(file)) return 'record';
  if (/^(works|proposals)\/[^/]+\.md$/.test(file)) return 'work';
  if (file.startsWith('divergences/') && file.endsWith(EVIDENCE_FILE_SUFFIX)) return 'evidence';
  if (/^tensions\/[^/]+\.yaml$/.test(file)) return 'tension';
  if (/^federation\/[^/]+\.md$/.test(file)) return 'origin-copy';
  if (file === 'claims.yaml') return 'claims';
  return 'other';
}

export function classifyChange(base: Snapshot, head: Snapshot): ChangeReport {
  const report: ChangeReport = { allowed: [], refusals: [] };
  const files = [...new Set([...base.keys(), ...head.keys()])].sort();
  for (const file of files) {
    const before = base.get(file);
    const after = head.get(file);
    if (before !== undefined && after !== undefined && before.equals(after)) continue;
    const kind = kindOf(file);
    if (kind === 'record' || kind === 'work') {
      const parsedBefore = readMarkdown(base, file);
      const parsedAfter = readMarkdown(head, file);
      if (after === undefined) refuseRemoval(file, parsedBefore, base, head, report);
      // A file that does not parse is the validator's to report; nothing to compare here.
      else if (parsedAfter === undefined || (before !== undefined && parsedBefore === undefined)) continue;
      else if (kind === 'record') checkRecord({ file, base: parsedBefore, head: parsedAfter, baseSnapshot: base, headSnapshot: head }, report);
      else checkWork(file, parsedBefore, parsedAfter, report);
    } else if (kind === 'evidence') checkEvidence(file, before, after, report);
    else if (kind === 'tension') checkTension(file, before, after, base, head, report);
    else if (kind === 'origin-copy') {
      if (before === undefined) report.allowed.push({ group: 'imports', file, message: "the origin's copy of an import, as fetched" });
      else
        report.refusals.push({
          file,
          field: '(file)',
          rule: 'federation-provenance',
          message: `the origin's copy of an imported record is kept as fetched; it was ${after === undefined ? 'removed' : 'edited'}`,
        });
    } else if (kind === 'claims' && before !== undefined) checkClaims(file, base, head, report);
    else report.allowed.push({ group: 'other', file, message: before === undefined ? 'added' : after === undefined ? 'removed' : 'changed' });
  }
  return report;
}

/** A record or work that is gone: removed, or renamed (the same question and answers, or title and body, under another id). */
function refuseRemoval(file: string, parsed: ParsedFile | undefined, base: Snapshot, head: Snapshot, report: ChangeReport): void {
  const id = asString(parsed?.data.id) ?? file;
  const folder = file.slice(0, file.indexOf('/'));
  const fingerprint = (entry: ParsedFile) => (folder === 'divergences' ? [entry.data.question, entry.data.answers] : [entry.data.title, entry.body.trim()]);
  const renamed = parsed
    ? [...head.keys()]
        .filter((candidate) => candidate.startsWith(`${folder}/`) && candidate.endsWith('.md') && !base.has(candidate))
        .find((candidate) => {
          const entry = readMarkdown(head, candidate);
          return entry !== undefined && same(fingerprint(entry), fingerprint(parsed));
        })
    : undefined;
  const renamedTo = renamed ? asString(readMarkdown(head, renamed)?.data.id) : undefined;
  report.refusals.push({
    file,
    field: renamed ? 'id' : '(file)',
    rule: renamed ? 'id-changed' : 'record-removed',
    message: renamed
      ? `${id} was renamed to ${renamedTo ?? renamed} (${renamed}); ids never change: supersede the record instead`
      : `${id} was removed; records and works are never removed: supersede or annotate instead`,
  });
}

function checkWork(file: string, base: ParsedFile | undefined, head: ParsedFile, report: ChangeReport): void {
  const contributors = asArray(head.data.contributors).map(String).join(', ');
  if (base === undefined) {
    report.allowed.push({ group: 'new-works', file, message: `${asString(head.data.id) ?? '?'}: "${asString(head.data.title) ?? '?'}" by ${contributors}` });
    return;
  }
  if (base.data.id !== head.data.id) {
    report.refusals.push({ file, field: 'id', rule: 'id-changed', message: `the id changed from ${String(base.data.id)} to ${String(head.data.id)}` });
  }
  const keys = [...new Set([...Object.keys(base.data), ...Object.keys(head.data)])];
  const edited = keys.filter((key) => key !== 'id' && !same(base.data[key], head.data[key])).sort();
  if (base.body !== head.body) edited.push('body');
  if (edited.length > 0) report.allowed.push({ group: 'edits', file, message: `edited: ${edited.join(', ')} (contributors: ${contributors})` });
}

function checkEvidence(file: string, before: Buffer | undefined, after: Buffer | undefined, report: ChangeReport): void {
  if (after === undefined) {
    report.refusals.push({ file, field: '(file)', rule: 'append-only', message: 'an evidence log is append-only; it was removed' });
    return;
  }
  const previous = before ?? Buffer.alloc(0);
  if (!after.subarray(0, previous.length).equals(previous)) {
    const line = previous.subarray(0, commonPrefix(previous, after)).toString('utf8').split('\n').length;
    report.refusals.push({
      file,
      field: `line ${line}`,
      rule: 'append-only',
      message: 'an evidence log is append-only; an existing line was edited or removed',
    });
    return;
  }
  const lines = jsonLines(after.subarray(previous.length).toString('utf8'));
  const calls = lines.filter((line) => line.kind === 'call').length;
  const results = lines.filter((line) => line.kind === 'result');
  const written = results.filter((line) => line.written === true).length;
  report.allowed.push({
    group: 'evidence',
    file,
    message: `${before === undefined ? 'new log, ' : ''}${lines.length} lines appended (${calls} calls, ${results.length} results, ${written} written)`,
  });
}

function commonPrefix(a: Buffer, b: Buffer): number {
  let index = 0;
  while (index < a.length && index < b.length && a[index] === b[index]) index++;
  return index;
}

function checkTension(file: string, before: Buffer | undefined, after: Buffer | undefined, base: Snapshot, head: Snapshot, report: ChangeReport): void {
  if (after === undefined) {
    report.refusals.push({ file, field: '(file)', rule: 'append-only', message: "a tension's dispositions are append-only; the file was removed" });
    return;
  }
  const now = readYamlData(head, file);
  if (now === undefined) return;
  if (before === undefined) {
    const kinds = asArray(now.dispositions).map((entry) => String(asRecord(entry).kind));
    report.allowed.push({ group: 'dispositions', file, message: `new tension file: ${kinds.join(', ')}` });
    return;
  }
  const previous = readYamlData(base, file);
  if (previous === undefined) return;
  if (previous.key !== now.key)
    report.refusals.push({ file, field: 'key', rule: 'append-only', message: `the key changed from ${String(previous.key)} to ${String(now.key)}` });
  checkAppended(file, 'dispositions', previous, now, report, 'dispositions');
}

/** A claim is never removed: a retracted claim stays with the reason for the retraction. */
function checkClaims(file: string, base: Snapshot, head: Snapshot, report: ChangeReport): void {
  const ids = (snapshot: Snapshot) => asArray(readYamlData(snapshot, file)?.claims).map((claim) => asString(asRecord(claim).id));
  const now = new Set(ids(head));
  const gone = ids(base).filter((id) => id !== undefined && !now.has(id));
  for (const id of gone) {
    report.refusals.push({ file, field: `claims.${id}`, rule: 'append-only', message: `claim ${id} was removed; retract it (status: retracted) instead` });
  }
  report.allowed.push({ group: 'other', file, message: 'claims changed' });
}
