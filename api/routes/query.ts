import { runFastPath } from '../../core/fast-path.ts';
import { mendBody, sampleQuestion } from '../../core/examples.ts';
import { parseOrSuggest } from '../../core/next-call.ts';
import { parseQueryParameters, type RawQuery } from '../../core/query-params.ts';
import { answerNow, handleLiveQuery, invalidBody, limitLive, QueryBodySchema, requireLive, submitJob } from './live.ts';
import { clientHash } from '../http/client-id.ts';
import type { RouteContext, RouteDefinition } from './types.ts';
import { apiError } from '../../schemas/errors.ts';
import { idempotencyKey } from '../http/idempotency.ts';

export function queryRoutes(context: RouteContext): RouteDefinition[] {
  return [
    {
      path: '/api/query',
      methods: {
        GET: async (request, response) => {
          const query = parseOrSuggest('/api/query', request.query as RawQuery, parseQueryParameters);
          // Used by job submissions (async=1); malformed, it is rejected on every form alike.
          idempotencyKey(request);
          if (await handleLiveQuery(context, query, request, response)) return;
          const body = await runFastPath(context.corpus, query, {
            includeDeliberation: query.mode === undefined,
            livePanel: context.capabilities.deliberation,
          });
          response.json(body);
        },
        POST: async (request, response) => {
          const parsed = QueryBodySchema.safeParse(request.body ?? {});
          const mended = mendBody(QueryBodySchema, request.body, { query: sampleQuestion(context.corpus) });
          if (!parsed.success) throw invalidBody(parsed.error, { method: 'POST', path: '/api/query', body: mended });
          idempotencyKey(request);
          const body = parsed.data;
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
            throw apiError('CONFLICTING_PARAMETERS', 'session_id continues a session and new_session starts one: send one of them', 'Send session_id to continue a session the server issued to you, or new_session true to start one.', { suggestedNextCall: restart });
          }
          const live = requireLive(context, body.query);
          // Sessions belong to the client they were issued to (its hashed address): an id
          // issued to someone else reads as unknown, and nothing runs.
          const client = clientHash(request, await live.clientSalt());
          if (body.session_id !== undefined) await live.checkSession(body.session_id, client, restart);
          await live.assertBudget();
          const sessionId = body.new_session ? await live.issueSession(client) : body.session_id;
          const input = {
            query,
            ...(sessionId ? { session_id: sessionId, session_client: client, session_started: body.new_session === true } : {}),
            ...(body.second_round !== undefined ? { second_round: body.second_round } : {}),
          };
          if (body.async) {
            await submitJob(context, request, response, { name: 'query', limit: 'live' }, 'deliberation', input, sessionId ? { session_id: sessionId } : {});
            return;
          }
          await limitLive(context, request, response, 'live');
          await answerNow(context, request, response, live, (signal, onStage) => live.deliberateNow(input, signal, onStage));
        },
      },
    },
  ];
}
