/**
 * GET /metrics on its own listener (METRICS_PORT, bound to METRICS_HOST, loopback unless
 * set): off unless configured, and never on the public port, so a deployment does not
 * publish its figures by accident. Prometheus (or an agent beside it) scrapes this port.
 *
 * One process: its own registry. WORKERS=n: the primary serves the sum of every worker's
 * registry (prom-client's AggregatorRegistry asks each worker over the cluster channel); a
 * worker answers with its own figures when asked (`answerClusterScrapes`).
 */
import http from 'node:http';
import { AggregatorRegistry, type Registry } from 'prom-client';

export interface MetricsServerOptions {
  host: string;
  port: number;
}

type Scrape = () => Promise<{ contentType: string; body: string }>;

function envelope(code: string, message: string, action: string, retryable = false): string {
  return JSON.stringify({ error: { code, message, agent_action: action, retryable, suggested_next_call: { method: 'GET', path: '/metrics' } } });
}

export function serveMetrics(scrape: Scrape, options: MetricsServerOptions, log: (line: string) => void): Promise<http.Server> {
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      response.writeHead(404, { 'Content-Type': 'application/json; charset=utf-8' });
      response.end(envelope('ROUTE_NOT_FOUND', `nothing is served at ${request.method} ${path} on the metrics port`, 'Scrape GET /metrics.'));
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { 'Content-Type': 'application/json; charset=utf-8', Allow: 'GET, HEAD' });
      response.end(envelope('METHOD_NOT_ALLOWED', `${request.method} is not allowed on /metrics`, 'Use GET on /metrics.'));
      return;
    }
    scrape().then(
      ({ contentType, body }) => {
        response.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
        response.end(request.method === 'HEAD' ? undefined : body);
      },
      (error: unknown) => {
        log(`metrics scrape failed: ${(error as Error).message}`);
        response.writeHead(503, { 'Content-Type': 'application/json; charset=utf-8', 'Retry-After': '5' });
        response.end(envelope('NOT_READY', `the figures could not be gathered: ${(error as Error).message}`, 'Scrape again at the next interval.', true));
      },
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve(server));
  });
}

/** A single process's scrape: its registry. */
export function registryScrape(registry: Registry): Scrape {
  return async () => ({ contentType: registry.contentType, body: await registry.metrics() });
}

/** The primary's scrape with WORKERS=n: every worker's figures, summed (api/ops/metrics.ts says which are taken once). */
export function clusterScrape(): Scrape {
  const aggregator = new AggregatorRegistry();
  return async () => ({ contentType: aggregator.contentType, body: await aggregator.clusterMetrics() });
}

/** In a cluster worker: answers the primary's scrapes with this registry's figures. */
export function answerClusterScrapes(registry: Registry): void {
  AggregatorRegistry.setRegistries([registry]);
  // The worker's side of the channel is installed when an AggregatorRegistry is made.
  new AggregatorRegistry();
}
