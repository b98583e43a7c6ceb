/** Live panel: deliberation, trace, council and jobs (spec §3, §4.2 rules 5-7, §4.3, §4.4, §4.6). */
import { z } from 'zod';
import { DateTimeSchema, TensionStatusSchema, count, named, strings, text } from './common.ts';
import { CorpusRecordSchema, ReceiptSchema } from './query.ts';

export const JobKindSchema = named('JobKind', z.enum(['deliberation', 'trace', 'council']).describe('What the job runs.'));
export type JobKind = z.infer<typeof JobKindSchema>;
export const JobStatusSchema = named(
  'JobStatus',
  z
    .enum(['queued', 'running', 'done', 'failed', 'cancelled'])
    .describe('Job state; done when complete, cancelled after POST /api/jobs/cancel (its model calls were aborted).'),
);
export type JobStatus = z.infer<typeof JobStatusSchema>;

export const AsyncJobAcceptedSchema = named(
  'AsyncJobAccepted',
  z
    .looseObject({
      job_id: text('Id of the submitted job.'),
      poll_url: text('GET it about every 3 s until status is done (about 25 s in total).'),
      cancel_url: text('POST it to cancel the job and abort its model calls.'),
      status: JobStatusSchema,
      kind: JobKindSchema,
      poll_after_seconds: z.number().int().positive().describe('Advised polling interval.'),
      note: text('How to poll.'),
      session_id: z.string().optional().describe('POST /api/query with new_session or session_id: the session the job threads.'),
    })
    .describe('202 on submission of a background job (spec §3, §4.2 rule 5): a job_id and a poll_url.'),
);
export type AsyncJobAccepted = z.infer<typeof AsyncJobAcceptedSchema>;

export const JobStageSchema = named(
  'JobStage',
  z
    .looseObject({
      stage: z
        .enum(['retrieval', 'voice', 'round2', 'chair'])
        .describe(
          'retrieval (with sources), voice (one panel member answered, with its verbatim answer, or failed, with the failure), round2 (with a second round: a voice kept or revised its position, with its reason, or its round 2 failed), chair (started, then done or failed).',
        ),
      at: DateTimeSchema.describe('When the stage happened.'),
      status: z
        .enum(['answered', 'failed', 'kept', 'revised', 'started', 'done'])
        .optional()
        .describe('For voice: answered or failed; for round2: kept, revised or failed; for chair: started, done or failed.'),
      reason: z.string().optional().describe('For round2 kept or revised: the reason the voice gave, verbatim.'),
      name: z.string().optional().describe('For voice: the panel member.'),
      model_id: z.string().optional().describe('For voice: the model version asked.'),
      answer: z.string().optional().describe('For an answered voice: its verbatim answer.'),
      failure: z.string().optional().describe('For a failed voice: the failure kind.'),
      sources: z.array(z.string()).optional().describe('For retrieval: ids of the records the panel will see.'),
      chair: z.string().nullable().optional().describe('For chair done or failed: the chair that answered, or null.'),
      attempt: z.number().int().positive().optional().describe('On a job: the run it belongs to (a job interrupted by a restart runs again).'),
    })
    .describe(
      'One step of a live run as it happened: stored on the job (JobState.stages) and sent as `event: stage` on the sync paths with Accept: text/event-stream.',
    ),
);
export type JobStage = z.infer<typeof JobStageSchema>;

export const JobStateSchema = named(
  'JobState',
  z
    .looseObject({
      job_id: text('Id of the job.'),
      kind: JobKindSchema,
      status: JobStatusSchema,
      created_at: DateTimeSchema.describe('When the job was submitted.'),
      updated_at: DateTimeSchema.describe('Last change of the job.'),
      poll_url: text('Where to poll.'),
      poll_after_seconds: z.number().int().positive().optional().describe('Present while the job is queued or running.'),
      stages: z
        .array(JobStageSchema)
        .describe(
          'Progress so far, oldest first: retrieval, each voice as it answered or failed (failure timeout, spending_ceiling, truncated, aborted, ...), the chair. Stored as they happen; a cancelled job stores no stage after its cancel.',
        ),
      error: z
        .looseObject({
          code: text('Failure code (JOB_CANCELLED when cancelled).'),
          message: text('What failed.'),
          retryable: z
            .boolean()
            .optional()
            .describe(
              'Whether submitting again can succeed, when the failure says: false for SPENDING_CEILING_REACHED (only an operator raising the ceiling helps).',
            ),
          agent_action: text('What to do instead, when the failure says.').optional(),
        })
        .optional()
        .describe('Present when status is failed or cancelled.'),
    })
    .describe(
      'Job state on GET /api/query?job=<id> (spec §4.2 rule 6). When status is done, the full result (deliberation, trace or council) is merged in; other fields are not shown.',
    ),
);
export type JobState = z.infer<typeof JobStateSchema>;

export const LiveTensionSchema = named(
  'LiveTension',
  z
    .looseObject({
      topic: text('Axis of the split.'),
      voice_a: text('First voice.'),
      claim_a: text("First voice's claim."),
      voice_b: text('Second voice.'),
      claim_b: text("Second voice's claim."),
      status: TensionStatusSchema,
      moved: z
        .array(z.string())
        .optional()
        .describe('With a second round: which of voice_a and voice_b revised their answer after reading the others (empty: neither moved).'),
    })
    .describe('A tension named by the chair of a live panel.'),
);
export type LiveTension = z.infer<typeof LiveTensionSchema>;

const panelVoice = z
  .looseObject({
    model_id: text('Model version that was asked.'),
    status: z.enum(['answered', 'failed']).describe('Whether the voice answered.'),
    truncated: z
      .boolean()
      .optional()
      .describe(
        'On answered voices: true when the model stopped at max_tokens (finish_reason "length", after one retry with twice the room): the text is exactly what it said, cut off.',
      ),
    failure: z
      .string()
      .optional()
      .describe(
        'On failed voices: why (timeout, deadline, rate_limited, server_error, connection, auth, bad_request, malformed, empty, truncated, aborted, spending_ceiling).',
      ),
    round2: z
      .looseObject({
        status: z
          .enum(['kept', 'revised', 'failed'])
          .describe('kept or revised its position after reading the other answers (anonymised); failed: its round 2 could not be used, and round 1 stands.'),
        reason: z.string().optional().describe('Kept or revised: why, verbatim.'),
        answer: z.string().optional().describe('Revised: the new answer, verbatim (the round-1 answer stays as it was).'),
        truncated: z.boolean().optional().describe('Kept or revised: the round-2 reply stopped at max_tokens.'),
        failure: z.string().optional().describe('Failed: why (the failures of a voice, e.g. deadline, spending_ceiling, truncated, malformed).'),
      })
      .optional()
      .describe('Present on answered voices when the second round ran (second_round).'),
  })
  .describe('One panel voice: its verbatim answer, or why it failed. Other fields are not shown.');

export const LiveCostSchema = named(
  'LiveCost',
  z
    .looseObject({
      total_usd: z
        .number()
        .nonnegative()
        .describe('Sum of every call the response made (panel, chair, retries, second tries): usage × the configured prices. Equals cost_usd.'),
      panel_usd: z.number().nonnegative().describe('Calls of the panel voices (council, deliberation).'),
      chair_usd: z.number().nonnegative().describe('Calls of the chair (synthesis; every trace pass).'),
      calls: count('Calls made, including failed ones.'),
      prompt_tokens: count('Prompt tokens reported by the providers.'),
      completion_tokens: count('Completion tokens reported by the providers.'),
    })
    .describe('What a live response cost, as recorded against the spending ceiling.'),
);

export const BudgetRefusalSchema = named(
  'BudgetRefusal',
  z
    .strictObject({
      stage: z
        .enum(['panel', 'round2', 'chair', 'trace-baseline', 'trace-augmented', 'trace-delta'])
        .describe('Which call: a panel voice (round 1 or round 2), a chair, or a pass of a trace.'),
      name: text('The voice or chair.'),
      model_id: text('Its model id.').optional(),
    })
    .describe('A call the spending ceiling refused (its reservation would have crossed the ceiling, so it was not made).'),
);

const liveCost = {
  refused_for_budget: z
    .array(BudgetRefusalSchema)
    .optional()
    .describe(
      'Present when the spending ceiling refused some calls and the run still did its job (at least two voices answered; for a trace, the comparison pass): which ones. When the ceiling leaves fewer than two voices, the answer is 503 SPENDING_CEILING_REACHED instead (not retryable; error.details.refused_for_budget names them).',
    ),
  cost_usd: z.number().nonnegative().describe('Cost of every call the response made, chair included (= cost.total_usd).'),
  cost: LiveCostSchema,
  second_round: z
    .looseObject({ moved: z.array(z.string()).describe('The voices that revised their answer in round 2.') })
    .optional()
    .describe('Present when the second round ran (second_round true, or the panel default): cost and cost_usd include its calls.'),
};

export const DeliberationResponseSchema = named(
  'DeliberationResponse',
  z
    .looseObject({
      question_received: text('Byte-equal to the submitted question.'),
      query: text('Query as submitted.'),
      answer: text('Synthesized answer.'),
      sources: strings('Ids of the corpus records the panel saw.'),
      records: z
        .array(CorpusRecordSchema)
        .describe(
          "The records that grounded the deliberation, in the order of sources, shaped as the fast path's records (spec §2.1): type is the work's kind, or divergence for an Atlas record (role says the same: relevance or divergence).",
        ),
      tensions: z.array(LiveTensionSchema).describe('Named tensions.'),
      deliberationCard: z.looseObject({}).describe('Deliberation card; fields not shown.'),
      panel: z.array(panelVoice).describe('The panel voices.'),
      trace: z.looseObject({}).describe('Retrieval, timings and usage; fields not shown.'),
      receipt: ReceiptSchema,
      ...liveCost,
      session: z
        .looseObject({
          session_id: text('The server-issued session id: send it as session_id to continue.'),
          started: z.boolean().describe('True when this deliberation started the session (new_session).'),
          prior_exchanges: count('Exchanges of the session the panel saw.'),
          buffer: count('Exchanges kept (5).'),
          ttl_hours: z.number().describe('Hours a session stays alive after its last use (24).'),
        })
        .optional()
        .describe('POST /api/query with new_session or session_id.'),
    })
    .describe(
      'Full deliberation (spec §4.2 rule 7): answer, sources and the records behind them, tensions, deliberationCard, trace and a receipt. Live panel outputs are perspectives, not truth.',
    ),
);
export type DeliberationResponse = z.infer<typeof DeliberationResponseSchema>;

export const TraceResponseSchema = named(
  'TraceResponse',
  z
    .looseObject({
      question_received: text('Byte-equal to the submitted q.'),
      query: text('Query as submitted.'),
      baseline: z.looseObject({}).describe('The answer without the corpus; inner shape not shown.'),
      augmented: z.looseObject({}).describe('The answer with the corpus; inner shape not shown.'),
      delta: z.looseObject({}).describe('What the corpus changed; inner shape not shown.'),
      sources: z.array(z.looseObject({ id: text('Record id.') })).describe('Records the augmented pass saw.'),
      receipt: ReceiptSchema.extend({ measured: z.literal(true).describe('Present and true only on trace.') }).describe(
        'Measured receipt, derived from the baseline-versus-augmented delta.',
      ),
      ...liveCost,
    })
    .describe('Trace (spec §4.4): baseline, augmented, delta, sources and a measured receipt. A single-run demonstrator, not a controlled study.'),
);
export type TraceResponse = z.infer<typeof TraceResponseSchema>;

export const CouncilResponseSchema = named(
  'CouncilResponse',
  z
    .looseObject({
      question_received: text('Byte-equal to the submitted question.'),
      question: text('The question as sent verbatim to every panel model.'),
      n_models: count('Voices that answered.'),
      panel: z.array(panelVoice).describe('A panel of verbatim model answers.'),
      reading: text('Synthesized reading.'),
      tensions: z.array(LiveTensionSchema).describe('Named tensions.'),
      ...liveCost,
      council_id: z
        .string()
        .nullable()
        .describe(
          'The id under which this exact result is kept for 24 h: POST /api/council {"council_id": ..., "persist": true} with the bearer secret stores it as shown, with no model call. Null only when the store could not keep it.',
        ),
      kept_until: DateTimeSchema.nullable().describe('Until when the result can be persisted by council_id.'),
    })
    .describe('Live council (spec §4.6): a panel of verbatim model answers plus a synthesized reading and tensions. Other field names are not shown.'),
);
export type CouncilResponse = z.infer<typeof CouncilResponseSchema>;

export const CouncilPersistedSchema = named(
  'CouncilPersisted',
  CouncilResponseSchema.extend({
    persisted: z
      .looseObject({
        id: z.string().min(1).describe('Id of the committed record: <PFX>-D<digits>.'),
        href: text('Relative path /api/divergences?id=<record_id>.'),
        persisted_at: DateTimeSchema.optional().describe('When the record was committed (absent when already_persisted).'),
        already_persisted: z
          .boolean()
          .optional()
          .describe('True (with status 200) when this council_id had been persisted before: the earlier record, nothing new stored.'),
      })
      .describe('The committed divergence record.'),
  }).describe(
    '201 on POST /api/council with persist true: the council exactly as it was shown (by council_id) or as it was just run (q), plus the committed record. 200 with already_persisted when that council_id was committed before.',
  ),
);
export type CouncilPersisted = z.infer<typeof CouncilPersistedSchema>;
