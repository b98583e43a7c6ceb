/**
 * Response compression (brotli or gzip, as Accept-Encoding allows) for HTML, JSON, markdown
 * and text: ADR 0008. Never for event streams (each event must reach the client when it is
 * written, not when a compression block fills), audio (already compressed), or partial
 * content (byte ranges count bytes of the file as stored).
 *
 * Two ways, one filter: an answer sent whole in one `end()` (every JSON answer of the API,
 * up to ONE_SHOT_MAX bytes) is compressed there at once and sent with its length; anything
 * written in parts (files, streams, larger answers), or whose negotiation this module does
 * not settle, goes through the `compression` package's stream. The stream costs a trip through
 * libuv's thread pool and a chunked body whose last chunk is a write of its own: about 1.7 ms
 * on a fast-path answer of 9 kB, ten times the compression itself (bench/README.md).
 */
import compression from 'compression';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { brotliCompressSync, constants as zlib, deflateSync, gzipSync } from 'node:zlib';

/** Bodies from this size are compressed (the package's default threshold). */
const THRESHOLD = 1024;
/** Bodies up to this size sent in one `end()` are compressed at once, on the event loop (about 0.5 ms at worst). */
export const ONE_SHOT_MAX = 64 * 1024;

export function shouldCompress(request: Request, response: Response): boolean {
  const type = String(response.getHeader('Content-Type') ?? '').toLowerCase();
  if (type.startsWith('text/event-stream') || type.startsWith('audio/') || type.startsWith('video/')) return false;
  if (response.statusCode === 206 || response.hasHeader('Content-Range') || request.headers.range !== undefined) return false;
  if (!compression.filter(request, response)) return false;
  // A file's ETag names its bytes as stored; a compressed body is another representation of
  // the same resource, which a weak validator describes (conditional GETs compare weakly).
  const etag = response.getHeader('ETag');
  if (typeof etag === 'string' && etag.startsWith('"')) response.setHeader('ETag', `W/${etag}`);
  return true;
}

type Coding = 'br' | 'gzip' | 'deflate';
/** The codings offered, in the package's order of preference where the client's weights tie. */
const CODINGS: readonly Coding[] = ['br', 'gzip', 'deflate'];

/**
 * The coding to answer with from an Accept-Encoding header (RFC 9110 §12.5.3): the highest
 * weight among br, gzip and deflate (named, or through `*`), ties in that order; undefined when
 * none weighs at least as much as identity or the header cannot be read (the stream then
 * negotiates as it always has).
 */
export function chooseCoding(header: string | undefined): Coding | undefined {
  if (!header) return undefined; // no header: the package sends identity
  const weights = new Map<string, number>();
  for (const part of header.split(',')) {
    const [rawName, ...parameters] = part.toLowerCase().split(';');
    const name = rawName?.trim();
    if (!name) continue;
    let q = 1;
    for (const parameter of parameters) {
      const [key, value] = parameter.trim().split('=');
      if (key !== 'q') continue;
      q = Number(value);
      if (!/^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(value ?? '')) return undefined;
    }
    weights.set(name, Math.max(q, weights.get(name) ?? 0));
  }
  const weightOf = (coding: string) => weights.get(coding) ?? weights.get('*') ?? 0;
  let best: Coding | undefined;
  for (const coding of CODINGS) if (weightOf(coding) > 0 && (!best || weightOf(coding) > weightOf(best))) best = coding;
  if (!best) return undefined;
  // Identity unnamed weighs as the least named weight (as the package's negotiator reads it).
  const identity = weights.get('identity') ?? weights.get('*') ?? Math.min(...weights.values());
  return weightOf(best) >= identity ? best : undefined;
}

function encode(coding: Coding, body: Buffer): Buffer {
  if (coding === 'gzip') return gzipSync(body);
  if (coding === 'deflate') return deflateSync(body);
  return brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 4, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } });
}

/** The coding a whole body of `length` bytes gets at once, or undefined to leave it to the stream. */
function oneShotCoding(request: Request, response: Response, length: number): Coding | undefined {
  if (length < THRESHOLD || length > ONE_SHOT_MAX || request.method === 'HEAD') return undefined;
  if (response.statusCode === 204 || response.statusCode === 304) return undefined;
  const encoded = response.getHeader('Content-Encoding');
  if (encoded !== undefined && String(encoded).toLowerCase() !== 'identity') return undefined;
  if (/(?:^|,)\s*no-transform\s*(?:,|$)/i.test(String(response.getHeader('Cache-Control') ?? ''))) return undefined;
  const coding = chooseCoding(request.headers['accept-encoding']);
  return coding && shouldCompress(request, response) ? coding : undefined;
}

/**
 * Wraps `end` (after the package has wrapped it, so this runs first): a body given whole to
 * `end()` before anything was written is compressed here; the package then finds it encoded
 * and only adds `Vary`.
 */
function compressWholeBodies(request: Request, response: Response): void {
  const end = response.end as (...args: unknown[]) => Response;
  const write = response.write;
  let written = false;
  response.write = function (this: Response, ...args: Parameters<Response['write']>) {
    written = true;
    return write.apply(this, args);
  } as Response['write'];
  response.end = function (this: Response, ...args: unknown[]) {
    const [chunk, encoding] = args;
    if (!written && !this.headersSent && (typeof chunk === 'string' || Buffer.isBuffer(chunk))) {
      const body = typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : chunk;
      const coding = oneShotCoding(request, this, body.length);
      if (coding) {
        const compressed = encode(coding, body);
        this.setHeader('Content-Encoding', coding);
        this.setHeader('Content-Length', compressed.length);
        const callback = args.find((arg) => typeof arg === 'function') as (() => void) | undefined;
        return callback ? end.call(this, compressed, callback) : end.call(this, compressed);
      }
    }
    return end.apply(this, args);
  } as Response['end'];
}

export function createCompression(): RequestHandler {
  const streamed = compression({ filter: shouldCompress }) as RequestHandler;
  return (request: Request, response: Response, next: NextFunction) => {
    void streamed(request, response, (error?: unknown) => {
      if (error) return next(error);
      compressWholeBodies(request, response);
      next();
    });
  };
}
