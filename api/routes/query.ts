import { runFastPath } from '../core/fast-path.ts';
import { parseQueryParameters, type RawQuery } from '../core/query-params.ts';
import { livePanelUnavailable } from './live.ts';
import type { RouteContext, RouteDefinition } from './types.ts';

export function queryRoutes(context: RouteContext): RouteDefinition[] {
  return [
    {
      path: '/api/query',
      methods: {
        GET: async (request, response) => {
          const query = parseQueryParameters(request.query as RawQuery);
          if (query.mode === 'trace' || query.async || query.sync || query.job !== undefined) {
            // Full deliberation, trace and jobs need the live panel.
            if (!context.capabilities.deliberation) throw livePanelUnavailable(query.q || undefined);
          }
          const body = await runFastPath(context.corpus, query, {
            includeDeliberation: query.mode === undefined,
            livePanel: context.capabilities.deliberation,
          });
          response.json(body);
        },
        POST: () => {
          if (!context.capabilities.deliberation) throw livePanelUnavailable(undefined);
        },
      },
    },
  ];
}
