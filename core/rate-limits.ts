/** The rate limits' shape and defaults (settings in api/config.ts RATE_LIMIT_SETTINGS; enforced by api/http/rate-limit.ts). */
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
