import { conceptLineage, nearestConcepts, resolveConcept } from '../../core/lineage.ts';
import { rejectUnknownParameters, single, type RawQuery } from '../../core/query-params.ts';
import { apiError } from '../../schemas/errors.ts';
import { trackedTensions } from './tracked-tensions.ts';
import { send, type RouteContext, type RouteDefinition } from './types.ts';
import { z } from 'zod';
import { LineageSchema } from '../../schemas/api.ts';
import { ok, queryParameter } from '../openapi/parts.ts';
import type { RouteSpec } from './types.ts';

export const MAX_CONCEPT_CHARS = 200;

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
      query: [
        queryParameter('concept', z.string().min(1).max(MAX_CONCEPT_CHARS), 'Concept id or label (case-insensitive).', { required: true, example: 'refusal' }),
      ],
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
        GET: (request, response) => {
          const raw = request.query as RawQuery;
          rejectUnknownParameters(raw, ['concept'], '/api/lineage');
          const { graph } = context.corpus;
          const query = single(raw, 'concept')?.trim();
          const example = [...graph.nodes].sort((a, b) => b.weight - a.weight)[0]?.id ?? 'a-concept-id';
          if (query === undefined || query === '') {
            throw apiError(
              'PARAM_MISSING',
              'concept is missing or empty',
              'Name a concept by id or label, e.g. GET /api/lineage?concept=<id>. /concepts.json lists them.',
              {
                suggestedNextCall: { method: 'GET', path: '/api/lineage', query: { concept: example } },
                extra: { param_missing: true },
              },
            );
          }
          if (query.length > MAX_CONCEPT_CHARS) {
            throw apiError('INVALID_PARAMETER', `concept is longer than ${MAX_CONCEPT_CHARS} characters`, 'Send a concept id or label.', {
              suggestedNextCall: { method: 'GET', path: '/api/lineage', query: { concept: example } },
            });
          }
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
