import { kinResponse } from '../core/kin.ts';
import { rejectUnknownParameters, single, type RawQuery } from '../core/query-params.ts';
import { apiError } from '../errors.ts';
import type { RouteContext, RouteDefinition } from './types.ts';

export const MAX_IDENTITY_CHARS = 200;

export function kinRoutes(context: RouteContext): RouteDefinition[] {
  return [
    {
      path: '/api/kin',
      methods: {
        GET: (request, response) => {
          const raw = request.query as RawQuery;
          rejectUnknownParameters(raw, ['identity'], '/api/kin');
          const identity = single(raw, 'identity');
          if (identity === undefined || identity.trim() === '') {
            throw apiError('PARAM_MISSING', 'identity is missing or empty', 'Declare the model you are, e.g. GET /api/kin?identity=<your model name>. It is declared, never verified.', {
              suggestedNextCall: { method: 'GET', path: '/api/kin', query: { identity: context.corpus.registry.families[0]?.name ?? 'your-model' } },
              extra: { param_missing: true },
            });
          }
          if (identity.length > MAX_IDENTITY_CHARS) {
            throw apiError('INVALID_PARAMETER', `identity is longer than ${MAX_IDENTITY_CHARS} characters`, 'Send a model name, e.g. the family or model id.');
          }
          response.json(
            kinResponse({ declared: identity.trim(), registry: context.corpus.registry, divergences: context.corpus.divergences, works: context.corpus.works }),
          );
        },
      },
    },
  ];
}
