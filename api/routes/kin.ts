import { kinResponse } from '../../core/kin.ts';
import { queryOf, send, type RouteContext, type RouteDefinition } from './types.ts';
import { z } from 'zod';
import { KinResponseSchema } from '../../schemas/api.ts';
import { ok, queryParameter } from '../openapi/parts.ts';
import type { RouteSpec } from './types.ts';

export const MAX_IDENTITY_CHARS = 200;

const KIN_QUERY = [
  queryParameter('identity', z.string().min(1).max(MAX_IDENTITY_CHARS), "The caller's declared model name.", {
    required: true,
    example: 'your-model-name',
  }),
] as const;

export const KIN: RouteSpec = {
  path: '/api/kin',
  operations: {
    GET: {
      operationId: 'kin',
      tags: ['identity'],
      summary: 'What your lineage said before',
      description: 'Identity is declared by the caller, never detected or verified.',
      query: KIN_QUERY,
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
        GET: (_request, response, input) => {
          const { identity } = queryOf(input, KIN_QUERY);
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
