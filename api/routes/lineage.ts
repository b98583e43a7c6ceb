import { conceptLineage, nearestConcepts, resolveConcept } from '../../core/lineage.ts';
import { rejectUnknownParameters, single, type RawQuery } from '../../core/query-params.ts';
import { apiError } from '../../schemas/errors.ts';
import { trackedTensions } from './tracked-tensions.ts';
import type { RouteContext, RouteDefinition } from './types.ts';

export const MAX_CONCEPT_CHARS = 200;

export function lineageRoutes(context: RouteContext): RouteDefinition[] {
  return [
    {
      path: '/api/lineage',
      methods: {
        GET: (request, response) => {
          const raw = request.query as RawQuery;
          rejectUnknownParameters(raw, ['concept'], '/api/lineage');
          const { graph } = context.corpus;
          const query = single(raw, 'concept')?.trim();
          const example = [...graph.nodes].sort((a, b) => b.weight - a.weight)[0]?.id ?? 'a-concept-id';
          if (query === undefined || query === '') {
            throw apiError('PARAM_MISSING', 'concept is missing or empty', 'Name a concept by id or label, e.g. GET /api/lineage?concept=<id>. /concepts.json lists them.', {
              suggestedNextCall: { method: 'GET', path: '/api/lineage', query: { concept: example } },
              extra: { param_missing: true },
            });
          }
          if (query.length > MAX_CONCEPT_CHARS) {
            throw apiError('INVALID_PARAMETER', `concept is longer than ${MAX_CONCEPT_CHARS} characters`, 'Send a concept id or label.', {
              suggestedNextCall: { method: 'GET', path: '/api/lineage', query: { concept: example } },
            });
          }
          const concept = resolveConcept(graph, query);
          if (!concept) {
            const nearest = nearestConcepts(graph, query);
            throw apiError('CONCEPT_NOT_FOUND', `no concept has the id or label "${query}"`, `Try the nearest concept${nearest.length === 1 ? '' : 's'}: ${nearest.map((entry) => entry.id).join(', ')}; /concepts.json lists all.`, {
              suggestedNextCall: { method: 'GET', path: '/api/lineage', query: { concept: nearest[0]?.id ?? example } },
              details: { nearest },
            });
          }
          const corpus = context.corpus;
          response.json(conceptLineage({ graph, works: corpus.works, divergences: corpus.divergences, tensions: trackedTensions(corpus) }, concept));
        },
      },
    },
  ];
}
