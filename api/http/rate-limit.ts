/**
 * Rate limits on every write and every live path, counted in the store (so several API
 * processes sharing a store share the counters), keyed by a hashed client id, answered
 * with 429 + Retry-After and the draft IETF RateLimit fields.
 */
import type { Request, Response } from 'express';
import { apiError } from '../../schemas/errors.ts';
import type { LimitsStore, RateLimit } from '../../storage/limits.ts';
import type { SecretsStore } from '../../storage/secrets.ts';
import { clientHash } from './client-id.ts';

import { DEFAULT_RATE_LIMITS, type RateLimits, type Window } from '../../core/rate-limits.ts';
export { DEFAULT_RATE_LIMITS, type RateLimits, type Window };

export function setRateHeaders(response: Response, limit: Window, remaining: number, resetMs: number): void {
  response.setHeader('RateLimit-Policy', `${limit.limit};w=${Math.round(limit.windowMs / 1000)}`);
  response.setHeader('RateLimit', `limit=${limit.limit}, remaining=${remaining}, reset=${Math.max(0, Math.ceil(resetMs / 1000))}`);
}

export function rateLimited(retryAfterMs: number, limit: Window, scope: 'client' | 'deployment' = 'client') {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  const minutes = Math.round(limit.windowMs / 60000);
  return apiError(
    'RATE_LIMITED',
    scope === 'client'
      ? `too many requests from this client: the limit is ${limit.limit} per ${minutes} minutes`
      : `this deployment's limit of ${limit.limit} per ${minutes} minutes on this path is reached`,
    `Wait ${seconds} s (Retry-After), then resend; for writes reuse the same Idempotency-Key so a resend is never stored twice. The fast path GET /api/query?q=... is not limited this way.`,
    {
      retryable: true,
      headers: {
        'Retry-After': String(seconds),
        'RateLimit-Policy': `${limit.limit};w=${Math.round(limit.windowMs / 1000)}`,
        RateLimit: `limit=${limit.limit}, remaining=0, reset=${seconds}`,
      },
      details: { retry_after_seconds: seconds, scope },
    },
  );
}

export interface Limiter {
  client(request: Request): Promise<string>;
  /** Counts one request against the client's window and, when given, the global one. */
  check(request: Request, response: Response, name: string, perClient: Window, global?: Window): Promise<void>;
}

export function createLimiter(store: LimitsStore & SecretsStore, now: () => Date): Limiter {
  const salt = store.secret('client-hash-salt');
  const client = async (request: Request) => clientHash(request, await salt);
  return {
    client,
    async check(request, response, name, perClient, global) {
      const key: RateLimit = { key: `${name}:${await client(request)}`, ...perClient };
      const verdict = await store.hit(key, now());
      if (!verdict.allowed) throw rateLimited(verdict.resetMs, perClient, 'client');
      if (global) {
        const all = await store.hit({ key: `${name}:*`, ...global }, now());
        if (!all.allowed) throw rateLimited(all.resetMs, global, 'deployment');
      }
      setRateHeaders(response, perClient, verdict.remaining, verdict.resetMs);
    },
  };
}
