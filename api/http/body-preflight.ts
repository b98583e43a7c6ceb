/**
 * The one place a POST body is read and checked before any route sees it, in this order:
 *
 * 1. size: a JSON body announced (Content-Length) over the limit is refused before a byte of it
 *    is read; one that grows past it while read (chunked, or compressed) is refused the moment
 *    it does. Either way 413 PAYLOAD_TOO_LARGE with a lingering close (lingering-close.ts), so a
 *    client still writing its body reads the answer;
 * 2. JSON (express.json: INVALID_JSON, unreadable encodings and charsets);
 * 3. depth: more than MAX_BODY_DEPTH levels is 400 BODY_TOO_DEEP (body-depth.ts, iterative);
 * 4. text: NUL or an unpaired surrogate in any string is 400 INVALID_TEXT (text-guard.ts).
 *
 * The schema is each route's. Nothing before step 3 walks the parsed value, and what walks it
 * after (text, schema, copies for suggestions, idempotency fingerprints) meets at most
 * MAX_BODY_DEPTH levels, so no recursion over the caller's structure can overflow the stack.
 */
import express, { type Request, type RequestHandler } from 'express';
import { apiError, type ApiError } from '../../schemas/errors.ts';
import { bodyTooDeep, nestsDeeperThan } from './body-depth.ts';
import { closeLingering, DEFAULT_LINGER, type LingerOptions } from './lingering-close.ts';
import { illFormedBody } from './text-guard.ts';

export interface BodyPreflightOptions {
  maxBytes: number;
  /** Paths that refuse over-deep bodies in their own protocol and check text per relayed call (MCP). */
  answersOwnBodyChecks: (path: string) => boolean;
  linger?: LingerOptions;
}

export function payloadTooLarge(maxBytes: number): ApiError {
  return apiError('PAYLOAD_TOO_LARGE', 'the request body is too large', 'Shorten the body; see /openapi.json for the size limits.', {
    details: { max_bytes: maxBytes },
    headers: { Connection: 'close' },
  });
}

/** Whether express.json will read this request's body. */
function readsJson(request: Request): boolean {
  const hasBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
  return hasBody && Boolean(request.is('application/json'));
}

export function createBodyPreflight(options: BodyPreflightOptions): RequestHandler {
  const { maxBytes } = options;
  const linger = options.linger ?? DEFAULT_LINGER;
  const json = express.json({ limit: maxBytes });
  return (request, response, next) => {
    if (request.method !== 'POST') return next();
    const refuse = () => {
      closeLingering(request, response, linger);
      next(payloadTooLarge(maxBytes));
    };
    if (!readsJson(request)) return json(request, response, next);
    // 1. Size, announced: refused before reading (the parser would first read it all).
    if (Number(request.headers['content-length']) > maxBytes) return refuse();
    // 1. Size, as it arrives: bytes on the wire, so a compressed or chunked body is cut off at
    // the limit too (the parser would read the rest of it, however long, before answering).
    let received = 0;
    let refused = false;
    const count = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= maxBytes || refused) return;
      refused = true;
      request.off('data', count);
      refuse();
    };
    request.on('data', count);
    json(request, response, (error?: unknown) => {
      request.off('data', count);
      if (refused) return;
      if (error !== undefined) return next(error);
      // 3. Depth, before anything walks the value.
      if (options.answersOwnBodyChecks(request.path)) return next();
      if (nestsDeeperThan(request.body)) return next(bodyTooDeep());
      // 4. Text.
      next(illFormedBody(request));
    });
  };
}
