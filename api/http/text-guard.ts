/**
 * One rule at the edge for every write: each string of a POST body (checked by body-preflight.ts
 * before any route, once the body is known to be within the depth limit),
 * and each query parameter of a GET that submits a job (async=1, by submitJob), is well-formed
 * Unicode without NUL; anything else is 400 INVALID_TEXT before a store driver sees it, so
 * SQLite and PostgreSQL give the same answer. Reads are not concerned: the fast path echoes
 * any question byte for byte.
 */
import type { Request } from 'express';
import { findIllFormedText, toWellFormedText, type IllFormedText } from '../../core/well-formed-text.ts';
import { storableText } from '../../storage/text-check.ts';
import { apiError, type ApiError, type SuggestedCall } from '../../schemas/errors.ts';

const DESCRIPTION = { nul: 'a NUL character', lone_surrogate: 'an unpaired UTF-16 surrogate' } as const;

export function invalidText(found: IllFormedText, suggestedNextCall: SuggestedCall) {
  return apiError(
    'INVALID_TEXT',
    `${found.field} contains ${DESCRIPTION[found.problem]} (${found.character}) at index ${found.index}; text that is stored must be well-formed Unicode without NUL`,
    `Remove NUL characters and unpaired surrogates from ${found.field} (send text as UTF-8, or as JSON \\u escapes that pair every surrogate) and resend. Nothing was stored.`,
    { details: { ...found }, suggestedNextCall },
  );
}

/** NUL removed, each unpaired surrogate replaced by U+FFFD: a resend that passes the rule. */
const cleaned = toWellFormedText;

/** 400 INVALID_TEXT for the first ill-formed string of a parsed POST body, if any (MCP relays each tool call through the app, where the rule applies to the call). */
export function illFormedBody(request: Request): ApiError | undefined {
  if (request.body === undefined) return undefined;
  const found = findIllFormedText(request.body, 'body');
  return found ? invalidText(found, { method: 'POST', path: request.path, body: storableText(request.body as unknown) }) : undefined;
}

/**
 * The same rule for the query parameters of a GET that submits a job (async=1): called by the
 * route once the parameters are validated, so an unknown parameter is still UNKNOWN_PARAMETER.
 */
export function assertWellFormedQuery(request: Request): void {
  const query = request.query as Record<string, string | string[]>;
  const found = findIllFormedText(query, 'query');
  if (!found) return;
  const resend = Object.fromEntries(Object.entries(query).map(([name, value]) => [cleaned(name), cleaned(Array.isArray(value) ? (value[0] ?? '') : value)]));
  throw invalidText(found, { method: 'GET', path: request.path, query: resend });
}
