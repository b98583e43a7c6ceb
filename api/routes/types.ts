import type { Capabilities } from '../../core/capabilities.ts';
import type { Corpus } from '../load-artifacts.ts';
import type { AsyncHandler } from '../http/middleware.ts';
import type { LiveService } from '../live/service.ts';
import type { Limiter, RateLimits } from '../http/rate-limit.ts';
import type { Store } from '../../storage/store.ts';
import type { DispositionDeps } from '../tensions/record-disposition.ts';

export interface RouteContext {
  corpus: Corpus;
  capabilities: Capabilities;
  now: () => Date;
  /** Present when a live panel is configured. */
  live?: LiveService;
  /** Bearer secret for persisting council records; persistence is off without it. */
  ingestSecret?: string;
  /** Appends a tension disposition to the content folder; POST /api/tensions/dispositions is off without it. */
  appendDisposition?: DispositionDeps['append'];
  /** Set by createApp: rate limits on writes and live paths. */
  limiter?: Limiter;
  limits?: RateLimits;
  /** Set by createApp: one line per server-side problem. */
  log?: (line: string) => void;
  /** Set by createApp: the store that also keeps Idempotency-Keys of job submissions. */
  store?: Store;
}

export type Method = 'GET' | 'POST';

/** A path and the handler of each method it accepts; every other method gets 405. */
export interface RouteDefinition {
  path: string;
  methods: Partial<Record<Method, AsyncHandler>>;
  /** The route refuses over-deep bodies itself, in its own protocol (MCP: a JSON-RPC error). */
  answersDeepBodies?: boolean;
}
