/**
 * MCP is not part of this engine version yet. They say so in the
 * envelope and point at what works, instead of pretending to accept input.
 */
import { apiError } from '../errors.ts';
import type { RouteDefinition } from './types.ts';

function notAvailable(what: string, instead: string) {
  return () => {
    throw apiError('FEATURE_NOT_AVAILABLE', `${what} is not available in this engine version`, instead, { retryable: false });
  };
}

export function notYetRoutes(): RouteDefinition[] {
  return [
    { path: '/api/mcp', methods: { POST: notAvailable('POST /api/mcp', 'Use the HTTP endpoints listed in /openapi.json.'), GET: notAvailable('GET /api/mcp', 'Use the HTTP endpoints listed in /openapi.json.') } },
  ];
}
