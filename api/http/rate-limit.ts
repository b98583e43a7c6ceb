/**
 * Rate limits on every write and every live path, counted in the store (so several API
 * processes sharing a store share the counters), keyed by a hashed client id, answered
 * with 429 + Retry-After and the draft IETF RateLimit fields.
 */
import type { Request, Response } from 'express';
import { apiError } from '../errors.ts';
import type { RateLimit, Store } from '../storage/store.ts';
import { clientHash } from './client-id.ts';

export interface Window {
  limit: number;
  windowMs: number;
}

export interface RateLimits {
  /** POST /api/contribute and POST /api/store, per client. */
  contribute: Window;
  /** POST /api/play, per client. */
  play: Window;
  /** Deliberation and trace (sync or async), per client and for the whole deployment. */
  live: Window;
  liveGlobal: Window;
  /** Council is the slowest and costliest path: its own, tighter limits. */
  council: Window;
  councilGlobal: Window;
}

const HOUR = 3_600_000;
export const DEFAULT_RATE_LIMITS: RateLimits = {
  contribute: { limit: 30, windowMs: HOUR },
  play: { limit: 120, windowMs: HOUR },
  live: { limit: 30, windowMs: HOUR },
  liveGlobal: { limit: 600, windowMs: HOUR },
  council: { limit: 6, windowMs: HOUR },
  councilGlobal: { limit: 60, windowMs: HOUR },
};

export function setRateHeaders(response: Response, limit: Window, remaining: number, resetMs: number): void {
  response.setHeader('RateLimit-Policy', `${limit.limit};w=${Math.round(limit.windowMs / 1000)}`);
  response.setHeader('RateLimit', `limit=${limit.limit}, remaining=${remaining}, reset=${Math.max(0, Math.ceil(resetMs / 1000))}`);
}

export function rateLimited(retryAfterMs: number, limit: Window, scope: 'client' | 'deployment' = 'client') {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  const minutes = Math.round(limit.windowMs / 60000);
  return apiError(
    'RATE_LIMITED',
    scope === 'client' ? `too many requests from this client: the limit is ${limit.limit} per ${minutes} minutes` : `this deployment's limit of ${limit.limit} per ${minutes} minutes on this path is reached`,
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

export function createLimiter(store: Store, now: () => Date): Limiter {
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
