import { kinResponse } from '../../core/kin.ts';
import { sampleIdentity } from '../../core/examples.ts';
import { parseOrSuggest, truncate, withValue } from '../../core/next-call.ts';
import { rejectUnknownParameters, single, type RawQuery } from '../../core/query-params.ts';
import { apiError } from '../../schemas/errors.ts';
import type { RouteContext, RouteDefinition } from './types.ts';

export const MAX_IDENTITY_CHARS = 200;

export function kinRoutes(context: RouteContext): RouteDefinition[] {
  return [
    {
      path: '/api/kin',
      methods: {
        GET: (request, response) => {
          const identity = parseOrSuggest('/api/kin', request.query as RawQuery, (raw) => {
            rejectUnknownParameters(raw, ['identity'], '/api/kin');
            const value = single(raw, 'identity');
            if (value === undefined || value.trim() === '') {
              throw apiError('PARAM_MISSING', 'identity is missing or empty', 'Declare the model you are, e.g. GET /api/kin?identity=<your model name>. It is declared, never verified.', {
                repair: withValue('identity', sampleIdentity(context.corpus)),
                extra: { param_missing: true },
              });
            }
            if (value.length > MAX_IDENTITY_CHARS) {
              throw apiError('INVALID_PARAMETER', `identity is longer than ${MAX_IDENTITY_CHARS} characters`, 'Send a model name, e.g. the family or model id.', { repair: withValue('identity', truncate(value, MAX_IDENTITY_CHARS)) });
            }
            return value;
          });
          response.json(
            kinResponse({ declared: identity.trim(), registry: context.corpus.registry, divergences: context.corpus.divergences, works: context.corpus.works }),
          );
        },
      },
    },
  ];
}
