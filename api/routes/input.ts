/**
 * The route table's input step: before a handler runs, the query is parsed with the parameters
 * its operation declares (core/declared-query.ts), then with the route's rules across
 * parameters, inside one mending loop (core/next-call.ts) so that a refusal suggests the same
 * GET that succeeds; then the declared body is parsed with its schema, then a declared
 * Idempotency-Key header is checked. Handlers receive the
 * typed result and keep only domain checks.
 */
import type { Request, Response } from 'express';
import { z } from 'zod';
import { parseDeclaredQuery } from '../../core/declared-query.ts';
import { parseOrSuggest } from '../../core/next-call.ts';
import { apiError, type RawQuery, type SuggestedCall } from '../../schemas/errors.ts';
import { idempotencyKey } from '../http/idempotency.ts';
import type { Method, RouteDefinition, RouteInput } from './types.ts';

/** A body its schema refuses: every issue named by its field; suggestion: the same call mended (see core/examples.ts). */
export function invalidBody(error: z.ZodError, suggestion?: SuggestedCall, action = 'Fix the named fields; see /openapi.json for the body schema.') {
  const issues = error.issues.map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`);
  return apiError('INVALID_BODY', `the request body is invalid: ${issues.join('; ')}`, action, {
    details: { issues },
    ...(suggestion ? { suggestedNextCall: suggestion } : {}),
  });
}

function parseQuery(route: RouteDefinition, method: Method, raw: RawQuery, examples: Record<string, string>): unknown {
  const parameters = route.operations[method]?.query;
  if (parameters === undefined) return {};
  const refine = route.refine?.[method];
  const parse = (candidate: RawQuery): unknown => {
    const query = parseDeclaredQuery(parameters, candidate, { path: route.path, examples }) as Record<string, unknown>;
    return refine ? refine(query, Object.keys(candidate)) : query;
  };
  return parseOrSuggest(route.path, raw, parse);
}

/**
 * The input of `route`'s `method`: its declared query parsed (or refused with the declaration's
 * code), then its declared body (or 400 INVALID_BODY); `examples` are the deployment's values for
 * required parameters (core/examples.ts).
 */
export async function routeInput(
  route: RouteDefinition,
  method: Method,
  request: Request,
  response: Response,
  examples: Record<string, string>,
): Promise<RouteInput> {
  const raw = request.query as RawQuery;
  const query = parseQuery(route, method, raw, examples);
  const operation = route.operations[method];
  const body = await parseBody(route, method, request, response, query);
  // A declared Idempotency-Key header, last: a malformed one is refused on every form alike (400 INVALID_PARAMETER).
  return { query, raw, body, idempotencyKey: operation?.idempotencyKey ? idempotencyKey(request) : null };
}

async function parseBody(route: RouteDefinition, method: Method, request: Request, response: Response, query: unknown): Promise<unknown> {
  const operation = route.operations[method];
  const step = route.bodies?.[method];
  const schema = step?.schema ?? operation?.body?.schema;
  if (!(schema instanceof z.ZodType) || operation?.jsonRpc) return undefined;
  await step?.before?.(request, response);
  const received: unknown = request.body;
  const parsed = schema.safeParse(received ?? {});
  if (!parsed.success) throw invalidBody(parsed.error, step?.mend?.(received, query), step?.action);
  return parsed.data;
}
