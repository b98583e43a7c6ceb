/** Cross-cutting HTTP concerns: query parsing, CORS, security headers, error rendering. */
import { randomBytes } from 'node:crypto';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError, apiError } from '../../schemas/errors.ts';
import { ProviderError } from '../../providers/chat.ts';
import { StoreUnavailableError, UnstorableTextError } from '../../storage/store.ts';
import type { Suggest } from './suggest.ts';
import { requestIdOf } from './request-id.ts';

/**
 * WHATWG parsing of the query string: flat string values (repeats become arrays), no
 * nested objects, `+` as space. question_received echoes exactly what this yields.
 */
export function parseQueryString(queryString: string): Record<string, string | string[]> {
  // No prototype: "__proto__" is an ordinary (and therefore unknown, rejected) parameter.
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const [key, value] of new URLSearchParams(queryString)) {
    const existing = out[key];
    if (existing === undefined) out[key] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else out[key] = [existing, value];
  }
  return out;
}

/** On every answer, errors included (also those http-server.ts writes before routing). */
export const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'Retry-After, RateLimit, RateLimit-Policy, Allow, Location, Link, X-Request-Id, ETag',
} as const;

export const cors: RequestHandler = (request, response, next) => {
  for (const [name, value] of Object.entries(CORS_HEADERS)) response.setHeader(name, value);
  if (request.method === 'OPTIONS') {
    response.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, POST, OPTIONS');
    response.setHeader('Access-Control-Allow-Headers', 'Content-Type, Authorization, Idempotency-Key, Mcp-Session-Id, X-Request-Id, If-None-Match');
    response.setHeader('Access-Control-Max-Age', '600');
    response.status(204).end();
    return;
  }
  next();
};

export const securityHeaders: RequestHandler = (_request, response, next) => {
  response.setHeader('X-Content-Type-Options', 'nosniff');
  response.setHeader('Referrer-Policy', 'no-referrer');
  response.setHeader('X-Frame-Options', 'DENY');
  response.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
  next();
};

export type AsyncHandler = (request: Request, response: Response) => Promise<void> | void;

/** Express 5 forwards rejected promises; this keeps handlers small and typed. */
export function handle(handler: AsyncHandler): RequestHandler {
  return (request, response, next: NextFunction) => {
    Promise.resolve(handler(request, response)).catch(next);
  };
}

export function renderError(response: Response, error: ApiError): void {
  // A client error (4xx but 429) that names no next call of its own gets the example call of its path.
  const suggest = response.locals.suggestNextCall as Suggest | undefined;
  if (suggest && !error.options.suggestedNextCall && error.status >= 400 && error.status < 500 && error.status !== 429) {
    error.options.suggestedNextCall = suggest(response.req) ?? null;
  }
  // A static file may have set its own type before failing: the envelope is JSON.
  response.removeHeader('Content-Type');
  response.removeHeader('Content-Length');
  response.removeHeader('ETag');
  response.removeHeader('Last-Modified');
  for (const [name, value] of Object.entries(error.options.headers ?? {})) response.setHeader(name, value);
  response.status(error.status).json(error.toBody());
}

export function createErrorHandler(log: (line: string) => void, suggest?: Suggest): ErrorRequestHandler {
  return (error: unknown, request, response, _next) => {
    if (response.headersSent) return;
    if (suggest) response.locals.suggestNextCall = suggest;
    renderError(response, toApiError(error, log, request));
  };
}

/** Every error as the ApiError the client gets: the one mapping for JSON bodies and event streams. */
export function toApiError(error: unknown, log: (line: string) => void, request?: { method: string; path: string; headers?: Request['headers'] }): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof StoreUnavailableError) {
    // An outage, not a bug: one line per request, no stack, and the client is told to retry.
    log(error.message);
    return apiError(
      'STORE_UNAVAILABLE',
      'the store is unavailable for the moment; this request was not acknowledged',
      'Retry in a few seconds (Retry-After); resend writes with the same Idempotency-Key so that none is stored twice. The fast path GET /api/query?q=... and the Atlas do not need the store.',
      {
        retryable: true,
        headers: { 'Retry-After': '2' },
      },
    );
  }
  if (error instanceof UnstorableTextError) {
    // The edge rule (text-guard.ts) answers first; this is text that reached a driver another way.
    return apiError('INVALID_TEXT', error.message, 'Remove NUL characters and unpaired surrogates from the text and resend. Nothing was stored.', {
      details: { field: error.field, problem: error.problem },
    });
  }
  if (error instanceof ProviderError) {
    return apiError(
      'PROVIDER_FAILED',
      `the model provider failed: ${error.message}`,
      'Retry later, or use the fast path GET /api/query?q=... which needs no model call.',
      { retryable: true },
    );
  }
  // Only errors meant for the client (body-parser's, with `expose`) say something about
  // the request itself; a provider's status must never leak through as ours.
  const type = (error as { type?: string }).type;
  const exposed = (error as { expose?: boolean }).expose === true;
  const status = type || exposed ? ((error as { status?: number; statusCode?: number }).status ?? (error as { statusCode?: number }).statusCode) : undefined;
  if (type === 'entity.parse.failed') {
    return new ApiError(400, 'INVALID_JSON', 'the request body is not valid JSON', 'Send a JSON object with Content-Type: application/json.');
  }
  if (type === 'entity.too.large' || status === 413) {
    return new ApiError(413, 'PAYLOAD_TOO_LARGE', 'the request body is too large', 'Shorten the body; see /openapi.json for the size limits.');
  }
  if ((status !== undefined && status >= 400 && status < 500) || type === 'encoding.unsupported' || type === 'charset.unsupported') {
    return new ApiError(400, 'BAD_REQUEST', 'the request could not be read', 'Send UTF-8 JSON with Content-Type: application/json.');
  }
  // One line a failure, with an id the client also receives: a failing dependency must not
  // flood the log with a stack per request, and an operator finds the line from a report.
  // The request's id when there is one (X-Request-Id): the same id as its access log line.
  const errorId = (request?.headers && requestIdOf({ headers: request.headers })) || randomBytes(6).toString('hex');
  log(`500 INTERNAL_ERROR error_id=${errorId}${request ? ` ${request.method} ${request.path}` : ''}: ${describeFailure(error)}`);
  // Transient failures have their own codes (STORE_UNAVAILABLE, PROVIDER_FAILED, ...); an
  // unknown one is presumed permanent, so a client following the envelope does not loop.
  return apiError(
    'INTERNAL_ERROR',
    'an internal error occurred',
    `Do not resend the same request unchanged; use the fast path GET /api/query?q=... meanwhile, or report error_id ${errorId}.`,
    {
      retryable: false,
      details: { error_id: errorId },
    },
  );
}

/** Name, message and the innermost frame of our own code, on one line. */
function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return `thrown ${typeof error}: ${oneLine(String(error))}`;
  const frame = error.stack?.split('\n').find((line) => /^\s+at /.test(line) && !line.includes('node_modules') && !line.includes('node:'));
  const where = frame ? ` (${frame.trim().replace(/^at /, '')})` : '';
  return `${error.name}: ${oneLine(error.message)}${where}`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').slice(0, 500);
}
