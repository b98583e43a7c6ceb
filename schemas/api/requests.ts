/** Request bodies of the live and curator paths: council, job cancel, tension dispositions. */
import { z } from 'zod';
import { MAX_QUERY_CHARS } from '../limits.ts';
import { DispositionRequestSchema } from '../dispositions.ts';
import { named, text } from './common.ts';
import { TensionDispositionOutSchema } from './tensions.ts';

const councilQuestion = z.string().trim().min(1).max(MAX_QUERY_CHARS);

export const CouncilRequestSchema = named(
  'CouncilRequest',
  z
    .strictObject({
      q: councilQuestion.optional().describe('The question (q or question is required unless council_id is given).'),
      question: councilQuestion.optional().describe('Alias of q.'),
      council_id: z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,128}$/)
        .optional()
        .describe(
          'The council_id of a council result you have read (kept 24 h): with persist true, commits exactly that result with no model call. Not combined with q.',
        ),
      persist: z
        .boolean()
        .optional()
        .describe('With Authorization: Bearer <INGEST_SECRET>, commits the record (201): the council named by council_id, or a new one run on q.'),
      second_round: z
        .boolean()
        .optional()
        .describe(
          "Run the second round (issue 14 item 9): each voice reads the other answers, anonymised as Voice A, B, … in a shuffled order and only as data, and keeps or revises its position with a reason. Round 1 stays verbatim; panel[].round2 sits beside it; tensions[].moved names who revised. Absent: the panel's defaults.second_round (false unless configured). Each round-2 call is metered (deadline, reservation, cost).",
        ),
    })
    .describe('Body of POST /api/council (spec §4.6). Unknown fields are rejected with INVALID_BODY.'),
);
export type CouncilRequest = z.infer<typeof CouncilRequestSchema>;

export const CancelJobRequestSchema = named(
  'CancelJobRequest',
  z
    .strictObject({
      job: z.string().min(1).max(200).optional().describe('Id of the job to cancel (job_id of the 202); or give it as ?job=<id>.'),
    })
    .describe(
      'Optional body of POST /api/jobs/cancel. Unknown fields are rejected with INVALID_BODY; a job id in both the query and the body must be the same.',
    ),
);
export type CancelJobRequest = z.infer<typeof CancelJobRequestSchema>;

// ---------------------------------------------------------------------------------------
// Tension dispositions (issue 19)
// ---------------------------------------------------------------------------------------

export const DispositionRequestNamedSchema = named('DispositionRequest', DispositionRequestSchema);

export const DispositionRecordedSchema = named(
  'DispositionRecorded',
  z
    .strictObject({
      tension: text('The tension key.'),
      disposition: TensionDispositionOutSchema,
      proposal_id: text('synthesis-drafted: the pending proposal created (reviewed with npm run curate).').optional(),
      record: z
        .strictObject({ id: text('Atlas record id.'), href: text('Where to read it.') })
        .describe('council-review: the Atlas record storing the panel result.')
        .optional(),
      file: text('The content file the disposition was appended to (commit it for review).'),
      dispositions: z.array(TensionDispositionOutSchema).describe('The whole history, oldest first.'),
    })
    .describe('A recorded disposition.'),
);
