/**
 * The request a piece of work belongs to, carried through async calls (AsyncLocalStorage): a
 * log line written anywhere below a request, in a job it started or in a model call it made,
 * names that request without every function passing its id along.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface RequestContext {
  requestId: string;
  /** Set while a background job runs (its request id is the one that submitted it). */
  jobId?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

export function currentContext(): RequestContext | undefined {
  return storage.getStore();
}

export function runInContext<T>(context: RequestContext, work: () => T): T {
  return storage.run(context, work);
}
