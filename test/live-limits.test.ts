/**
 * Limits of the live paths (issue #14) against the local fake provider: one deadline per
 * call across its retries, a deadline per run, the hard spending ceiling by reservation,
 * the cost of every call, truncated answers, and cancellation by the caller.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createJobRunner } from '../api/jobs/runner.ts';
import { loadCorpus } from '../api/load-artifacts.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import { StoreUnavailableError, type Store } from '../storage/store.ts';
import { buildApp, testEmbedder, type BuiltApp } from '../devkit/app.ts';
import { startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from '../devkit/fake-openai.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { createLiveApp, DEFAULT_SYNTHESIS, INGEST_SECRET, PANEL, scriptDefaults, testPanelConfig } from '../devkit/live.ts';

let fake: FakeOpenAI;
let built: BuiltApp;
const servers: Server[] = [];

beforeAll(async () => {
  fake = await startFakeOpenAI();
  built = await buildApp(writeFixtureContent());
});
afterAll(async () => {
  for (const server of servers) server.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  scriptDefaults(fake);
});

type Overrides = Parameters<typeof testPanelConfig>[1];

async function liveApp(overrides: Overrides = {}) {
  const store = createSqliteStore(':memory:');
  const corpus = await loadCorpus(built.artifactsDir, await testEmbedder());
  const roomy = { limit: 1000, windowMs: 3_600_000 };
  const limits = { live: roomy, liveGlobal: roomy, council: roomy, councilGlobal: roomy };
  return { ...createLiveApp(corpus, store, testPanelConfig(fake, overrides), undefined, limits), store };
}

/** Waits (bounded) until `condition` holds; returns whether it did. Not a timing assertion. */
async function eventually(condition: () => boolean | Promise<boolean>, limitMs = 10_000): Promise<boolean> {
  for (let waited = 0; waited < limitMs; waited += 20) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return condition();
}

const PRICE = { input_per_mtok: 1, output_per_mtok: 2 };
const billed = (requests: readonly RecordedRequest[]) =>
  requests.reduce(
    (sum, entry) => sum + (entry.usage ? (entry.usage.prompt_tokens * PRICE.input_per_mtok + entry.usage.completion_tokens * PRICE.output_per_mtok) / 1e6 : 0),
    0,
  );
const panelIds = PANEL.map((name) => `${name.toLowerCase()}-live`);

describe('deadlines', () => {
  it('one deadline per call across its retries: a hang after a 429 is not retried', async () => {
    fake.script('alder-live', [{ kind: 'status', status: 429, retryAfterMs: 1 }, { kind: 'hang' }, { kind: 'answer', content: 'too late' }]);
    const { app } = await liveApp({ defaults: { timeout_ms: 400, max_retries: 2, max_tokens: 400 } });
    const response = await request(app).get('/api/council?q=Hanging%3F');
    expect(response.status).toBe(200);
    expect(response.body.failed_voices).toEqual([expect.objectContaining({ model: 'Alder', failure: 'timeout' })]);
    // The SDK's own retries restarted the timeout and retried the hang: a third request.
    expect(fake.counts('alder-live')).toBe(2);
    expect(await eventually(() => fake.requestsFor('alder-live')[1]!.abortedByClient)).toBe(true);
  });

  it('retries 500 and dropped connections within the deadline, then answers', async () => {
    fake.script('alder-live', [{ kind: 'status', status: 500, retryAfterMs: 1 }, { kind: 'reset' }, { kind: 'answer', content: 'third time' }]);
    const { app } = await liveApp({ defaults: { timeout_ms: 5000, max_retries: 2, max_tokens: 400 } });
    const response = await request(app).get('/api/council?q=Flaky%3F');
    expect(response.body.panel[0]).toMatchObject({ status: 'answered', text: 'third time' });
    expect(fake.counts('alder-live')).toBe(3);
  });

  it('does not wait for a Retry-After that ends past the deadline', async () => {
    fake.script('alder-live', [{ kind: 'status', status: 429, retryAfter: 30 }]);
    const { app } = await liveApp({ defaults: { timeout_ms: 1000, max_retries: 2, max_tokens: 400 } });
    const response = await request(app).get('/api/council?q=Wait%3F');
    expect(response.body.failed_voices).toEqual([expect.objectContaining({ model: 'Alder', failure: 'rate_limited' })]);
    expect(fake.counts('alder-live')).toBe(1);
  });

  it('a deliberation answers at its own deadline with the voices it has and names the rest', async () => {
    fake.setDefault('cedar-live', { kind: 'hang' });
    const { app } = await liveApp({ defaults: { timeout_ms: 60_000, max_retries: 2, max_tokens: 400, deliberation_deadline_ms: 300 } });
    const response = await request(app).get('/api/query?q=Who%20is%20slow%3F&sync=1');
    expect(response.status).toBe(200);
    expect(response.body.panel.filter((voice: { status: string }) => voice.status === 'answered').map((voice: { name: string }) => voice.name)).toEqual([
      'Alder',
      'Birch',
    ]);
    expect(response.body.failed_voices).toEqual([
      expect.objectContaining({ name: 'Cedar', failure: 'deadline', message: expect.stringMatching(/deadline of 300 ms/) }),
    ]);
    expect(fake.counts('cedar-live')).toBe(1);
    expect(await eventually(() => fake.requestsFor('cedar-live')[0]!.abortedByClient)).toBe(true);
  });
});

describe('spending ceiling by reservation', () => {
  // Every call bills its whole max_tokens: real money runs out quickly.
  function expensiveDefaults() {
    for (const model of panelIds) fake.setDefault(model, { kind: 'answer', content: `${model} answers`, usage: { prompt_tokens: 10, completion_tokens: 400 } });
    for (const chair of ['chair-live', 'backup-live'])
      fake.setDefault(chair, { kind: 'json', value: DEFAULT_SYNTHESIS, usage: { prompt_tokens: 500, completion_tokens: 400 } });
  }

  it('ten concurrent async councils under a $0.02 ceiling spend at most the ceiling', async () => {
    expensiveDefaults();
    const ceiling = 0.02;
    const { app, live, store } = await liveApp({ spending_ceiling_usd: ceiling });
    const jobs = await Promise.all(
      Array.from({ length: 10 }, (_, n) => request(app).get(`/api/council?q=${encodeURIComponent(`Costly question ${n}?`)}&async=1`)),
    );
    expect(jobs.map((job) => job.status)).toEqual(Array(10).fill(202));
    await live.runner.idle();
    const states = await Promise.all(jobs.map(async (job) => (await request(app).get(job.body.poll_url)).body));
    const status = await store.spendStatus(new Date());
    // Without reservations the queued jobs never checked again: about $0.035 was spent.
    expect(status.spent_usd).toBeLessThanOrEqual(ceiling);
    expect(status.reserved_usd).toBe(0);
    expect(status.spent_usd).toBeCloseTo(billed(fake.requests), 12);
    expect(states.some((state) => state.status === 'failed' && state.error.code === 'SPENDING_CEILING_REACHED')).toBe(true);
    expect(states.some((state) => state.status === 'done')).toBe(true);
    const refusedVoices = states.flatMap((state) => state.panel ?? []).filter((voice: { failure?: string }) => voice.failure === 'spending_ceiling');
    for (const voice of refusedVoices) expect(voice.message).toMatch(/would cross the spending ceiling/);
  });

  it('a call is refused before it is made when its worst case would cross; the others still answer', async () => {
    expensiveDefaults();
    // Room for about two panel calls at their worst case, not three.
    const { app, store } = await liveApp({ spending_ceiling_usd: 0.0018 });
    const response = await request(app).get('/api/council?q=Two%20fit%3F');
    expect(response.status).toBe(200);
    expect(response.body.n_models).toBe(2);
    expect(response.body.failed_voices).toEqual([expect.objectContaining({ failure: 'spending_ceiling' })]);
    expect(fake.requests.filter((entry) => panelIds.includes(entry.model!))).toHaveLength(2);
    expect((await store.spendStatus(new Date())).spent_usd).toBeLessThanOrEqual(0.0018);
  });

  it('a store that cannot reserve fails the run with 503 STORE_UNAVAILABLE, and no model is called', async () => {
    const { app, store } = await liveApp();
    store.reserveSpend = () => Promise.reject(new StoreUnavailableError(new Error('connection refused')));
    const response = await request(app).get('/api/council?q=Store%20down%3F');
    expect(response.status).toBe(503);
    expect(response.body.error.code).toBe('STORE_UNAVAILABLE');
    expect(fake.requests).toHaveLength(0);
  });

  it('a reservation left by a dead process stops counting once it expires', async () => {
    const store: Store = createSqliteStore(':memory:');
    const at = new Date('2026-01-01T00:00:00Z');
    expect(await store.reserveSpend({ id: 'crashed', purpose: 'council', model: 'm', amount_usd: 0.9, expires_at: new Date(at.getTime() + 1000) }, 1, at)).toBe(
      true,
    );
    expect(await store.reserveSpend({ id: 'next', purpose: 'council', model: 'm', amount_usd: 0.2, expires_at: new Date(at.getTime() + 5000) }, 1, at)).toBe(
      false,
    );
    const later = new Date(at.getTime() + 1000);
    expect(
      await store.reserveSpend({ id: 'next', purpose: 'council', model: 'm', amount_usd: 0.2, expires_at: new Date(later.getTime() + 5000) }, 1, later),
    ).toBe(true);
    expect(await store.spendStatus(later)).toEqual({ spent_usd: 0, reserved_usd: 0.2 });
  });
});

describe('honest cost', () => {
  it('a council costs every call it made, chair and its retry included: usage × prices', async () => {
    fake.script('chair-live', [{ kind: 'malformed-content' }]);
    for (const model of panelIds) fake.setDefault(model, { kind: 'answer', content: `${model} says`, usage: { prompt_tokens: 12, completion_tokens: 300 } });
    fake.script('birch-live', [{ kind: 'answer', content: 'cut', finishReason: 'length', usage: { prompt_tokens: 12, completion_tokens: 400 } }]);
    const { app, store } = await liveApp();
    const response = await request(app).get('/api/council?q=What%20does%20it%20cost%3F');
    const expected = billed(fake.requests);
    expect(fake.counts('chair-live')).toBe(2);
    expect(fake.counts('birch-live')).toBe(2);
    // The chair's two calls are most of it; they used to be left out.
    expect(response.body.cost_usd).toBeCloseTo(expected, 12);
    expect(response.body.cost).toMatchObject({ total_usd: response.body.cost_usd, calls: 6 });
    expect(response.body.cost.chair_usd).toBeCloseTo(billed(fake.requestsFor('chair-live')), 12);
    expect(response.body.cost.panel_usd + response.body.cost.chair_usd).toBeCloseTo(expected, 12);
    expect(await store.totalSpendUsd()).toBeCloseTo(expected, 12);
  });

  it('a deliberation and a trace report the same sum', async () => {
    const { app } = await liveApp();
    const deliberation = await request(app).get('/api/query?q=Cost%20of%20a%20deliberation%3F&sync=1');
    expect(deliberation.body.cost_usd).toBeCloseTo(billed(fake.requests), 12);
    expect(deliberation.body.trace.usage.cost_usd).toBe(deliberation.body.cost_usd);
    expect(deliberation.body.cost.chair_usd).toBeGreaterThan(0);
    fake.reset();
    scriptDefaults(fake);
    const trace = await request(app).get('/api/trace?q=Cost%20of%20a%20trace%3F');
    expect(trace.body.cost).toMatchObject({ calls: 3, chair_usd: trace.body.cost_usd });
    expect(trace.body.cost_usd).toBeCloseTo(billed(fake.requests), 12);
  });
});

describe('truncated answers', () => {
  it('are retried once with twice the room, then marked, and never stored as complete', async () => {
    fake.script('alder-live', [
      { kind: 'answer', content: 'Alder begins and is cut', finishReason: 'length' },
      { kind: 'answer', content: 'Alder begins again and is cut again', finishReason: 'length' },
    ]);
    fake.script('birch-live', [
      { kind: 'answer', content: 'Birch cut', finishReason: 'length' },
      { kind: 'answer', content: 'Birch whole answer' },
    ]);
    // A reasoning model that spent its whole budget thinking: no text, finish_reason length.
    fake.script('cedar-live', [
      { kind: 'answer', content: '', finishReason: 'length' },
      { kind: 'answer', content: '', finishReason: 'length' },
    ]);
    const { app } = await liveApp();
    const response = await request(app).post('/api/council').set('Authorization', `Bearer ${INGEST_SECRET}`).send({ q: 'Cut short?', persist: true });
    expect(response.status).toBe(201);
    const [alder, birch, cedar] = response.body.panel;
    expect(alder).toMatchObject({ status: 'answered', text: 'Alder begins again and is cut again', truncated: true });
    expect(birch).toMatchObject({ status: 'answered', text: 'Birch whole answer', truncated: false });
    expect(cedar).toMatchObject({ status: 'failed', failure: 'truncated' });
    expect(fake.requestsFor('alder-live').map((entry) => (entry.body as { max_tokens: number }).max_tokens)).toEqual([400, 800]);
    // The chair is told which answer is incomplete.
    const chairPrompt = JSON.stringify(fake.requestsFor('chair-live')[0]!.messages);
    expect(chairPrompt).toContain('[Alder | panel answer, cut off at its token limit (incomplete)]');
    expect(chairPrompt).toContain('[Birch | panel answer]');
    // Persisted marked: the record says the answer was cut off.
    const record = await request(app).get(response.body.persisted.href);
    expect(record.body.answers).toEqual([
      expect.objectContaining({ model: 'Alder', text: 'Alder begins again and is cut again', truncated: true }),
      expect.not.objectContaining({ truncated: expect.anything() }),
    ]);
    expect(response.body.persisted.markdown).toContain('truncated: true');
  });

  it('with retry_truncated false, a cut-off answer is marked after one call', async () => {
    fake.script('alder-live', [{ kind: 'answer', content: 'cut once', finishReason: 'length' }]);
    const { app } = await liveApp({ defaults: { timeout_ms: 2000, max_retries: 0, max_tokens: 400, retry_truncated: false } });
    const response = await request(app).get('/api/query?q=Cut%3F&sync=1');
    expect(response.body.panel[0]).toMatchObject({ name: 'Alder', answer: 'cut once', truncated: true });
    expect(fake.counts('alder-live')).toBe(1);
  });
});

describe('cancellation', () => {
  async function listening(app: Parameters<typeof request>[0]) {
    const server = (app as unknown as { listen: (port: number, host: string) => Server }).listen(0, '127.0.0.1');
    servers.push(server);
    await new Promise((resolve) => server.once('listening', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  const syncForms: [string, string, RequestInit][] = [
    ['GET sync=1', `/api/query?q=${encodeURIComponent('Will you wait?')}&sync=1`, {}],
    // Continues a session the server issued (its session_id is filled in below).
    ['POST /api/query', '/api/query', { method: 'POST', headers: { 'Content-Type': 'application/json' } }],
    ['GET /api/council', `/api/council?q=${encodeURIComponent('Will you wait?')}`, {}],
  ];
  it.each(syncForms)('a client that disconnects from %s aborts the provider calls and releases their reservations', async (_name, url, init) => {
    const { app, store } = await liveApp({ defaults: { timeout_ms: 120_000, max_retries: 0, max_tokens: 400 } });
    const base = await listening(app);
    let sessionId: string | undefined;
    if (init.method === 'POST') {
      const started = await fetch(`${base}/api/query`, { ...init, body: JSON.stringify({ query: 'First turn', new_session: true }) });
      sessionId = ((await started.json()) as { session: { session_id: string } }).session.session_id;
      fake.requests.splice(0);
    }
    for (const model of panelIds) fake.setDefault(model, { kind: 'hang' });
    const client = new AbortController();
    const body = sessionId ? { body: JSON.stringify({ query: 'Will you wait?', session_id: sessionId }) } : {};
    const pending = fetch(`${base}${url}`, { ...init, ...body, signal: client.signal }).catch((error: unknown) => error);
    expect(await eventually(() => panelIds.every((model) => fake.counts(model) === 1))).toBe(true);
    expect((await store.spendStatus(new Date())).reserved_usd).toBeGreaterThan(0);
    client.abort();
    await pending;
    // Before, the calls ran on until their own timeout (here two minutes).
    expect(await eventually(() => fake.requests.every((entry) => entry.abortedByClient))).toBe(true);
    expect(await eventually(async () => (await store.spendStatus(new Date())).reserved_usd === 0)).toBe(true);
    expect(fake.counts('chair-live')).toBe(0);
    // A run nobody reads joins no session: it still holds only its first turn.
    if (sessionId) expect((await store.getSession(sessionId, 3_600_000, new Date())).map((turn) => turn.question)).toEqual(['First turn']);
  });

  it('POST /api/jobs/cancel cancels a running job and aborts its calls', async () => {
    for (const model of panelIds) fake.setDefault(model, { kind: 'hang' });
    const { app, live, store } = await liveApp({ defaults: { timeout_ms: 120_000, max_retries: 0, max_tokens: 400 } });
    const submitted = await request(app).get('/api/council?q=Cancel%20me&async=1');
    expect(submitted.body.cancel_url).toBe(`/api/jobs/cancel?job=${submitted.body.job_id}`);
    expect(await eventually(() => panelIds.every((model) => fake.counts(model) === 1))).toBe(true);
    const cancelled = await request(app).post(submitted.body.cancel_url);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', error: { code: 'JOB_CANCELLED' } });
    await live.runner.idle();
    expect(await eventually(() => fake.requests.every((entry) => entry.abortedByClient))).toBe(true);
    expect(fake.counts('chair-live')).toBe(0);
    expect((await request(app).get(submitted.body.poll_url)).body.status).toBe('cancelled');
    expect((await store.spendStatus(new Date())).reserved_usd).toBe(0);
    const again = await request(app).post(submitted.body.cancel_url);
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('cancelled');
  });

  it('a queued job that is cancelled never runs, and its handler sees no result stored', async () => {
    const store = createSqliteStore(':memory:');
    const ran: string[] = [];
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const runner = createJobRunner({
      store,
      concurrency: 1,
      now: () => new Date(),
      newId: (() => {
        let n = 0;
        return () => `job_${++n}`;
      })(),
      log: () => {},
      describeFailure: (error) => ({ code: 'JOB_FAILED', message: String(error) }),
      handlers: {
        council: async (input) => {
          ran.push(String(input));
          if (input === 'first') await released;
          return { ok: input };
        },
        deliberation: async () => null,
        trace: async () => null,
      },
    });
    const first = await runner.submit('council', 'first');
    const second = await runner.submit('council', 'second');
    expect((await runner.cancel(second.id))?.status).toBe('cancelled');
    release();
    await runner.idle();
    expect(ran).toEqual(['first']);
    expect(await store.getJob(first.id)).toMatchObject({ status: 'done', result: { ok: 'first' } });
    expect(await store.getJob(second.id)).toMatchObject({ status: 'cancelled', result: null, error: { code: 'JOB_CANCELLED' } });
  });
});
