/** Paths that call live models. Until a panel is configured they answer 503 and point at what works. */
import { apiError } from '../errors.ts';
import type { RouteContext, RouteDefinition } from './types.ts';

export function livePanelUnavailable(question: string | undefined) {
  return apiError(
    'LIVE_PANEL_UNAVAILABLE',
    'this deployment has no live model panel configured, so deliberation, trace and council are unavailable',
    'Use the fast path instead: GET /api/query?q=<question> (retrieval with a receipt, no model call), and GET /api/divergences/search?q=<question> for existing Atlas records. /api/health lists what is wired.',
    {
      retryable: false,
      suggestedNextCall: { method: 'GET', path: '/api/query', query: { q: question ?? '<your question>' } },
    },
  );
}

export function liveRoutes(_context: RouteContext): RouteDefinition[] {
  const unavailable = (request: { query: unknown }) => {
    const q = (request.query as Record<string, unknown>).q;
    throw livePanelUnavailable(typeof q === 'string' ? q : undefined);
  };
  return [
    { path: '/api/council', methods: { GET: unavailable, POST: unavailable } },
    { path: '/api/trace', methods: { GET: unavailable } },
  ];
}
