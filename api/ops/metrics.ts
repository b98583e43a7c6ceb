/**
 * Prometheus metrics through prom-client (ADR 0016): one registry per app, never the
 * library's global one, so that tests and several apps in a process do not share series.
 *
 * Series (docs/OPERATIONS.md lists them with the alerts worth setting):
 *   polyphony_http_request_duration_seconds{method,route,status}  route is the template (/api/records/:id), never the URL
 *   polyphony_retrieval_stage_seconds{stage}                      embedding, search (search includes its embedding)
 *   polyphony_live_calls_total{model,outcome}, polyphony_live_call_duration_seconds{model,outcome}
 *   polyphony_spend_usd{kind}                                    settled, reserved, ceiling
 *   polyphony_jobs{state}, polyphony_jobs_oldest_queued_age_seconds, polyphony_jobs_finished_total{kind,outcome}
 *   polyphony_embedding_queue_texts                              texts waiting for an embedding worker
 *   polyphony_search_waiting_questions                           questions waiting their turn to be scored (SEARCH_CONCURRENCY)
 *   polyphony_store_errors_total{driver,kind}
 *   process_* and nodejs_* (prom-client's default collectors)
 * Labels carry no question text, client, key or id: only templates, models, states and codes.
 *
 * With WORKERS=n the primary process serves the sum of its workers (api/ops/metrics-server.ts):
 * counters and histograms add up; figures read from the shared store (spend, jobs) are the
 * same in every worker and are reported once (aggregator `max`).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Embedder } from '../../core/ports/embedder.ts';
import type { SearchIndex } from '../../core/search/search-index.ts';
import type { Store } from '../../storage/store.ts';

export type CallOutcome = 'answered' | 'truncated' | 'failed' | 'cut' | 'refused_budget';

/** What a metrics scrape reads from the store and the embedder; set once they exist. */
export interface MetricSources {
  store?: Pick<Store, 'spendStatus' | 'unfinishedJobs'>;
  /** The live panel's spending ceiling (USD), when a panel is wired. */
  spendCeilingUsd?: number;
  /** Texts waiting for an embedding worker. */
  embeddingQueue?: () => number;
  /** Questions waiting their turn to be scored. */
  searchQueue?: () => number;
  now?: () => Date;
}

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Model calls take seconds to minutes. */
const CALL_SECONDS = [0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300];

/**
 * The gauges read at scrape time: spend and unfinished jobs from the store (the same in every
 * process sharing it), and this process's embedding queue.
 */
function registerScrapeGauges(registers: Registry[], sourcesNow: () => MetricSources): void {
  new Gauge({
    name: 'polyphony_spend_usd',
    help: 'Live model spend in USD: settled (committed), reserved (calls in flight) and the ceiling; absent without a live panel.',
    labelNames: ['kind'] as const,
    aggregator: 'max',
    registers,
    async collect() {
      const { store, spendCeilingUsd } = sourcesNow();
      if (!store || spendCeilingUsd === undefined) return;
      const status = await guarded(() => store.spendStatus(now()));
      if (!status) return;
      this.set({ kind: 'settled' }, status.spent_usd);
      this.set({ kind: 'reserved' }, status.reserved_usd);
      this.set({ kind: 'ceiling' }, spendCeilingUsd);
    },
  });
  let unfinished: { queued: number; running: number; oldestQueuedSeconds: number } | undefined;
  new Gauge({
    name: 'polyphony_jobs',
    help: 'Background jobs not finished, by state (queued, running), across every process sharing the store.',
    labelNames: ['state'] as const,
    aggregator: 'max',
    registers,
    async collect() {
      unfinished = await readJobs();
      if (!unfinished) return;
      this.set({ state: 'queued' }, unfinished.queued);
      this.set({ state: 'running' }, unfinished.running);
    },
  });
  new Gauge({
    name: 'polyphony_jobs_oldest_queued_age_seconds',
    help: 'Age of the oldest queued job (0 when none is queued).',
    aggregator: 'max',
    registers,
    collect() {
      // Read by the polyphony_jobs collector of the same scrape (registered first).
      if (unfinished) this.set(unfinished.oldestQueuedSeconds);
    },
  });
  new Gauge({
    name: 'polyphony_embedding_queue_texts',
    help: 'Texts waiting for an embedding worker thread (EMBED_WORKERS).',
    registers,
    collect() {
      this.set(sourcesNow().embeddingQueue?.() ?? 0);
    },
  });
  new Gauge({
    name: 'polyphony_search_waiting_questions',
    help: 'Questions waiting their turn to be scored (SEARCH_CONCURRENCY at a time).',
    registers,
    collect() {
      this.set(sourcesNow().searchQueue?.() ?? 0);
    },
  });

  const now = () => (sourcesNow().now ?? (() => new Date()))();

  async function readJobs() {
    const store = sourcesNow().store;
    if (!store) return undefined;
    const list = await guarded(() => store.unfinishedJobs());
    if (!list) return undefined;
    const queued = list.filter((job) => job.status === 'queued');
    const oldest = Math.min(...queued.map((job) => Date.parse(job.created_at)));
    return {
      queued: queued.length,
      running: list.length - queued.length,
      oldestQueuedSeconds: queued.length > 0 ? Math.max(0, (now().getTime() - oldest) / 1000) : 0,
    };
  }

  /** A store that fails during a scrape leaves the last figures (its error is counted by the store wrapper). */
  async function guarded<T>(read: () => Promise<T>): Promise<T | undefined> {
    try {
      return await read();
    } catch {
      return undefined;
    }
  }
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}) {
  const registry = new Registry();
  const registers = [registry];
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  let sources: MetricSources = {};

  const http = new Histogram({
    name: 'polyphony_http_request_duration_seconds',
    help: 'HTTP requests by route template, method and status, with their duration.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: SECONDS,
    registers,
  });
  const stage = new Histogram({
    name: 'polyphony_retrieval_stage_seconds',
    help: 'Stages of retrieval (the fast path, Atlas search, live context): embedding the question, and the whole search (its embedding included).',
    labelNames: ['stage'] as const,
    buckets: SECONDS,
    registers,
  });
  const calls = new Counter({
    name: 'polyphony_live_calls_total',
    help: 'Live model calls by model and outcome (answered, truncated, failed, cut by the deadline or caller, refused_budget by the spending ceiling).',
    labelNames: ['model', 'outcome'] as const,
    registers,
  });
  const callSeconds = new Histogram({
    name: 'polyphony_live_call_duration_seconds',
    help: 'Duration of live model calls by model and outcome.',
    labelNames: ['model', 'outcome'] as const,
    buckets: CALL_SECONDS,
    registers,
  });
  const jobsFinished = new Counter({
    name: 'polyphony_jobs_finished_total',
    help: 'Background jobs finished in this process, by kind and outcome (done, failed, cancelled, handed_back at a drain).',
    labelNames: ['kind', 'outcome'] as const,
    registers,
  });
  const storeErrors = new Counter({
    name: 'polyphony_store_errors_total',
    help: 'Failed store operations by driver; kind unavailable is an outage (the database cannot be reached), other any other failure.',
    labelNames: ['driver', 'kind'] as const,
    registers,
  });

  registerScrapeGauges(registers, () => sources);

  return {
    registry,
    watch(next: MetricSources) {
      sources = { ...sources, ...next };
    },
    observeRequest(method: string, route: string, status: number, seconds: number) {
      http.observe({ method, route, status: String(status) }, seconds);
    },
    observeCall(model: string, outcome: CallOutcome, seconds: number) {
      calls.inc({ model, outcome });
      callSeconds.observe({ model, outcome }, seconds);
    },
    jobFinished(kind: string, outcome: 'done' | 'failed' | 'cancelled' | 'handed_back') {
      jobsFinished.inc({ kind, outcome });
    },
    storeError(driver: string, kind: 'unavailable' | 'other') {
      storeErrors.inc({ driver, kind });
    },
    /** The embedder with each call timed as the `embedding` stage. */
    timedEmbedder(embedder: Embedder): Embedder {
      return {
        id: embedder.id,
        dims: embedder.dims,
        async embed(texts) {
          const end = stage.startTimer({ stage: 'embedding' });
          try {
            return await embedder.embed(texts);
          } finally {
            end();
          }
        },
      };
    },
    /** Times each search of the index as the `search` stage (in place: the corpus keeps its index). */
    timeSearch(index: SearchIndex): void {
      const search = index.search.bind(index);
      index.search = async (query, options) => {
        const end = stage.startTimer({ stage: 'search' });
        try {
          return await search(query, options);
        } finally {
          end();
        }
      };
    },
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
