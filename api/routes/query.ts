import { ATLAS_RELEVANCE_RATIO } from '../../core/atlas-admission.ts';
import {
  BriefResponseSchema,
  ContextResponseSchema,
  DeliberationResponseSchema,
  JobStateSchema,
  ParamMissingErrorSchema,
  QueryRequestSchema,
  RetrieveResponseSchema,
  SiResponseSchema,
  TraceResponseSchema,
} from '../../schemas/api.ts';
import { accepted, keyed, livePanel, ok } from '../openapi/parts.ts';
import { runFastPath } from '../../core/fast-path.ts';
import { mendBody, sampleQuestion } from '../../core/examples.ts';
import { fastQuery, parseQueryParameters, QUERY_PARAMETER_SPECS, type FastQuery, type QueryInput } from '../../core/query-params.ts';
import { answerNow, handleLiveQuery, limitLive, requireLive, submitJob } from './live-support.ts';
import { clientHash } from '../http/client-id.ts';
import { bodyOf, send, type RouteContext, type RouteDefinition, type RouteSpec } from './types.ts';
import { apiError } from '../../schemas/errors.ts';

export const QUERY: RouteSpec = {
  path: '/api/query',
  operations: {
    GET: {
      operationId: 'query',
      tags: ['retrieval'],
      summary: 'Ask a question: fast retrieval with a receipt, or full deliberation',
      description: [
        'A bare GET (no mode, async, sync or job) returns the fast retrieval response with a deliberation block (ContextResponse); mode=retrieve returns it without the deliberation block (RetrieveResponse); format=brief and format=si return the other formats.',
        'Every 200 echoes question_received byte-equal to q. q missing or empty without job is 400 with the usage document and param_missing true.',
        `records ranks works and Atlas records together. With no glyph and no layers, an Atlas record is returned only when its relevanceScore is at least ${ATLAS_RELEVANCE_RATIO} of the best work's (a question the works answer gets no Atlas filler; a question worded as a disagreement always keeps its best one); layers=divergence or the Ξ glyph asks for the Atlas directly.`,
        'async=1, sync=1, job=<id> and mode=trace need the live panel: while none is configured (/api/health capabilities.deliberation false) they answer 503 LIVE_PANEL_UNAVAILABLE. With a panel, async answers 202 {job_id, poll_url}, job=<id> the job state (the full result once status is done), sync=1 a full deliberation and mode=trace a trace.',
      ].join(' '),
      query: QUERY_PARAMETER_SPECS,
      idempotencyKey: true,
      responses: {
        200: {
          ...ok(
            'Retrieval response in the requested format; with a live panel, a full deliberation (sync=1), a trace (mode=trace) or a job state (job=<id>; its stages list progress so far).',
            {
              oneOf: [
                ContextResponseSchema,
                RetrieveResponseSchema,
                BriefResponseSchema,
                SiResponseSchema,
                { anyOf: [DeliberationResponseSchema, TraceResponseSchema, JobStateSchema] },
              ],
            },
          ),
          eventStream: true,
        },
        202: accepted('Background deliberation submitted (async=1 or true). Poll GET /api/query?job=<job_id> about every 3 s.'),
      },
      errors: {
        400: [
          'PARAM_MISSING',
          'PARAM_REPEATED',
          'UNKNOWN_PARAMETER',
          'UNKNOWN_LAYER',
          'UNKNOWN_EVIDENCE',
          'UNKNOWN_FORMAT',
          'UNKNOWN_MODE',
          'UNKNOWN_GLYPH',
          'INVALID_PARAMETER',
          'CONFLICTING_PARAMETERS',
          'QUERY_TOO_LONG',
          'INVALID_TEXT',
        ],
        404: ['JOB_NOT_FOUND'],
        ...livePanel,
        ...keyed,
      },
      paramMissing: ParamMissingErrorSchema,
    },
    POST: {
      operationId: 'queryPost',
      tags: ['retrieval', 'live panel'],
      summary: 'Full deliberation (needs a live panel)',
      description:
        'Full deliberation with a receipt (about 25 s), or a background job with async true. Sessions are issued by the server: new_session true starts one (session.session_id in the response, session_id in the 202 form); send that id as session_id to continue it (rolling 5 exchanges, 24 h after last use). A session is bound to the client it was issued to (its hashed address); any other id is 404 SESSION_NOT_FOUND before any model call. Answers 503 LIVE_PANEL_UNAVAILABLE while no panel is configured; use GET /api/query for the fast path.',
      idempotencyKey: true,
      body: { schema: QueryRequestSchema, description: 'The question and options (spec §4.3).', required: true },
      responses: {
        200: { ...ok('Full deliberation with a receipt.', DeliberationResponseSchema), eventStream: true },
        202: accepted('Background deliberation submitted (async true). Poll GET /api/query?job=<job_id> about every 3 s.'),
      },
      errors: { 400: ['INVALID_BODY', 'PARAM_MISSING', 'CONFLICTING_PARAMETERS', 'INVALID_PARAMETER'], 404: ['SESSION_NOT_FOUND'], ...livePanel, ...keyed },
    },
  },
};

export function queryRoutes(context: RouteContext): RouteDefinition[] {
  return [
    {
      ...QUERY,
      refine: { GET: (query, given) => fastQuery(query as QueryInput, given) },
      bodies: {
        POST: { mend: (body) => ({ method: 'POST', path: '/api/query', body: mendBody(QueryRequestSchema, body, { query: sampleQuestion(context.corpus) }) }) },
      },
      methods: {
        GET: async (request, response, input) => {
          const query = input.query as FastQuery;
          if (await handleLiveQuery(context, query, request, response)) return;
          const body = await runFastPath(context.corpus, query, {
            includeDeliberation: query.mode === undefined,
            livePanel: context.capabilities.deliberation,
          });
          send(response, [ContextResponseSchema, RetrieveResponseSchema, BriefResponseSchema, SiResponseSchema], body);
        },
        POST: async (request, response, input) => {
          const body = bodyOf(input, QueryRequestSchema);
          // What a refusal below suggests: the same body, mended.
          const mended = mendBody(QueryRequestSchema, body, { query: sampleQuestion(context.corpus) });
          if (body.query.trim() === '') {
            throw apiError('PARAM_MISSING', 'query is empty: the service never answers a question that was not asked', 'Send {"query": "<your question>"}.', {
              extra: { param_missing: true },
              suggestedNextCall: { method: 'POST', path: '/api/query', body: { ...mended, query: sampleQuestion(context.corpus) } },
            });
          }
          const query = parseQueryParameters({
            q: body.query,
            ...(body.glyph ? { glyph: body.glyph } : {}),
            ...(body.syntheticIdentity ? { si: body.syntheticIdentity } : {}),
          });
          // The same POST starting a new session: what SESSION_NOT_FOUND and a conflict suggest.
          const { session_id: _sessionId, ...unsessioned } = mended;
          const restart = { method: 'POST', path: '/api/query', body: { ...unsessioned, new_session: true } };
          if (body.session_id !== undefined && body.new_session) {
            throw apiError(
              'CONFLICTING_PARAMETERS',
              'session_id continues a session and new_session starts one: send one of them',
              'Send session_id to continue a session the server issued to you, or new_session true to start one.',
              { suggestedNextCall: restart },
            );
          }
          const live = requireLive(context, body.query);
          // Sessions belong to the client they were issued to (its hashed address): an id
          // issued to someone else reads as unknown, and nothing runs.
          const client = clientHash(request, await live.clientSalt());
          if (body.session_id !== undefined) await live.checkSession(body.session_id, client, restart);
          await live.assertBudget();
          const sessionId = body.new_session ? await live.issueSession(client) : body.session_id;
          const deliberation = {
            query,
            ...(sessionId ? { session_id: sessionId, session_client: client, session_started: body.new_session === true } : {}),
            ...(body.second_round !== undefined ? { second_round: body.second_round } : {}),
          };
          if (body.async) {
            await submitJob(
              context,
              request,
              response,
              { name: 'query', limit: 'live' },
              'deliberation',
              deliberation,
              sessionId ? { session_id: sessionId } : {},
            );
            return;
          }
          await limitLive(context, request, response, 'live');
          await answerNow(context, request, response, live, DeliberationResponseSchema, (signal, onStage) => live.deliberateNow(deliberation, signal, onStage));
        },
      },
    },
  ];
}
