/** Cross-cutting HTTP concerns: query parsing, CORS, security headers, error rendering. */
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError, apiError } from '../errors.ts';
import { ProviderError } from '../providers/chat.ts';
import { StoreUnavailableError, UnstorableTextError } from '../storage/store.ts';

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

export const cors: RequestHandler = (request, response, next) => {
  response.setHeader('Access-Control-Allow-Origin', '*');
  response.setHeader('Access-Control-Expose-Headers', 'Retry-After, RateLimit, RateLimit-Policy, Allow, Location');
  if (request.method === 'OPTIONS') {
    response.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, POST, OPTIONS');
    response.setHeader('Access-Control-Allow-Headers', 'Content-Type, Authorization, Idempotency-Key, Mcp-Session-Id');
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
  // A static file may have set its own type before failing: the envelope is JSON.
  response.removeHeader('Content-Type');
  response.removeHeader('Content-Length');
  response.removeHeader('ETag');
  response.removeHeader('Last-Modified');
  for (const [name, value] of Object.entries(error.options.headers ?? {})) response.setHeader(name, value);
  response.status(error.status).json(error.toBody());
}

export function createErrorHandler(log: (line: string) => void): ErrorRequestHandler {
  return (error: unknown, _request, response, _next) => {
    if (response.headersSent) return;
    if (error instanceof ApiError) {
      renderError(response, error);
      return;
    }
    if (error instanceof StoreUnavailableError) {
      // An outage, not a bug: one line per request, no stack, and the client is told to retry.
      log(error.message);
      renderError(
        response,
        apiError('STORE_UNAVAILABLE', 'the store is unavailable for the moment; this request was not acknowledged', 'Retry in a few seconds (Retry-After); resend writes with the same Idempotency-Key so that none is stored twice. The fast path GET /api/query?q=... and the Atlas do not need the store.', {
          retryable: true,
          headers: { 'Retry-After': '2' },
        }),
      );
      return;
    }
    if (error instanceof UnstorableTextError) {
      // The edge rule (text-guard.ts) answers first; this is text that reached a driver another way.
      renderError(response, apiError('INVALID_TEXT', error.message, 'Remove NUL characters and unpaired surrogates from the text and resend. Nothing was stored.', { details: { field: error.field, problem: error.problem } }));
      return;
    }
    if (error instanceof ProviderError) {
      renderError(response, apiError('PROVIDER_FAILED', `the model provider failed: ${error.message}`, 'Retry later, or use the fast path GET /api/query?q=... which needs no model call.', { retryable: true }));
      return;
    }
    // Only errors meant for the client (body-parser's, with `expose`) say something about
    // the request itself; a provider's status must never leak through as ours.
    const type = (error as { type?: string }).type;
    const exposed = (error as { expose?: boolean }).expose === true;
    const status = type || exposed ? ((error as { status?: number; statusCode?: number }).status ?? (error as { statusCode?: number }).statusCode) : undefined;
    if (type === 'entity.parse.failed') {
      renderError(response, new ApiError(400, 'INVALID_JSON', 'the request body is not valid JSON', 'Send a JSON object with Content-Type: application/json.'));
      return;
    }
    if (type === 'entity.too.large' || status === 413) {
      renderError(response, new ApiError(413, 'PAYLOAD_TOO_LARGE', 'the request body is too large', 'Shorten the body; see /openapi.json for the size limits.'));
      return;
    }
    if ((status !== undefined && status >= 400 && status < 500) || type === 'encoding.unsupported' || type === 'charset.unsupported') {
      renderError(response, new ApiError(400, 'BAD_REQUEST', 'the request could not be read', 'Send UTF-8 JSON with Content-Type: application/json.'));
      return;
    }
    log(`unhandled error: ${(error as Error)?.stack ?? String(error)}`);
    renderError(
      response,
      // Transient failures have their own codes (STORE_UNAVAILABLE, PROVIDER_FAILED, ...); an
      // unknown one is presumed permanent, so a client following the envelope does not loop.
      apiError('INTERNAL_ERROR', 'an internal error occurred', 'Do not resend the same request unchanged; use the fast path GET /api/query?q=... meanwhile, or report the time of the failure.', {
        retryable: false,
      }),
    );
  };
}
