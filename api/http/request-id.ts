/**
 * X-Request-Id: taken from the caller when well-formed (a proxy's or a client's own id, so
 * one id follows a request across hops), else generated; echoed on the response, and the
 * context of everything the request does (api/ops/request-context.ts). A malformed id is
 * replaced, never refused: an id is for correlation, not worth failing a request over.
 */
import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { runInContext } from '../ops/request-context.ts';

/** Printable, no spaces or separators that could forge a log field: UUIDs, ULIDs, proxy ids. */
const WELL_FORMED = /^[A-Za-z0-9._:-]{8,128}$/;

export const REQUEST_ID_HEADER = 'X-Request-Id';

export function isWellFormedRequestId(value: unknown): value is string {
  return typeof value === 'string' && WELL_FORMED.test(value);
}

/** The request's id once requestId has run (the header is rewritten to the id in use). */
export function requestIdOf(request: Pick<Request, 'headers'>): string | undefined {
  const value = request.headers['x-request-id'];
  return isWellFormedRequestId(value) ? value : undefined;
}

export const requestId: RequestHandler = (request, response, next) => {
  const given = request.headers['x-request-id'];
  const id = isWellFormedRequestId(given) ? given : randomUUID();
  request.headers['x-request-id'] = id;
  response.setHeader(REQUEST_ID_HEADER, id);
  runInContext({ requestId: id }, next);
};

/**
 * Enters the request's context again: a body parser calls `next` from the socket's stream
 * events, which run outside it. Mounted after the parsers, before the routes.
 */
export const requestContext: RequestHandler = (request, _response, next) => {
  const id = requestIdOf(request);
  if (id === undefined) {
    next();
    return;
  }
  runInContext({ requestId: id }, next);
};
