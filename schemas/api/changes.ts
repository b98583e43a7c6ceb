/**
 * What changed in the content from one corpus revision to the next (issue 45): the revisions
 * the build read from git, newest first, each with the records it added, changed and removed,
 * published as /changes/index.json + /changes/page-<n>.json and answered by GET /api/changes.
 * docs/CHANGES.md describes them.
 */
import { z } from 'zod';
import { count, named, strings, text } from './common.ts';

/** A corpus revision: manifest.published_releases.corpus_rev (16 hex digits of a sha256 over the content files). */
export const CORPUS_REV_PATTERN = /^[0-9a-f]{16}$/;
const corpusRev = (description: string) => z.string().regex(CORPUS_REV_PATTERN).describe(description);
const sha256 = () => z.string().regex(/^[0-9a-f]{64}$/);

export const CHANGED_RECORD_KINDS = ['work', 'divergence', 'concept', 'tension', 'audio'] as const;
export type ChangedRecordKind = (typeof CHANGED_RECORD_KINDS)[number];

export const HISTORY_STATES = ['complete', 'truncated', 'unavailable'] as const;
export type HistoryState = (typeof HISTORY_STATES)[number];

export const RecordChangeSchema = named(
  'RecordChange',
  z
    .strictObject({
      id: text('Record id (a work or Atlas record id, a concept id, a tension key, an audio track slug).'),
      kind: z
        .enum(CHANGED_RECORD_KINDS)
        .describe('work (seed work or approved proposal), divergence (Atlas record), concept, tension (its dispositions) or audio (a track).'),
      file: text('Its source file, relative to the content folder.'),
      content_hash: sha256()
        .nullable()
        .describe('sha256 of the source file after the change (for works and Atlas records: of /records/<id>.md); null when removed.'),
      previous_content_hash: sha256().nullable().describe('sha256 of the source file before the change; null when added.'),
      fields: strings(
        'Top-level fields of the front matter (or YAML) that changed, sorted, plus body when the markdown body did and evidence when the evidence log beside an Atlas record grew; empty when the record was added or removed.',
      ),
      tier: z
        .strictObject({
          from: z.string().nullable().describe('Tier before (null: no record, or no tier).'),
          to: z.string().nullable().describe('Tier after (null: no record, or no tier).'),
        })
        .nullable()
        .describe('An Atlas record whose certification tier changed (from C0 when it had no block); null otherwise.'),
      answers_added: count('Answers appended to an Atlas record (0 for other kinds and for a new record).'),
      annotations_added: count('Annotations appended to an Atlas record.'),
      dispositions_added: strings("Kinds of the dispositions appended to a tension's file, oldest first."),
      groups: strings(
        'What the change check (content-files/change/, docs/CONTRIBUTING.md) calls it: new-records, new-works, new-answers, annotations, dispositions, certification, imports, evidence, edits, other.',
      ),
      notes: strings("The change check's line for each part of the change, as a curator reads it."),
      overrides: strings('Rules of the change check the change broke and a curator accepted with the override (e.g. verbatim-answer); usually empty.'),
    })
    .describe('One record added, changed or removed.'),
);
export type RecordChange = z.infer<typeof RecordChangeSchema>;

export const FileChangeSchema = named(
  'FileChange',
  z
    .strictObject({
      file: text('Path relative to the content folder.'),
      change: z.enum(['added', 'changed', 'removed']).describe('added, changed or removed.'),
    })
    .describe('A content file that is not a record (models.yaml, site.yaml, claims.yaml, pages, calibration files, origin copies).'),
);
export type FileChange = z.infer<typeof FileChangeSchema>;

const changeLists = {
  added: z.array(RecordChangeSchema).describe('Records added.'),
  changed: z.array(RecordChangeSchema).describe('Records changed.'),
  removed: z.array(RecordChangeSchema).describe('Records removed.'),
  files: z.array(FileChangeSchema).describe('Other content files added, changed or removed.'),
};

const revisionFields = {
  corpus_rev: corpusRev('The corpus revision after this change: what manifest.published_releases.corpus_rev is for a build of it.'),
  parent_rev: corpusRev('The corpus revision before it (equal to corpus_rev when only files outside the revision changed, e.g. an evidence log).'),
  commit: z.string().nullable().describe('The git commit; null for changes in the working tree that were built but not committed.'),
  date: z.string().nullable().describe("The commit's author date (ISO 8601); null when not committed."),
  author: z.string().nullable().describe("The commit's author name; null when not committed."),
  subject: z.string().nullable().describe("The first line of the commit's message; null when not committed."),
};

export const ContentRevisionSchema = named(
  'ContentRevision',
  z
    .strictObject({ ...revisionFields, ...changeLists })
    .describe('One commit that touched the content folder, and what it changed relative to its first parent.'),
);
export type ContentRevision = z.infer<typeof ContentRevisionSchema>;

const historyFields = {
  history: z
    .enum(HISTORY_STATES)
    .describe(
      "complete: every commit of the content folder is listed. truncated: the older ones are not (the build's cap, CHANGES_HISTORY_LIMIT, or a shallow clone); oldest_rev is where the list starts. unavailable: the build had no git history (a tarball, a shallow clone of one commit, a folder outside git); nothing is listed.",
    ),
  reason: z.string().nullable().describe('Why the history is truncated or unavailable; null when complete.'),
  current_rev: corpusRev("This build's corpus revision (manifest.published_releases.corpus_rev)."),
  oldest_rev: z
    .string()
    .regex(CORPUS_REV_PATTERN)
    .nullable()
    .describe('The oldest revision a delta can start from (GET /api/changes?since= accepts it and every newer one); null when the history is unavailable.'),
};

export const ChangesIndexSchema = named(
  'ChangesIndex',
  z
    .strictObject({
      ...historyFields,
      revisions: count('Revisions listed across the pages.'),
      page_size: count('Revisions per page.'),
      pages: strings('The pages, newest revisions first: /changes/page-1.json, /changes/page-2.json, ...'),
      since_url: text('The delta from a revision you hold to this one: GET /api/changes?since=<corpus_rev>.'),
      note: text('How to read the pages.'),
    })
    .describe("/changes/index.json: the content's revisions as the build read them from git, and where their pages are."),
);
export type ChangesIndex = z.infer<typeof ChangesIndexSchema>;

export const ChangesPageSchema = named(
  'ChangesPage',
  z
    .strictObject({
      page: z.number().int().positive().describe('This page (1 is the newest).'),
      pages: count('Pages in all.'),
      current_rev: corpusRev("This build's corpus revision."),
      revisions: z.array(ContentRevisionSchema).describe('Revisions, newest first.'),
      previous: z.string().nullable().describe('The page of newer revisions; null on page 1.'),
      next: z.string().nullable().describe('The page of older revisions; null on the last page.'),
    })
    .describe('/changes/page-<n>.json: one page of revisions, newest first.'),
);
export type ChangesPage = z.infer<typeof ChangesPageSchema>;

export const CollapsedChangeSchema = named(
  'CollapsedChange',
  RecordChangeSchema.extend({
    commits: strings('The commits that changed it within the delta, newest first (uncommitted changes have none).'),
  }).describe(
    "One record across the revisions of a delta: added then changed reads as added, changed then removed as removed, removed then added as changed; one added and removed again is left out. content_hash is its latest, previous_content_hash the one before the delta's first change; fields, groups and overrides are the union, the counts summed, tier from the first to the last.",
  ),
);
export type CollapsedChange = z.infer<typeof CollapsedChangeSchema>;

export const ChangesDeltaSchema = named(
  'ChangesDelta',
  z
    .strictObject({
      since: corpusRev('The revision asked from.'),
      ...historyFields,
      up_to_date: z.boolean().describe('true when since is the current revision (nothing to apply).'),
      revisions: z
        .array(z.strictObject(revisionFields))
        .describe('The revisions after since, newest first, without their changes (those are collapsed below); /changes/page-<n>.json has each one whole.'),
      added: z.array(CollapsedChangeSchema).describe('Records present now that were not at since.'),
      changed: z.array(CollapsedChangeSchema).describe('Records present at both that changed.'),
      removed: z.array(CollapsedChangeSchema).describe('Records present at since that are gone now.'),
      files: z.array(FileChangeSchema).describe('Other content files, collapsed the same way.'),
    })
    .describe('GET /api/changes?since=<corpus_rev>: what changed from that revision to the current one.'),
);
export type ChangesDelta = z.infer<typeof ChangesDeltaSchema>;

/** data/changes.json: the whole history the API answers from (the pages hold the same revisions). */
export interface ChangeHistory {
  history: HistoryState;
  reason: string | null;
  current_rev: string;
  oldest_rev: string | null;
  revisions: ContentRevision[];
}
