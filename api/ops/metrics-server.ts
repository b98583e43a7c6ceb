/**
 * GET /metrics on its own listener (METRICS_PORT, bound to METRICS_HOST, loopback unless
 * set): off unless configured, and never on the public port, so a deployment does not
 * publish its figures by accident. Prometheus (or an agent beside it) scrapes this port.
 *
 * One process: its own registry. WORKERS=n: the primary serves the sum of every worker's
 * registry, asked over the cluster channel at each scrape and summed by prom-client's
 * AggregatorRegistry.aggregate; a worker answers with its own figures (`answerClusterScrapes`).
 */
import cluster, { type Worker } from 'node:cluster';
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

/** How long the primary waits for a worker's figures; a worker that is starting (loading its model) or stopping may not answer. */
const WORKER_ANSWER_MS = 2000;
const REQUEST = 'polyphony:metrics-request';
const ANSWER = 'polyphony:metrics-answer';

/**
 * The primary's scrape with WORKERS=n: the figures of every listening worker, summed with
 * prom-client's cluster aggregation (api/ops/metrics.ts says which are taken once). Unlike
 * AggregatorRegistry.clusterMetrics, which fails the whole scrape when one worker is silent,
 * a worker still loading its model (a replacement) or gone is left out of this scrape.
 */
export function clusterScrape(log: (line: string) => void): Scrape {
  const listening = new Set<number>();
  cluster.on('listening', (worker) => listening.add(worker.id));
  cluster.on('exit', (worker) => listening.delete(worker.id));
  let next = 0;
  const waiting = new Map<number, (metrics: object[]) => void>();
  cluster.on('message', (_worker, message: { type?: string; id?: number; metrics?: object[] }) => {
    if (message?.type === ANSWER && message.id !== undefined) waiting.get(message.id)?.(message.metrics ?? []);
  });
  const ask = (worker: Worker) =>
    new Promise<object[] | undefined>((resolve) => {
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        resolve(undefined);
      }, WORKER_ANSWER_MS);
      waiting.set(id, (metrics) => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve(metrics);
      });
      worker.send({ type: REQUEST, id }, (error: Error | null) => {
        if (error) waiting.get(id)?.([]);
      });
    });
  return async () => {
    const workers = [...listening].map((id) => cluster.workers?.[id]).filter((worker): worker is Worker => worker !== undefined && worker.isConnected());
    const answers = await Promise.all(workers.map(ask));
    const silent = answers.filter((answer) => answer === undefined).length;
    if (silent > 0) log(`metrics: ${silent} of ${workers.length} workers did not answer within ${WORKER_ANSWER_MS} ms; left out of this scrape`);
    // One getMetricsAsJSON() list per worker, as aggregate() takes them.
    const registry = AggregatorRegistry.aggregate(answers.filter((answer): answer is object[] => answer !== undefined));
    return { contentType: registry.contentType, body: await registry.metrics() };
  };
}

/** In a cluster worker: answers the primary's scrapes with this registry's figures. */
export function answerClusterScrapes(registry: Registry): void {
  process.on('message', (message: { type?: string; id?: number }) => {
    if (message?.type !== REQUEST) return;
    void registry.getMetricsAsJSON().then(
      (metrics) => process.send?.({ type: ANSWER, id: message.id, metrics }),
      () => process.send?.({ type: ANSWER, id: message.id, metrics: [] }),
    );
  });
}
