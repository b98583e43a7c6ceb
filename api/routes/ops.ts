/**
 * GET /api/ready: readiness for a load balancer (api/ops/readiness.ts). /api/health stays
 * liveness, "the process answers", whatever its dependencies do.
 */
import { apiError } from '../../schemas/errors.ts';
import { ReadinessSchema, type EmbedderStatus } from '../../schemas/api.ts';
import type { Embedder } from '../../core/ports/embedder.ts';
import { isQuestionEmbedder } from '../../providers/question-embedder.ts';
import type { Readiness } from '../ops/readiness.ts';
import { noParameters, ok } from '../openapi/parts.ts';
import { send, type RouteDefinition, type RouteSpec } from './types.ts';

export const READY: RouteSpec = {
  path: '/api/ready',
  operations: {
    GET: {
      operationId: 'getReadiness',
      tags: ['orientation'],
      summary: 'Readiness: whether this process should be sent traffic',
      description:
        'For load balancers: 200 once the artifacts are loaded, the store answers, the question embedder has warmed up and the live panel configuration (when one is given) is valid; 503 NOT_READY with details.reason and details.checks otherwise, and while draining after SIGTERM. The store is asked on every call. Not cached. Liveness is GET /api/health. embedder (also in details of a 503) names the question embedder, its deadline and how the last question embedding went: an embeddings endpoint that is slow or down leaves the process ready, its questions answered from the words alone (retrieval.vectors unavailable on GET /api/query).',
      responses: { 200: ok('Ready, with each check.', ReadinessSchema) },
      // The route table refuses any parameter (query: []): only the readiness answer is this handler's.
      query: [],
      errors: { ...noParameters, 503: ['NOT_READY'] },
    },
  },
};

/** What GET /api/ready says of the question embedder (providers/question-embedder.ts; a bare embedder reports no deadline and no question). */
export function embedderStatus(embedder: Embedder): EmbedderStatus {
  if (!isQuestionEmbedder(embedder)) return { id: embedder.id, deadline_ms: null, last_question: null };
  return { id: embedder.id, deadline_ms: embedder.deadlineMs ?? null, last_question: embedder.lastQuestion ?? null };
}

export function opsRoutes(readiness: Readiness, embedder: Embedder): RouteDefinition[] {
  return [
    {
      ...READY,
      methods: {
        GET: async (_request, response) => {
          response.setHeader('Cache-Control', 'no-store');
          const report = await readiness.check();
          const status = embedderStatus(embedder);
          if (!report.ready) {
            throw apiError('NOT_READY', `not ready: ${report.reason}`, 'Send traffic elsewhere and probe GET /api/ready again in a few seconds.', {
              retryable: true,
              headers: { 'Retry-After': '5', 'Cache-Control': 'no-store' },
              details: { reason: report.reason, checks: report.checks, embedder: status },
            });
          }
          send(response, ReadinessSchema, { ready: true, checks: report.checks, embedder: status });
        },
      },
    },
  ];
}
