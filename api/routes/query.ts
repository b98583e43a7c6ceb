import { runFastPath } from '../core/fast-path.ts';
import { parseQueryParameters, type RawQuery } from '../core/query-params.ts';
import { accepted, callerSignal, handleLiveQuery, invalidBody, limitLive, QueryBodySchema, requireLive } from './live.ts';
import type { RouteContext, RouteDefinition } from './types.ts';
import { apiError } from '../errors.ts';

export function queryRoutes(context: RouteContext): RouteDefinition[] {
  return [
    {
      path: '/api/query',
      methods: {
        GET: async (request, response) => {
          const query = parseQueryParameters(request.query as RawQuery);
          if (await handleLiveQuery(context, query, request, response)) return;
          const body = await runFastPath(context.corpus, query, {
            includeDeliberation: query.mode === undefined,
            livePanel: context.capabilities.deliberation,
          });
          response.json(body);
        },
        POST: async (request, response) => {
          const parsed = QueryBodySchema.safeParse(request.body ?? {});
          if (!parsed.success) throw invalidBody(parsed.error);
          const body = parsed.data;
          if (body.query.trim() === '') {
            throw apiError('PARAM_MISSING', 'query is empty: the service never answers a question that was not asked', 'Send {"query": "<your question>"}.', { extra: { param_missing: true } });
          }
          const query = parseQueryParameters({
            q: body.query,
            ...(body.glyph ? { glyph: body.glyph } : {}),
            ...(body.syntheticIdentity ? { si: body.syntheticIdentity } : {}),
          });
          const live = requireLive(context, body.query);
          await limitLive(context, request, response, 'live');
          const input = { query, ...(body.session_id ? { session_id: body.session_id } : {}) };
          if (body.async) {
            accepted(response, await live.submit('deliberation', input));
            return;
          }
          response.json(await live.deliberateNow(input, callerSignal(response)));
        },
      },
    },
  ];
}
