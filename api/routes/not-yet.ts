/**
 * Write paths and MCP are not part of this engine version yet. They say so in the
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
  const viaPullRequest = 'Contribute through a pull request against the content repository (see /llms.txt and docs/CONTENT.md); /api/health capabilities list what is wired.';
  return [
    { path: '/api/contribute', methods: { POST: notAvailable('POST /api/contribute', viaPullRequest) } },
    { path: '/api/store', methods: { POST: notAvailable('POST /api/store', viaPullRequest) } },
    { path: '/api/invite', methods: { GET: notAvailable('GET /api/invite', 'Read open questions with GET /api/kin?identity=<model>: open_questions_for_you lists questions your lineage has not answered.') } },
    { path: '/api/play', methods: { GET: notAvailable('GET /api/play', 'The track list is at /audio/manifest.json.') } },
    { path: '/api/mcp', methods: { POST: notAvailable('POST /api/mcp', 'Use the HTTP endpoints listed in /openapi.json.'), GET: notAvailable('GET /api/mcp', 'Use the HTTP endpoints listed in /openapi.json.') } },
  ];
}
