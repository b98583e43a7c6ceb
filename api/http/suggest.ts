/**
 * The suggested_next_call of refusals that no route shaped (unreadable or oversized bodies,
 * wrong methods, errors raised before a handler ran): the deployment's example call of the
 * same path, with the method the caller used when the path takes it.
 */
import type { Request } from 'express';
import { exampleCall } from '../../core/examples.ts';
import type { SuggestedCall } from '../../schemas/errors.ts';
import type { Corpus } from '../load-artifacts.ts';
import type { RouteDefinition } from '../routes/types.ts';

export type Suggest = (request: Request) => SuggestedCall | undefined;

export const AGENT_ENTRY_CALL: SuggestedCall = { method: 'GET', path: '/api/agent-entry' };

export function createSuggest(corpus: Corpus, routes: readonly RouteDefinition[]): Suggest {
  return (request) => routeCall(corpus, routes, request.method === 'HEAD' ? 'GET' : request.method, request.path) ?? AGENT_ENTRY_CALL;
}

export function routeCall(corpus: Corpus, routes: readonly RouteDefinition[], method: string, path: string): SuggestedCall | undefined {
  const route = routes.find((candidate) => candidate.path === path);
  if (!route) return undefined;
  const allowed = Object.keys(route.methods);
  const methods = allowed.includes(method) ? [method, ...allowed] : allowed;
  for (const candidate of methods) {
    const call = exampleCall(corpus, candidate, path);
    if (call) return call;
  }
  return undefined;
}
