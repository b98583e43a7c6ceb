/**
 * Audio files under /audio/ answer byte ranges (206 with Content-Range, 416 when no byte
 * of the range exists), so that a player can seek and iOS Safari, which asks for ranges
 * before it plays, can play at all. Every other file and every API answer ignores Range.
 */
import express, { type RequestHandler, type Response } from 'express';
import { apiError } from '../../schemas/errors.ts';

/** A stream file beside the transcripts: /audio/<file>, not a transcript or the manifest. */
export function isMediaPath(requestPath: string): boolean {
  return /^\/audio\/[^/]+$/.test(requestPath) && !requestPath.endsWith('.txt') && requestPath !== '/audio/manifest.json';
}

export function mediaFiles(publicDir: string, setHeaders: (response: Response, file: string) => void): RequestHandler {
  // fallthrough: false so that a 416 reaches us instead of becoming a silent next().
  const serve = express.static(publicDir, { extensions: false, redirect: false, index: false, acceptRanges: true, fallthrough: false, setHeaders });
  return (request, response, next) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || !isMediaPath(request.path)) {
      next();
      return;
    }
    serve(request, response, (error?: unknown) => {
      const status = (error as { status?: number } | undefined)?.status;
      if (status === 416) {
        const contentRange = String(response.getHeader('Content-Range') ?? 'bytes */0');
        next(
          apiError(
            'RANGE_NOT_SATISFIABLE',
            `the range ${JSON.stringify(request.get('range') ?? '')} lies outside the file (${contentRange.replace('bytes */', '')} bytes)`,
            'Ask for a range inside the file (Content-Range gives its size), or GET the whole file without Range.',
            {
              headers: { 'Content-Range': contentRange },
              suggestedNextCall: { method: 'GET', path: request.path },
              details: { content_range: contentRange },
            },
          ),
        );
        return;
      }
      // Missing files and refused paths take the ordinary route (404 in the envelope).
      if (status !== undefined && status < 500) next();
      else next(error);
    });
  };
}
