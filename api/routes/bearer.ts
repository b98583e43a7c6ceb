/** The ingestion secret as a bearer token, for curator writes over HTTP. */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { apiError, type SuggestedCall } from '../../schemas/errors.ts';
import type { RouteContext } from './types.ts';

function constantTimeEqual(a: string, b: string): boolean {
  // Hash first so the comparison does not leak the secret's length.
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/** Every refusal names a read that needs no secret: the tensions as they stand. */
const READ_TENSIONS: SuggestedCall = { method: 'GET', path: '/api/tensions' };

export function requireIngestSecret(request: Request, context: RouteContext, what: string, suggestedNextCall: SuggestedCall = READ_TENSIONS): void {
  if (!context.ingestSecret) {
    throw apiError(
      'PERSISTENCE_UNAVAILABLE',
      `${what} is not enabled on this deployment (no INGEST_SECRET configured)`,
      'Ask the operator to set INGEST_SECRET, or use the curator CLI (npm run curate).',
      { suggestedNextCall },
    );
  }
  const match = (request.get('authorization') ?? '').match(/^Bearer\s+(.+)$/i);
  if (!match) {
    throw apiError('AUTH_REQUIRED', `${what} needs Authorization: Bearer <INGEST_SECRET>`, 'Send the ingestion secret as a bearer token.', {
      headers: { 'WWW-Authenticate': 'Bearer realm="polyphony-ingest"' },
      suggestedNextCall,
    });
  }
  if (!constantTimeEqual(match[1]!.trim(), context.ingestSecret)) {
    throw apiError('AUTH_INVALID', 'the bearer token is not the ingestion secret', 'Check the secret with the operator.', { suggestedNextCall });
  }
}
