/**
 * The route table's input step: before a handler runs, the query is parsed with the parameters
 * its operation declares (core/declared-query.ts), then with the route's rules across
 * parameters, inside one mending loop (core/next-call.ts) so that a refusal suggests the same
 * GET that succeeds. Handlers receive the typed result and keep only domain checks.
 */
import type { Request } from 'express';
import { parseDeclaredQuery } from '../../core/declared-query.ts';
import { parseOrSuggest } from '../../core/next-call.ts';
import type { RawQuery } from '../../schemas/errors.ts';
import type { Method, RouteDefinition, RouteInput } from './types.ts';

/**
 * The input of `route`'s `method`: its declared query parsed (or refused with the declaration's
 * code); `examples` are the deployment's values for required parameters (core/examples.ts).
 */
export function routeInput(route: RouteDefinition, method: Method, request: Request, examples: Record<string, string>): RouteInput {
  const raw = request.query as RawQuery;
  const parameters = route.operations[method]?.query;
  if (parameters === undefined) return { query: {}, raw };
  const refine = route.refine?.[method];
  const parse = (raw: RawQuery): unknown => {
    const query = parseDeclaredQuery(parameters, raw, { path: route.path, examples }) as Record<string, unknown>;
    return refine ? refine(query, Object.keys(raw)) : query;
  };
  return { query: parseOrSuggest(route.path, raw, parse), raw };
}
