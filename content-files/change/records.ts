/**
 * The change rules of one Atlas record (`divergences/<id>.md`): verbatim answers, append-only
 * annotations, earned certification blocks, the provenance of federated imports.
 */
import { createHash } from 'node:crypto';
import { EVIDENCE_FILE_SUFFIX } from '../../schemas/certification.ts';
import type { AllowedChange, Refusal, Snapshot } from './report.ts';
import { asArray, asRecord, asString, describe, firstDifference, jsonLines, readMarkdown, same, type Data, type ParsedFile } from './values.ts';

/** The fields of an answer that make it the witness it is. */
const VERBATIM_FIELDS = ['text', 'model', 'model_id', 'date', 'truncated', 'round2'] as const;

export interface RecordChange {
  file: string;
  base: ParsedFile | undefined;
  head: ParsedFile;
  baseSnapshot: Snapshot;
  headSnapshot: Snapshot;
}

interface Out {
  allowed: AllowedChange[];
  refusals: Refusal[];
}

const certificationOf = (data: Data): Data => asRecord(data.certification ?? { tier: 'C0' });
const isBareC0 = (certification: Data) => same(certification, { tier: 'C0' });
const federationOf = (data: Data): Data | undefined => {
  const federation = asRecord(data.provenance).federation;
  return federation === undefined ? undefined : asRecord(federation);
};

export function checkRecord(change: RecordChange, out: Out): void {
  const { file, base, head } = change;
  const id = asString(head.data.id) ?? file;
  if (base === undefined) {
    const answers = asArray(head.data.answers).length;
    out.allowed.push({ group: 'new-records', file, message: `${id}: "${asString(head.data.question) ?? '?'}" (${answers} answers)` });
  } else {
    if (base.data.id !== head.data.id)
      out.refusals.push({ file, field: 'id', rule: 'id-changed', message: `the id changed from ${describe(base.data.id)} to ${describe(head.data.id)}` });
    checkAnswers(change, out);
    checkAppended(file, 'annotations', base.data, head.data, out);
    checkOtherEdits(change, out);
  }
  checkFederation(change, out);
  checkCertification(change, out);
}

function checkAnswers({ file, base, head }: RecordChange, out: Out): void {
  const before = asArray(base!.data.answers).map(asRecord);
  const after = asArray(head.data.answers).map(asRecord);
  before.forEach((answer, index) => {
    const now = after[index];
    if (now === undefined) {
      out.refusals.push({
        file,
        field: `answers.${index}`,
        rule: 'answer-removed',
        message: `the answer of ${asString(answer.model) ?? '?'} (${asString(answer.model_id) ?? '?'}) was removed`,
      });
      return;
    }
    for (const field of VERBATIM_FIELDS) {
      if (same(answer[field], now[field])) continue;
      const where =
        field === 'text' && typeof answer.text === 'string' && typeof now.text === 'string'
          ? `: first difference at character ${firstDifference(answer.text, now.text)}`
          : `: ${describe(answer[field])} became ${describe(now[field])}`;
      out.refusals.push({
        file,
        field: `answers.${index}.${field}`,
        rule: 'verbatim-answer',
        message: `the stored answer of ${asString(answer.model) ?? '?'} changed${where}; put corrections in an annotation`,
      });
    }
  });
  after.slice(before.length).forEach((answer, offset) => {
    out.allowed.push({
      group: 'new-answers',
      file,
      message: `answers.${before.length + offset}: ${asString(answer.model) ?? '?'} (${asString(answer.model_id) ?? '?'}, ${asString(answer.date) ?? '?'})${answer.contributed ? ', contributed' : ''}`,
    });
  });
}

/** A list that only grows at its end: annotations of a record, dispositions of a tension. */
export function checkAppended(file: string, field: string, base: Data, head: Data, out: Out, group: AllowedChange['group'] = 'annotations'): void {
  const before = asArray(base[field]);
  const after = asArray(head[field]);
  const changed = before.findIndex((entry, index) => index >= after.length || !same(entry, after[index]));
  if (changed >= 0) {
    out.refusals.push({
      file,
      field: `${field}.${changed}`,
      rule: 'append-only',
      message: `${field} are append-only: entry ${changed} was ${changed >= after.length ? 'removed' : 'edited'}; add a new entry instead`,
    });
    return;
  }
  if (after.length > before.length) out.allowed.push({ group, file, message: `${field}: ${after.length - before.length} appended (${after.length} in all)` });
}

const CHECKED_FIELDS = new Set(['id', 'answers', 'annotations', 'certification', 'provenance']);

function checkOtherEdits({ file, base, head }: RecordChange, out: Out): void {
  const keys = new Set([...Object.keys(base!.data), ...Object.keys(head.data)]);
  const edited = [...keys].filter((key) => !CHECKED_FIELDS.has(key) && !same(base!.data[key], head.data[key])).sort();
  if (base!.body !== head.body) edited.push('body');
  if (!same(base!.data.provenance, head.data.provenance) && federationOf(base!.data) === undefined) edited.push('provenance');
  if (edited.length > 0) out.allowed.push({ group: 'edits', file, message: `edited: ${edited.join(', ')}` });
}

function checkFederation({ file, base, head, headSnapshot }: RecordChange, out: Out): void {
  const before = base ? federationOf(base.data) : undefined;
  const after = federationOf(head.data);
  if (before !== undefined && !same(before, after)) {
    const fields = [...new Set([...Object.keys(before), ...Object.keys(after ?? {})])].filter((key) => !same(before[key], after?.[key]));
    out.refusals.push({
      file,
      field: `provenance.federation${after === undefined ? '' : `.${fields[0]}`}`,
      rule: 'federation-provenance',
      message:
        after === undefined ? 'the record was imported; its federation provenance was removed' : `the federation provenance changed (${fields.join(', ')})`,
    });
  }
  if (before === undefined && after !== undefined) {
    const id = asString(head.data.id) ?? '';
    const origin = `${asString(after.origin_name) ?? '?'} (${asString(after.origin) ?? '?'})`;
    out.allowed.push({ group: 'imports', file, message: `imported from ${origin}` });
    const copy = headSnapshot.get(`federation/${id}.md`);
    if (copy === undefined)
      out.refusals.push({
        file,
        field: 'provenance.federation',
        rule: 'federation-provenance',
        message: `an import needs its origin copy federation/${id}.md in the same change`,
      });
    else if (createHash('sha256').update(copy).digest('hex') !== after.content_hash)
      out.refusals.push({
        file,
        field: 'provenance.federation.content_hash',
        rule: 'federation-provenance',
        message: `the origin copy federation/${id}.md is not the record the origin signed (its sha256 differs from content_hash)`,
      });
  }
}

/**
 * A block differs from the base's: it must be the `certification` of the last `result` line
 * with `written: true` that this change appended to the record's evidence log (so the rule
 * holds whatever the method computes), or, on an import, what the origin's copy states.
 */
function checkCertification({ file, base, head, baseSnapshot, headSnapshot }: RecordChange, out: Out): void {
  const before = base ? certificationOf(base.data) : { tier: 'C0' };
  const after = certificationOf(head.data);
  if (same(before, after)) return;
  const id = asString(head.data.id) ?? '';
  const tiers = `${describe(before.tier)} → ${describe(after.tier)}`;
  if (federationOf(head.data) !== undefined) {
    // The origin's copy as it was before this change, when there was one: it never changes.
    const origin = readMarkdown(baseSnapshot, `federation/${id}.md`) ?? readMarkdown(headSnapshot, `federation/${id}.md`);
    const stated = origin ? certificationOf(origin.data) : undefined;
    if (stated !== undefined && same(stated, after)) {
      out.allowed.push({ group: 'imports', file, message: `certification ${describe(after.tier)} as its origin stated it (marked stated by the origin)` });
      return;
    }
    out.refusals.push({
      file,
      field: 'certification',
      rule: 'certification-unearned',
      message: `an imported record keeps the tier its origin stated (${stated ? describe(stated.tier) : 'no origin copy'}); found ${describe(after.tier)}`,
    });
    return;
  }
  // Taking back a block nobody measured (typed, no evidence log) makes no claim: allowed.
  if (isBareC0(after) && before.evidence === undefined) {
    out.allowed.push({ group: 'edits', file, message: `certification back to C0 (the block ${describe(before.tier)} had no evidence log)` });
    return;
  }
  const log = `divergences/${asString(after.evidence) ?? `${id}${EVIDENCE_FILE_SUFFIX}`}`;
  const previous = baseSnapshot.get(log);
  const now = headSnapshot.get(log);
  const appended =
    now === undefined
      ? ''
      : previous !== undefined && now.subarray(0, previous.length).equals(previous)
        ? now.subarray(previous.length).toString('utf8')
        : now.toString('utf8');
  const result = jsonLines(appended)
    .filter((line) => line.kind === 'result' && line.written === true && line.subject === id)
    .at(-1);
  if (result === undefined) {
    out.refusals.push({
      file,
      field: 'certification',
      rule: 'certification-unearned',
      message: `the certification block changed (tier ${tiers}) but this change appends no result line with written: true for ${id} to ${log}; run npm run certify -- --write`,
    });
    return;
  }
  const stated = asRecord(result.certification);
  if (!same(stated, after)) {
    const fields = [...new Set([...Object.keys(stated), ...Object.keys(after)])].filter((key) => !same(stated[key], after[key])).sort();
    out.refusals.push({
      file,
      field: `certification.${fields[0] ?? 'tier'}`,
      rule: 'certification-unearned',
      message: `the block is not what ${log} states in its written result (differs in ${fields.join(', ')}; the log states tier ${describe(stated.tier)})`,
    });
    return;
  }
  out.allowed.push({
    group: 'certification',
    file,
    message: `tier ${tiers}${after.method_version ? `, ${String(after.method_version)}` : ''}${after.date ? ` on ${String(after.date)}` : ''}, matching ${log}`,
  });
}
