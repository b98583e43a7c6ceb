/**
 * One record's revisions (issue 45, part 3): the commits of the content's history that added,
 * changed or removed it, newest first, each with a short line saying what changed. Carried by the
 * record's JSON twin (/records/<id>.json), GET /api/divergences?id= and the record pages; read
 * from the same history as /changes/ and GET /api/changes (docs/CHANGES.md).
 */
import { z } from 'zod';
import { CORPUS_REV_PATTERN, HISTORY_STATES } from './changes.ts';
import { count, named, strings, text } from './common.ts';

export const RECORD_REVISION_CHANGES = ['added', 'changed', 'removed'] as const;

export const RecordRevisionSchema = named(
  'RecordRevision',
  z
    .strictObject({
      corpus_rev: z.string().regex(CORPUS_REV_PATTERN).describe('The corpus revision after this change (GET /api/changes?since=<it> lists what came after).'),
      commit: z.string().nullable().describe('The git commit; null for changes built from a working tree before they were committed.'),
      date: z.string().nullable().describe("The commit's author date (ISO 8601); null when not committed."),
      author: z.string().nullable().describe("The commit's author name; null when not committed."),
      subject: z.string().nullable().describe("The first line of the commit's message; null when not committed."),
      change: z.enum(RECORD_REVISION_CHANGES).describe('What the commit did to the record: added, changed or removed.'),
      what: text('What changed, in a few words: "added", "tier C0 → C2", "2 answers appended", "1 annotation added", "disposition held", "edited: body".'),
      tier: z
        .strictObject({ from: z.string().nullable().describe('Tier before.'), to: z.string().nullable().describe('Tier after.') })
        .nullable()
        .describe('The certification tier before and after, when it changed (an Atlas record); null otherwise.'),
      answers_added: count('Answers appended (a re-elicitation or an approved contribution).'),
      annotations_added: count('Annotations appended.'),
      fields: strings('Top-level fields that changed (plus body, and evidence when the evidence log grew); empty when added or removed.'),
    })
    .describe('One commit that added, changed or removed the record.'),
);
export type RecordRevision = z.infer<typeof RecordRevisionSchema>;

export const RecordHistorySchema = named(
  'RecordHistory',
  z
    .strictObject({
      history: z
        .enum(HISTORY_STATES)
        .describe(
          "complete: every commit of the content is read, so revisions is the record's whole history. truncated: older commits were not read (a cap or a shallow clone); the record may be older than its first revision listed. unavailable: the build had no git history (a tarball, a shallow clone of one commit): revisions is empty, and that says nothing about the record.",
        ),
      reason: z.string().nullable().describe('Why the history is truncated or unavailable; null when complete.'),
      revisions: z.array(RecordRevisionSchema).describe('The commits that added, changed or removed this record, newest first.'),
      note: text('The history in one sentence, as the record page says it (e.g. "History unavailable: ..." or "3 revisions, the latest 2026-02-01").'),
    })
    .describe("A record's revisions read from the content's git history (docs/CHANGES.md)."),
);
export type RecordHistory = z.infer<typeof RecordHistorySchema>;
