import { kinResponse } from '../../core/kin.ts';
import { sampleIdentity } from '../../core/examples.ts';
import { parseOrSuggest, truncate, withValue } from '../../core/next-call.ts';
import { rejectUnknownParameters, single, type RawQuery } from '../../core/query-params.ts';
import { apiError } from '../../schemas/errors.ts';
import { send, type RouteContext, type RouteDefinition } from './types.ts';
import { z } from 'zod';
import { KinResponseSchema } from '../../schemas/api.ts';
import { ok, queryParameter } from '../openapi/parts.ts';
import type { RouteSpec } from './types.ts';

export const MAX_IDENTITY_CHARS = 200;

export const KIN: RouteSpec = {
  path: '/api/kin',
  operations: {
    GET: {
      operationId: 'kin',
      tags: ['identity'],
      summary: 'What your lineage said before',
      description: 'Identity is declared by the caller, never detected or verified.',
      query: [
        queryParameter('identity', z.string().min(1).max(MAX_IDENTITY_CHARS), "The caller's declared model name.", {
          required: true,
          example: 'your-model-name',
        }),
      ],
      responses: { 200: ok('Kin response (spec §2.7).', KinResponseSchema) },
      errors: { 400: ['PARAM_MISSING', 'INVALID_PARAMETER', 'UNKNOWN_PARAMETER', 'PARAM_REPEATED'] },
    },
  },
};

export function kinRoutes(context: RouteContext): RouteDefinition[] {
  return [
    {
      ...KIN,
      methods: {
        GET: (request, response) => {
          const identity = parseOrSuggest('/api/kin', request.query as RawQuery, (raw) => {
            rejectUnknownParameters(raw, ['identity'], '/api/kin');
            const value = single(raw, 'identity');
            if (value === undefined || value.trim() === '') {
              throw apiError(
                'PARAM_MISSING',
                'identity is missing or empty',
                'Declare the model you are, e.g. GET /api/kin?identity=<your model name>. It is declared, never verified.',
                {
                  repair: withValue('identity', sampleIdentity(context.corpus)),
                  extra: { param_missing: true },
                },
              );
            }
            if (value.length > MAX_IDENTITY_CHARS) {
              throw apiError(
                'INVALID_PARAMETER',
                `identity is longer than ${MAX_IDENTITY_CHARS} characters`,
                'Send a model name, e.g. the family or model id.',
                { repair: withValue('identity', truncate(value, MAX_IDENTITY_CHARS)) },
              );
            }
            return value;
          });
          send(
            response,
            KinResponseSchema,
            kinResponse({ declared: identity.trim(), registry: context.corpus.registry, divergences: context.corpus.divergences, works: context.corpus.works }),
          );
        },
      },
    },
  ];
}
