/**
 * Operating the API in-process: X-Request-Id, one JSON log line per request (no question
 * text), the 500 error_id as the request id, readiness, and the Prometheus series after a
 * short load, parsed by a Prometheus text-format parser. The drain and WORKERS=n are
 * tested with real processes (test/drain.test.ts).
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { createLiveService } from '../api/live/service.ts';
import { createLogger } from '../api/ops/logger.ts';
import { createMetrics, type Metrics } from '../api/ops/metrics.ts';
import { createReadiness } from '../api/ops/readiness.ts';
import { countStoreErrors } from '../api/ops/instrument-store.ts';
import { createPanel } from '../providers/chat.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import { StoreUnavailableError, type Store } from '../storage/store.ts';
import { buildApp, type BuiltApp } from '../devkit/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { scriptDefaults, testPanelConfig } from '../devkit/live.ts';
import { createContractChecker } from './helpers/contract.ts';

type Line = Record<string, unknown>;

function memoryLogger() {
  const lines: Line[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (text: string) => void lines.push(JSON.parse(text) as Line) } });
  return { logger, lines };
}

/** Waits for the log line a request's `close` writes after the response reached the client. */
async function lineFor(lines: Line[], requestId: string, message = 'request'): Promise<Line> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const line = lines.find((entry) => entry.request_id === requestId && entry.msg === message);
    if (line) return line;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`no ${message} line for ${requestId}: ${JSON.stringify(lines.slice(-5))}`);
}

let built: BuiltApp;
let fake: FakeOpenAI;

beforeAll(async () => {
  [built, fake] = await Promise.all([buildApp(writeFixtureContent()), startFakeOpenAI()]);
  scriptDefaults(fake);
});
afterAll(async () => {
  await fake?.close();
});

describe('X-Request-Id', () => {
  it('is generated when absent, taken when well-formed, replaced when not, and exposed to browsers', async () => {
    const app = createApp({ corpus: built.corpus, log: () => {} });
    const generated = await request(app).get('/api/health');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(generated.headers['access-control-expose-headers']).toContain('X-Request-Id');

    const given = await request(app).get('/api/health').set('X-Request-Id', 'lb-7f3a9c21:0001');
    expect(given.headers['x-request-id']).toBe('lb-7f3a9c21:0001');

    for (const bad of ['short', 'has space in it', 'x'.repeat(129), 'quote"injected"here']) {
      const replaced = await request(app).get('/api/health').set('X-Request-Id', bad);
      expect(replaced.status).toBe(200);
      expect(replaced.headers['x-request-id']).not.toBe(bad);
      expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
    const preflight = await request(app).options('/api/query').set('Origin', 'https://site.example');
    expect(preflight.headers['access-control-allow-headers']).toContain('X-Request-Id');
  });
});

describe('JSON logs', () => {
  it('write one line per request with the id, route template, status, duration and client hash, never the question', async () => {
    const { logger, lines } = memoryLogger();
    const app = createApp({ corpus: built.corpus, logger });
    const question = 'What does the secret harbour question reveal?';
    const response = await request(app)
      .get(`/api/query?q=${encodeURIComponent(question)}`)
      .set('X-Request-Id', 'req-query-000001');
    expect(response.status).toBe(200);
    const line = await lineFor(lines, 'req-query-000001');
    expect(line).toMatchObject({ level: 'info', method: 'GET', route: '/api/query', status: 200, pid: process.pid });
    expect(typeof line.duration_ms).toBe('number');
    expect(line.client).toMatch(/^[0-9a-f]{24}$/);
    expect(typeof line.time).toBe('string');
    expect(JSON.stringify(lines)).not.toContain('secret harbour');

    const record = built.corpus.divergences[0]!.id;
    const byId = await request(app).get(`/api/divergences?id=${record}`).set('X-Request-Id', 'req-record-00001');
    expect(byId.status).toBe(200);
    expect((await lineFor(lines, 'req-record-00001')).route).toBe('/api/divergences');
    const twin = await request(app).get(`/records/${record}.json`).set('X-Request-Id', 'req-twin-0000001');
    expect(twin.status).toBe(200);
    expect((await lineFor(lines, 'req-twin-0000001')).route).toBe('static');
    await request(app).get('/no/such/page').set('X-Request-Id', 'req-missing-0001');
    expect(await lineFor(lines, 'req-missing-0001')).toMatchObject({ route: 'unmatched', status: 404 });
    expect(JSON.stringify(lines)).not.toContain(record);
  });

  it('give a 500 the request id as its error_id, logged at error level with the same id', async () => {
    const { logger, lines } = memoryLogger();
    const store = createSqliteStore(':memory:');
    const broken = new Proxy(store, {
      get: (target, property, receiver) =>
        property === 'hit' ? () => Promise.reject(new TypeError('limits table is gone')) : (Reflect.get(target, property, receiver) as unknown),
    }) as Store;
    const app = createApp({ corpus: built.corpus, store: broken, logger });
    const response = await request(app).post('/api/play').set('X-Request-Id', 'req-failing-0001').send({ slug: 'harbour-talk' });
    expect(response.status).toBe(500);
    expect(response.body.error).toMatchObject({ code: 'INTERNAL_ERROR', details: { error_id: 'req-failing-0001' } });
    const failure = lines.find((line) => line.level === 'error');
    expect(failure?.msg).toContain('error_id=req-failing-0001');
    expect(failure?.request_id).toBe('req-failing-0001');
    expect((await lineFor(lines, 'req-failing-0001')).status).toBe(500);
  });

  it('carry the submitting request id into the job record, its log lines and its provider calls', async () => {
    const { logger, lines } = memoryLogger();
    const store = createSqliteStore(':memory:');
    const { panel } = createPanel(testPanelConfig(fake), {});
    const finished: string[] = [];
    const live = createLiveService({
      corpus: built.corpus,
      panel: panel!,
      store,
      log: (line) => logger.info(line),
      onCall: (call) => logger.info({ event: 'provider_call', ...call }, 'model call'),
      onJobFinished: (kind, outcome) => finished.push(`${kind}:${outcome}`),
    });
    const app = createApp({ corpus: built.corpus, store, live, logger });
    const submitted = await request(app).get('/api/query?q=Why%20do%20harbours%20argue%3F&async=1').set('X-Request-Id', 'req-job-00000001');
    expect(submitted.status).toBe(202);
    await live.runner.idle();
    const job = await store.getJob(submitted.body.job_id as string);
    expect(job?.status).toBe('done');
    expect((job?.input as { request_id?: string }).request_id).toBe('req-job-00000001');
    const calls = lines.filter((line) => line.event === 'provider_call');
    expect(calls.length).toBeGreaterThanOrEqual(3);
    for (const call of calls) expect(call).toMatchObject({ request_id: 'req-job-00000001', job_id: job!.id, outcome: 'answered' });
    expect(finished).toEqual(['deliberation:done']);
    // The poll is its own request, with its own id; the job's answer does not echo the input.
    const polled = await request(app).get(submitted.body.poll_url as string);
    expect(JSON.stringify(polled.body)).not.toContain('request_id');
  });
});

describe('GET /api/ready', () => {
  it('is not ready until the embedder warmed up, then ready; not ready while the store fails or after a drain, with the reason', async () => {
    const store = createSqliteStore(':memory:');
    let storeDown = false;
    const flaky = new Proxy(store, {
      get: (target, property, receiver) =>
        property === 'spendStatus' && storeDown
          ? () => Promise.reject(new StoreUnavailableError(new Error('connection refused')))
          : (Reflect.get(target, property, receiver) as unknown),
    }) as Store;
    const readiness = createReadiness({ store: flaky, pending: { embedder: 'the question embedder is warming up' } });
    const app = createApp({ corpus: built.corpus, store: flaky, readiness, log: () => {} });

    const contract = await createContractChecker(app);
    const warming = await request(app).get('/api/ready');
    expect(warming.status).toBe(503);
    contract.check('GET', '/api/ready', warming);
    expect(warming.headers['cache-control']).toBe('no-store');
    expect(warming.body.error).toMatchObject({
      code: 'NOT_READY',
      retryable: true,
      details: { reason: 'embedder: the question embedder is warming up', checks: { artifacts: { ok: true }, store: { ok: true }, embedder: { ok: false } } },
    });
    expect(warming.body.error.agent_action).toMatch(/probe/);
    expect((await request(app).get('/api/health')).status).toBe(200);

    readiness.mark('embedder');
    const ready = await request(app).get('/api/ready');
    expect(ready.status).toBe(200);
    contract.check('GET', '/api/ready', ready);
    expect(ready.body).toEqual({
      ready: true,
      checks: { draining: { ok: true }, artifacts: { ok: true }, store: { ok: true }, embedder: { ok: true }, panel: { ok: true } },
      // A bare embedder (no deadline wrapper, as in these tests) reports no deadline and no question yet.
      embedder: { id: built.corpus.search.embedder.id, deadline_ms: null, last_question: null },
    });

    storeDown = true;
    const down = await request(app).get('/api/ready');
    expect(down.status).toBe(503);
    expect(down.body.error.details.reason).toMatch(/^store: the store does not answer: the store is unavailable: connection refused/);
    storeDown = false;
    expect((await request(app).get('/api/ready')).status).toBe(200);

    readiness.mark('panel', 'live panel not wired: no key for chair');
    expect((await request(app).get('/api/ready')).body.error.details.reason).toBe('panel: live panel not wired: no key for chair');
    readiness.mark('panel');
    readiness.drain();
    expect((await request(app).get('/api/ready')).body.error.details.reason).toBe('draining: the process is draining after SIGTERM');

    const unknown = await request(app).get('/api/ready?verbose=1');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('UNKNOWN_PARAMETER');
  });
});

describe('Prometheus metrics', () => {
  async function scrape(metrics: Metrics) {
    const text = await metrics.registry.metrics();
    return { text, families: new Map(parsePrometheusTextFormat(text).map((family) => [family.name, family])) };
  }

  it('count requests by route template, time the retrieval stages, live calls, jobs, spend, store errors and the process', async () => {
    const metrics = createMetrics();
    const base = createSqliteStore(':memory:');
    let failing = false;
    const store = countStoreErrors(
      new Proxy(base, {
        get: (target, property, receiver) =>
          property === 'hit' && failing
            ? () => Promise.reject(new StoreUnavailableError(new Error('connection refused')))
            : (Reflect.get(target, property, receiver) as unknown),
      }) as Store,
      'sqlite',
      metrics.storeError,
    );
    metrics.timeSearch(built.corpus.search);
    const { panel } = createPanel(testPanelConfig(fake, { spending_ceiling_usd: 5 }), {});
    const live = createLiveService({
      corpus: built.corpus,
      panel: panel!,
      store,
      onCall: (call) => metrics.observeCall(call.model, call.outcome, call.latency_ms / 1000),
      onJobFinished: (kind, outcome) => metrics.jobFinished(kind, outcome),
    });
    metrics.watch({ store, spendCeilingUsd: 5, embeddingQueue: () => 0, searchQueue: () => built.corpus.search.waiting });
    const app = createApp({ corpus: built.corpus, store, live, metrics, log: () => {} });

    const question = 'Which harbour secret should stay out of the metrics?';
    for (let index = 0; index < 5; index++) expect((await request(app).get(`/api/query?q=${encodeURIComponent(question)}%20${index}`)).status).toBe(200);
    await request(app).get('/api/health');
    await request(app).get('/nowhere');
    const job = await request(app).get('/api/query?q=Slow%20harbours%3F&async=1');
    expect(job.status).toBe(202);
    await live.runner.idle();
    failing = true;
    expect((await request(app).post('/api/play').send({ slug: 'harbour-talk' })).status).toBe(503);
    failing = false;

    const { text, families } = await scrape(metrics);
    // The text parser checks the format and the types; it folds a histogram's labelled series
    // together, so their counts are read from the registry's own JSON.
    expect(families.get('polyphony_http_request_duration_seconds')?.type).toBe('HISTOGRAM');
    expect(families.get('polyphony_retrieval_stage_seconds')?.type).toBe('HISTOGRAM');
    const json = await metrics.registry.getMetricsAsJSON();
    const counts = (name: string) =>
      json
        .find((metric) => metric.name === name)!
        .values.map((sample) => sample as typeof sample & { metricName?: string })
        .filter((sample) => sample.metricName === `${name}_count`)
        .map((sample): Record<string, unknown> => ({ ...sample.labels, count: sample.value }));
    const http = counts('polyphony_http_request_duration_seconds');
    expect(http).toContainEqual({ method: 'GET', route: '/api/query', status: '200', count: 5 });
    expect(http).toContainEqual({ method: 'GET', route: '/api/query', status: '202', count: 1 });
    expect(http).toContainEqual({ method: 'GET', route: 'unmatched', status: '404', count: 1 });
    expect(http).toContainEqual({ method: 'POST', route: '/api/play', status: '503', count: 1 });
    expect(text).toMatch(/^polyphony_http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/api\/health",status="200"\} \d+$/m);
    const search = counts('polyphony_retrieval_stage_seconds').find((sample) => sample.stage === 'search');
    expect(search?.count as number).toBeGreaterThanOrEqual(5);

    const calls = families.get('polyphony_live_calls_total')!;
    expect(
      calls.metrics.filter((sample) => sample.labels?.outcome === 'answered').reduce((sum, sample) => sum + Number(sample.value), 0),
    ).toBeGreaterThanOrEqual(3);
    expect(families.get('polyphony_live_call_duration_seconds')?.type).toBe('HISTOGRAM');
    expect(families.get('polyphony_jobs_finished_total')?.metrics).toContainEqual({ labels: { kind: 'deliberation', outcome: 'done' }, value: '1' });
    expect(families.get('polyphony_jobs')?.metrics).toContainEqual({ labels: { state: 'queued' }, value: '0' });
    expect(families.get('polyphony_jobs_oldest_queued_age_seconds')?.metrics[0]?.value).toBe('0');
    const spend = new Map(families.get('polyphony_spend_usd')!.metrics.map((sample) => [sample.labels?.kind, Number(sample.value)]));
    expect(spend.get('ceiling')).toBe(5);
    expect(spend.get('reserved')).toBe(0);
    expect(spend.get('settled')).toBeGreaterThan(0);
    expect(families.get('polyphony_embedding_queue_texts')?.metrics[0]?.value).toBe('0');
    expect(families.get('polyphony_search_waiting_questions')?.metrics[0]?.value).toBe('0');
    expect(families.get('polyphony_store_errors_total')?.metrics).toContainEqual({ labels: { driver: 'sqlite', kind: 'unavailable' }, value: '1' });
    expect(families.get('process_cpu_user_seconds_total')?.type).toBe('COUNTER');
    expect(families.get('nodejs_eventloop_lag_seconds')).toBeDefined();

    // Nothing a client sent: no question, no client hash or address, no job id.
    expect(text).not.toContain('harbour');
    expect(text).not.toContain(job.body.job_id as string);
    expect(text).not.toMatch(/127\.0\.0\.1|::ffff/);
  });

  it('count a call the spending ceiling refused as refused_budget', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const store = createSqliteStore(':memory:');
    const { panel } = createPanel(testPanelConfig(fake, { spending_ceiling_usd: 0.000001 }), {});
    const live = createLiveService({
      corpus: built.corpus,
      panel: panel!,
      store,
      onCall: (call) => metrics.observeCall(call.model, call.outcome, call.latency_ms / 1000),
    });
    const app = createApp({ corpus: built.corpus, store, live, log: () => {} });
    const response = await request(app).get('/api/query?q=Too%20dear%3F&sync=1');
    expect(response.status).toBe(503);
    const families = parsePrometheusTextFormat(await metrics.registry.metrics());
    const refused = families
      .find((family) => family.name === 'polyphony_live_calls_total')!
      .metrics.filter((sample) => sample.labels?.outcome === 'refused_budget');
    expect(refused.length).toBeGreaterThan(0);
  });
});
