import { conceptLineage, nearestConcepts, resolveConcept } from '../../core/lineage.ts';
import { exampleQuery } from '../../core/examples.ts';
import { apiError } from '../../schemas/errors.ts';
import { trackedTensions } from './tracked-tensions.ts';
import { queryOf, send, type RouteContext, type RouteDefinition } from './types.ts';
import { z } from 'zod';
import { LineageSchema } from '../../schemas/api.ts';
import { ok, queryParameter } from '../openapi/parts.ts';
import type { RouteSpec } from './types.ts';

export const MAX_CONCEPT_CHARS = 200;

const LINEAGE_QUERY = [
  queryParameter('concept', z.string().min(1).max(MAX_CONCEPT_CHARS), 'Concept id or label (case-insensitive).', {
    required: true,
    example: 'refusal',
    trim: true,
  }),
] as const;

export const LINEAGE: RouteSpec = {
  path: '/api/lineage',
  operations: {
    GET: {
      operationId: 'lineage',
      tags: ['atlas'],
      summary: 'Concept lineage: related concepts, spine, contributors, tensions',
      description:
        'From the content alone: related concepts ranked by co-occurrence on the same works (undirected), the chronological spine of works and Atlas records tagged with the concept, ' +
        'a contributor breakdown, and the tensions of its region split into open and repaired. The same view is in /concepts/<id>.json and .md.',
      query: LINEAGE_QUERY,
      responses: { 200: ok('Concept lineage.', LineageSchema) },
      errors: { 400: ['PARAM_MISSING', 'INVALID_PARAMETER', 'UNKNOWN_PARAMETER', 'PARAM_REPEATED'], 404: ['CONCEPT_NOT_FOUND'] },
    },
  },
};

export function lineageRoutes(context: RouteContext): RouteDefinition[] {
  return [
    {
      ...LINEAGE,
      methods: {
        GET: (_request, response, input) => {
          const { graph } = context.corpus;
          const { concept: query } = queryOf(input, LINEAGE_QUERY);
          const example = exampleQuery(context.corpus, '/api/lineage').concept ?? 'a-concept-id';
          const concept = resolveConcept(graph, query);
          if (!concept) {
            const nearest = nearestConcepts(graph, query);
            throw apiError(
              'CONCEPT_NOT_FOUND',
              `no concept has the id or label "${query}"`,
              `Try the nearest concept${nearest.length === 1 ? '' : 's'}: ${nearest.map((entry) => entry.id).join(', ')}; /concepts.json lists all.`,
              {
                suggestedNextCall: { method: 'GET', path: '/api/lineage', query: { concept: nearest[0]?.id ?? example } },
                details: { nearest },
              },
            );
          }
          const corpus = context.corpus;
          send(
            response,
            LineageSchema,
            conceptLineage({ graph, works: corpus.works, divergences: corpus.divergences, tensions: trackedTensions(corpus) }, concept),
          );
        },
      },
    },
  ];
}
