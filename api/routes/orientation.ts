import { agentEntry, health, info } from '../../core/orientation.ts';
import { parseOrSuggest } from '../../core/next-call.ts';
import { rejectUnknownParameters, type RawQuery } from '../../core/query-params.ts';
import type { RouteContext, RouteDefinition } from './types.ts';

export function orientationRoutes(context: RouteContext): RouteDefinition[] {
  const noParameters = (path: string) => (query: unknown) => parseOrSuggest(path, query as RawQuery, (raw) => rejectUnknownParameters(raw, [], path));
  return [
    {
      path: '/api/agent-entry',
      methods: {
        GET: (request, response) => {
          noParameters('/api/agent-entry')(request.query);
          response.json(agentEntry(context.corpus, context.capabilities));
        },
      },
    },
    {
      path: '/api/health',
      methods: {
        GET: (request, response) => {
          noParameters('/api/health')(request.query);
          response.setHeader('Cache-Control', 'no-store');
          response.json(health(context.corpus, context.capabilities, context.now()));
        },
      },
    },
    {
      path: '/api/manifest',
      methods: {
        GET: (request, response) => {
          noParameters('/api/manifest')(request.query);
          response.json(context.corpus.manifest);
        },
      },
    },
    {
      path: '/api/info',
      methods: {
        GET: (request, response) => {
          noParameters('/api/info')(request.query);
          response.setHeader('Cache-Control', 'public, max-age=300');
          response.json(info(context.corpus));
        },
      },
    },
  ];
}
