/**
 * Response compression (brotli or gzip, as Accept-Encoding allows) for HTML, JSON, markdown
 * and text: ADR 0008. Never for event streams (each event must reach the client when it is
 * written, not when a compression block fills), audio (already compressed), or partial
 * content (byte ranges count bytes of the file as stored).
 */
import compression from 'compression';
import type { Request, RequestHandler, Response } from 'express';

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

export function createCompression(): RequestHandler {
  return compression({ filter: shouldCompress }) as RequestHandler;
}
