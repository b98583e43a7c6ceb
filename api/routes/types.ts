import type { Capabilities } from '../core/capabilities.ts';
import type { Corpus } from '../load-artifacts.ts';
import type { AsyncHandler } from '../http/middleware.ts';

export interface RouteContext {
  corpus: Corpus;
  capabilities: Capabilities;
  now: () => Date;
}

export type Method = 'GET' | 'POST';

/** A path and the handler of each method it accepts; every other method gets 405. */
export interface RouteDefinition {
  path: string;
  methods: Partial<Record<Method, AsyncHandler>>;
}
