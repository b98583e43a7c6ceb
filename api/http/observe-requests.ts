/**
 * One log line and one metrics observation per request, when its answer is done (or its
 * client went away): request id, method, route template, status, duration, client hash.
 * The route is the template the request matched (/api/records/:id), `static` for a file,
 * `unmatched` for a 404 outside the routes: never the URL, whose query may hold a question.
 */
import { performance } from 'node:perf_hooks';
import type { RequestHandler, Response } from 'express';
import type { Logger } from '../ops/logger.ts';
import type { Metrics } from '../ops/metrics.ts';
import { clientHash } from './client-id.ts';
import { requestIdOf } from './request-id.ts';

export interface ObserveOptions {
  logger?: Logger;
  metrics?: Metrics;
  /** The salt of client hashes (the rate limits' own), read once. */
  clientSalt?: () => Promise<string>;
}

export function routeTemplate(response: Response): string {
  // Set by the route table's dispatcher (api/app.ts): Express clears request.route once a route is left.
  const route: unknown = response.locals.route;
  if (typeof route === 'string') return route;
  return response.statusCode === 404 ? 'unmatched' : 'static';
}

export function observeRequests(options: ObserveOptions): RequestHandler {
  let salt: Promise<string | undefined> | undefined;
  const readSalt = () => (salt ??= options.clientSalt ? options.clientSalt().catch(() => undefined) : Promise.resolve(undefined));
  return (request, response, next) => {
    const started = performance.now();
    response.once('close', () => {
      const seconds = (performance.now() - started) / 1000;
      const route = routeTemplate(response);
      const status = response.statusCode;
      options.metrics?.observeRequest(request.method, route, status, seconds);
      const logger = options.logger;
      if (!logger) return;
      void readSalt().then((key) => {
        logger.info(
          {
            request_id: requestIdOf(request),
            method: request.method,
            route,
            status,
            duration_ms: Math.round(seconds * 10_000) / 10,
            ...(key ? { client: clientHash(request, key) } : {}),
            ...(response.writableFinished ? {} : { aborted: true }),
          },
          'request',
        );
      });
    });
    next();
  };
}
