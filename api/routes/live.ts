/**
 * Paths that call live models: council, trace, job cancel (the deliberation forms of
 * /api/query are in query.ts). Without a configured panel they answer 503 and point at what works.
 */
import { z } from 'zod';
import { parseQueryParameters, MAX_QUERY_CHARS } from '../../core/query-params.ts';
import {
  CancelJobRequestSchema,
  CouncilPersistedSchema,
  CouncilRequestSchema,
  CouncilResponseSchema,
  JobStateSchema,
  TraceResponseSchema,
} from '../../schemas/api.ts';
import { apiError, type SuggestedCall } from '../../schemas/errors.ts';
import { accepted, flagParameter, keyed, livePanel, ok, queryParameter } from '../openapi/parts.ts';
import { mendBody, sampleQuestion } from '../../core/examples.ts';
import { answerNow, assertIngestSecret, callerSignal, jobState, limitLive, requireLive, submitJob } from './live-support.ts';
import { bodyOf, queryOf, send, type ErrorMap, type RouteContext, type RouteDefinition, type RouteSpec } from './types.ts';

const tags = ['live panel'];
const question = queryParameter('q', z.string().max(MAX_QUERY_CHARS), 'The question.', {
  required: true,
  example: 'Can a refusal that came from training still be your own?',
  code: 'QUERY_TOO_LONG',
});
const liveAsync = flagParameter(
  'async',
  '1 or true submits a background job (202 with job_id and poll_url); 0, false or no async runs the request synchronously. Any other value is 400 INVALID_PARAMETER.',
);
const secondRound = flagParameter(
  'second_round',
  "1 or true: run the second round (each voice reads the other answers, anonymised, and keeps or revises its position with a reason; round 1 stays verbatim, panel[].round2 sits beside it, tensions[].moved names who revised). 0 or false: no second round. Absent: the panel's defaults.second_round (false unless configured). Each round-2 call is metered (deadline, reservation, cost).",
);
const COUNCIL_QUERY = [question, liveAsync, secondRound] as const;
const TRACE_QUERY = [question, liveAsync] as const;
const CANCEL_QUERY = [queryParameter('job', z.string().min(1), 'Id of the job (job_id of the 202); or give it in the body.', { emptyIsAbsent: true })] as const;
const liveGetErrors: ErrorMap = {
  400: ['PARAM_MISSING', 'QUERY_TOO_LONG', 'UNKNOWN_PARAMETER', 'PARAM_REPEATED', 'INVALID_PARAMETER', 'INVALID_TEXT'],
  ...livePanel,
  ...keyed,
};

export const COUNCIL: RouteSpec = {
  path: '/api/council',
  operations: {
    GET: {
      operationId: 'councilGet',
      tags,
      summary: 'Live panel on a new question (needs a live panel)',
      description:
        'Sends the question verbatim to every panel model in parallel and preserves their disagreement. Slow and costly; meant for a new question that no existing record fits. The result carries a council_id under which it is kept for 24 h, so an operator can commit exactly what was read (POST with council_id and persist). Answers 503 LIVE_PANEL_UNAVAILABLE while no panel is configured.',
      query: COUNCIL_QUERY,
      idempotencyKey: true,
      responses: {
        200: { ...ok('The panel, a synthesized reading and tensions.', CouncilResponseSchema), eventStream: true },
        202: accepted('Council submitted as a background job.'),
      },
      errors: liveGetErrors,
    },
    POST: {
      operationId: 'councilPost',
      tags,
      summary: 'Live panel, optionally committing the record (needs a live panel; persist needs the ingestion secret)',
      description:
        'With {council_id, persist: true} and Authorization: Bearer <INGEST_SECRET>: commits exactly the council result that was shown under that id (kept 24 h), with no model call (201, Location of the record; 200 with persisted.already_persisted when it was committed before; 404 COUNCIL_NOT_FOUND when unknown or expired). With q (or question): runs the council, and with persist true commits that result at once (the response is what was stored). Persist is checked before the panel: without a configured secret it answers 503 PERSISTENCE_UNAVAILABLE.',
      body: { schema: CouncilRequestSchema, description: 'Council request.', required: true },
      security: [{}, { ingestSecret: [] }],
      responses: {
        200: ok(
          'The panel, a synthesized reading and tensions (q without persist); or, with council_id, the record committed earlier (persisted.already_persisted).',
          { anyOf: [CouncilResponseSchema, CouncilPersistedSchema] },
        ),
        201: ok('The council and the committed record.', CouncilPersistedSchema, {
          Location: { description: 'Path of the committed record.', required: true, schema: { type: 'string' } },
        }),
      },
      errors: {
        400: ['INVALID_BODY', 'PARAM_MISSING', 'CONFLICTING_PARAMETERS'],
        404: ['COUNCIL_NOT_FOUND'],
        401: ['AUTH_REQUIRED'],
        403: ['AUTH_INVALID'],
        429: ['RATE_LIMITED'],
        502: ['PROVIDER_FAILED', 'NOT_PERSISTABLE'],
        503: ['LIVE_PANEL_UNAVAILABLE', 'SPENDING_CEILING_REACHED', 'PERSISTENCE_UNAVAILABLE', 'STORE_UNAVAILABLE'],
      },
    },
  },
};

export const TRACE: RouteSpec = {
  path: '/api/trace',
  operations: {
    GET: {
      operationId: 'trace',
      tags,
      summary: 'Measured baseline-versus-augmented counterfactual (needs a live panel)',
      description:
        'The question is answered twice in parallel (without the corpus and with it), then a third pass reports what the corpus changed. A single-run demonstrator. Answers 503 LIVE_PANEL_UNAVAILABLE while no panel is configured.',
      query: TRACE_QUERY,
      idempotencyKey: true,
      responses: {
        200: { ...ok('Trace with a measured receipt.', TraceResponseSchema), eventStream: true },
        202: accepted('Trace submitted as a background job.'),
      },
      errors: liveGetErrors,
    },
  },
};

export const CANCEL_JOB: RouteSpec = {
  path: '/api/jobs/cancel',
  operations: {
    POST: {
      operationId: 'cancelJob',
      tags,
      summary: 'Cancel a background job and abort its model calls',
      description:
        'Cancels a queued or running job (deliberation, trace or council): its model calls are aborted at once in the process running it (another process sharing a PostgreSQL store sees it at its next job sweep), their reservations against the spending ceiling are released, and the job ends with status cancelled and error.code JOB_CANCELLED. Cancelling a cancelled job answers its state again; a job already done or failed answers 409 JOB_ALREADY_FINISHED. The job id goes in the query (cancel_url) or in an optional JSON body.',
      query: CANCEL_QUERY,
      body: { schema: CancelJobRequestSchema, description: 'Optional: the job id as {"job": "<job_id>"} instead of the query.', required: false },
      responses: { 200: ok('The job, now cancelled.', JobStateSchema) },
      errors: {
        400: ['PARAM_MISSING', 'UNKNOWN_PARAMETER', 'PARAM_REPEATED', 'INVALID_BODY', 'CONFLICTING_PARAMETERS'],
        404: ['JOB_NOT_FOUND'],
        409: ['JOB_ALREADY_FINISHED'],
        503: ['LIVE_PANEL_UNAVAILABLE', 'STORE_UNAVAILABLE'],
      },
    },
  },
};

export function liveRoutes(context: RouteContext): RouteDefinition[] {
  // Mended without persist: a suggestion cannot carry the bearer secret.
  const mendCouncil = (body: unknown) => {
    const { persist: _persist, council_id: _councilId, ...mended } = mendBody(CouncilRequestSchema, body, { q: sampleQuestion(context.corpus) });
    return mended;
  };
  // Without a job to name, the next call that succeeds starts one (its 202 names its cancel_url).
  const submitCall = (): SuggestedCall => ({ method: 'GET', path: '/api/query', query: { q: sampleQuestion(context.corpus), async: '1' } });
  const poll = (id: string): SuggestedCall => ({ method: 'GET', path: '/api/query', query: { job: id } });
  return [
    {
      ...COUNCIL,
      bodies: { POST: { mend: (body) => ({ method: 'POST', path: '/api/council', body: mendCouncil(body) }) } },
      methods: {
        GET: async (request, response, input) => {
          const { q: question, async: wantsAsync, second_round: secondRound } = queryOf(input, COUNCIL_QUERY);
          const live = requireLive(context, question);
          const council = { question, ...(secondRound !== undefined ? { second_round: secondRound } : {}) };
          if (wantsAsync) {
            await submitJob(context, request, response, { name: 'council', limit: 'council' }, 'council', council);
            return;
          }
          await limitLive(context, request, response, 'council');
          await answerNow(context, request, response, live, CouncilResponseSchema, (signal, onStage) => live.councilNow(council, signal, onStage));
        },
        POST: async (request, response, input) => {
          const body = bodyOf(input, CouncilRequestSchema);
          const mended = mendCouncil(body);
          const { council_id: councilId, persist } = body;
          const question = body.q ?? body.question;
          if (councilId !== undefined) {
            const keep: SuggestedCall = { method: 'POST', path: '/api/council', body: { council_id: councilId, persist: true } };
            if (question !== undefined)
              throw apiError(
                'CONFLICTING_PARAMETERS',
                'council_id names a council already run; q asks for a new one: send one of them',
                'To keep a council you have read, send {"council_id": "...", "persist": true} alone.',
                { suggestedNextCall: keep },
              );
            if (persist !== true)
              throw apiError(
                'INVALID_BODY',
                'council_id is only used with persist true',
                'Send {"council_id": "...", "persist": true} with Authorization: Bearer <INGEST_SECRET>.',
                { suggestedNextCall: keep },
              );
            assertIngestSecret(request, context, sampleQuestion(context.corpus));
            const outcome = await requireLive(context, undefined).persistKeptCouncil(councilId);
            response.setHeader('Location', outcome.persisted.href);
            send(response, CouncilPersistedSchema, { ...outcome.shown, persisted: outcome.persisted }, outcome.created ? 201 : 200);
            return;
          }
          if (!question)
            throw apiError(
              'PARAM_MISSING',
              'the body needs q (or question), or council_id with persist',
              'Send {"q": "<question>"} to run a council; to keep one you have read, send {"council_id": "...", "persist": true}.',
              { extra: { param_missing: true }, suggestedNextCall: { method: 'POST', path: '/api/council', body: mended } },
            );
          if (persist) assertIngestSecret(request, context, question);
          const live = requireLive(context, question);
          await limitLive(context, request, response, 'council');
          const result = await live.councilNow(
            { question, ...(body.second_round !== undefined ? { second_round: body.second_round } : {}) },
            callerSignal(response),
          );
          if (!persist) {
            send(response, CouncilResponseSchema, result);
            return;
          }
          // Run and persist in one call: the response shows exactly what was stored.
          if (result.council_id === null) {
            send(response, CouncilPersistedSchema, { ...result, persisted: await live.persistCouncil(result) }, 201);
            return;
          }
          const outcome = await live.persistKeptCouncil(result.council_id);
          response.setHeader('Location', outcome.persisted.href);
          send(response, CouncilPersistedSchema, { ...outcome.shown, persisted: outcome.persisted }, 201);
        },
      },
    },
    {
      ...TRACE,
      methods: {
        GET: async (request, response, input) => {
          const { q, async: wantsAsync } = queryOf(input, TRACE_QUERY);
          const query = parseQueryParameters({ q });
          const live = requireLive(context, q);
          if (wantsAsync) {
            await submitJob(context, request, response, { name: 'trace', limit: 'live' }, 'trace', { query });
            return;
          }
          await limitLive(context, request, response, 'live');
          await answerNow(context, request, response, live, TraceResponseSchema, (signal, onStage) => live.traceNow(query, signal, onStage));
        },
      },
    },
    {
      ...CANCEL_JOB,
      bodies: { POST: { mend: (_body, query) => ((query as { job?: string }).job ? poll((query as { job: string }).job) : submitCall()) } },
      methods: {
        POST: async (_request, response, input) => {
          const { job: fromQuery } = queryOf(input, CANCEL_QUERY);
          const submit = submitCall();
          const fromBody = bodyOf(input, CancelJobRequestSchema).job;
          if (fromQuery !== undefined && fromBody !== undefined && fromQuery !== fromBody) {
            throw apiError(
              'CONFLICTING_PARAMETERS',
              `the query names job "${fromQuery}" and the body job "${fromBody}"`,
              'Name the job once: POST /api/jobs/cancel?job=<job_id>, or the body {"job": "<job_id>"}.',
              { suggestedNextCall: poll(fromQuery) },
            );
          }
          const id = fromQuery ?? fromBody;
          if (id === undefined || id.trim() === '') {
            throw apiError('PARAM_MISSING', 'job is missing or empty', 'Send the job_id you received: POST /api/jobs/cancel?job=<job_id>.', {
              extra: { param_missing: true },
              suggestedNextCall: submit,
            });
          }
          const live = requireLive(context, undefined);
          const job = await live.cancel(id);
          if (!job) {
            throw apiError('JOB_NOT_FOUND', `no job has id "${id}"`, 'Check the job_id; nothing was cancelled.', { suggestedNextCall: submit });
          }
          if (job.status !== 'cancelled') {
            throw apiError(
              'JOB_ALREADY_FINISHED',
              `job "${id}" already ended with status ${job.status}; there is nothing to cancel`,
              'Poll the job for its result.',
              {
                suggestedNextCall: poll(id),
              },
            );
          }
          send(response, JobStateSchema, jobState(job, await live.stages(job.id)));
        },
      },
    },
  ];
}
