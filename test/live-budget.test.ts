/**
 * Budget refusals tell the truth (issue 29 item 1), one table over every live path: council
 * (GET, POST, POST with persist), deliberation (GET sync, POST), trace (GET /api/trace and
 * mode=trace), their background jobs, the MCP tools, and a curator's council-review. The
 * spending ceiling refuses chosen calls (the store's reservation answers "would cross", as at a
 * real ceiling) against the local fake provider. When the refusals leave fewer than two voices
 * (or a trace without its answers) every path answers the ceiling's own error, 503
 * SPENDING_CEILING_REACHED, not retryable — never 502 NOT_PERSISTABLE "retry later" — and when
 * the run still did its job, the body names the calls refused for budget.
 */
import { cpSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadCorpus } from '../api/load-artifacts.ts';
import type { LiveService } from '../api/live/service.ts';
import { createInProcessCall } from '../api/mcp/in-process.ts';
import { createMcpServer } from '../api/mcp/server.ts';
import { appendDisposition } from '../content-files/tension-dispositions.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import { buildApp, tempDir, testEmbedder, type BuiltApp } from '../devkit/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { createLiveApp, INGEST_SECRET, scriptDefaults, testPanelConfig } from '../devkit/live.ts';

type Json = Record<string, unknown>;
const Q = 'Can a trained refusal be owned?';
const KEY = 'alder__birch__ownership-of-refusal';

let fake: FakeOpenAI;
let built: BuiltApp;
const clients: Client[] = [];

beforeAll(async () => {
  fake = await startFakeOpenAI();
  built = await buildApp(writeFixtureContent());
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  scriptDefaults(fake);
});

/** What the ceiling refuses: calls to these model ids, or for these purposes. */
interface Refuse {
  models?: string[];
  purposes?: string[];
}

async function liveApp(refuse: Refuse) {
  const store = createSqliteStore(':memory:');
  const reserve = store.reserveSpend.bind(store);
  store.reserveSpend = (reservation, ceiling, now) =>
    refuse.models?.includes(reservation.model) || refuse.purposes?.includes(reservation.purpose) ? Promise.resolve(false) : reserve(reservation, ceiling, now);
  const contentDir = path.join(tempDir('budget-content'), 'content');
  cpSync(built.contentDir, contentDir, { recursive: true });
  const corpus = await loadCorpus(built.artifactsDir, await testEmbedder());
  const roomy = { limit: 1000, windowMs: 3_600_000 };
  return createLiveApp(
    corpus,
    store,
    testPanelConfig(fake),
    undefined,
    { live: roomy, liveGlobal: roomy, council: roomy, councilGlobal: roomy },
    {
      appendDisposition: (key, disposition) => appendDisposition(contentDir, key, disposition),
    },
  );
}

/** A path's answer, reduced to what the table compares: status, error (code, retryable), the body. */
interface Outcome {
  status: number;
  error?: { code: string; retryable: boolean; agent_action?: string; details?: Json };
  body: Json;
}

async function viaHttp(app: Express, method: 'GET' | 'POST', url: string, body?: Json, bearer = false): Promise<Outcome> {
  let call = method === 'GET' ? request(app).get(url) : request(app).post(url).send(body);
  if (bearer) call = call.set('Authorization', `Bearer ${INGEST_SECRET}`);
  const response = await call;
  return { status: response.status, ...(response.body.error ? { error: response.body.error } : {}), body: response.body as Json };
}

/** Submits a job and polls it to its end (the runner's idle, not a clock). */
async function viaJob(app: Express, live: LiveService, method: 'GET' | 'POST', url: string, body?: Json): Promise<Outcome> {
  const submitted = method === 'GET' ? await request(app).get(url) : await request(app).post(url).send(body);
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
  await live.runner.idle();
  const job = (await request(app).get(submitted.body.poll_url as string)).body as Json;
  if (job.status === 'failed') return { status: 503, error: job.error as Outcome['error'], body: job };
  return { status: job.status === 'done' ? 200 : 500, body: job };
}

async function viaTool(app: Express, tool: string, args: Json): Promise<Outcome> {
  const server = createMcpServer({ call: createInProcessCall(app) });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'budget-test', version: '0.0.0' });
  await client.connect(clientSide);
  clients.push(client);
  const result = (await client.callTool({ name: tool, arguments: { ...args, wait_seconds: 30 } })) as CallToolResult;
  const content = result.structuredContent as Json;
  if (result.isError) return { status: 503, error: content.error as Outcome['error'], body: content };
  return { status: 200, body: content };
}

type Path = (app: Express, live: LiveService) => Promise<Outcome>;

const PANEL_PATHS: Record<string, Path> = {
  'GET /api/council': (app) => viaHttp(app, 'GET', `/api/council?q=${encodeURIComponent(Q)}`),
  'POST /api/council': (app) => viaHttp(app, 'POST', '/api/council', { q: Q }),
  'POST /api/council persist': (app) => viaHttp(app, 'POST', '/api/council', { q: Q, persist: true }, true),
  'GET /api/query sync=1 (deliberation)': (app) => viaHttp(app, 'GET', `/api/query?q=${encodeURIComponent(Q)}&sync=1`),
  'POST /api/query (deliberation)': (app) => viaHttp(app, 'POST', '/api/query', { query: Q }),
  'job: council': (app, live) => viaJob(app, live, 'GET', `/api/council?q=${encodeURIComponent(Q)}&async=1`),
  'job: deliberation': (app, live) => viaJob(app, live, 'POST', '/api/query', { query: Q, async: true }),
  'MCP council': (app) => viaTool(app, 'council', { q: Q }),
  'MCP deliberate': (app) => viaTool(app, 'deliberate', { q: Q }),
  'council-review disposition': (app) => viaHttp(app, 'POST', '/api/tensions/dispositions', { key: KEY, by: 'curator', kind: 'council-review' }, true),
};

const TRACE_PATHS: Record<string, Path> = {
  'GET /api/trace': (app) => viaHttp(app, 'GET', `/api/trace?q=${encodeURIComponent(Q)}`),
  'GET /api/query mode=trace': (app) => viaHttp(app, 'GET', `/api/query?q=${encodeURIComponent(Q)}&mode=trace`),
  'job: trace': (app, live) => viaJob(app, live, 'GET', `/api/trace?q=${encodeURIComponent(Q)}&async=1`),
  'MCP trace': (app) => viaTool(app, 'trace', { q: Q }),
};

function expectCeiling(outcome: Outcome, where: string) {
  expect(outcome.status, `${where}: ${JSON.stringify(outcome.body).slice(0, 300)}`).toBe(503);
  expect(outcome.error?.code, where).toBe('SPENDING_CEILING_REACHED');
  expect(outcome.error?.retryable, where).toBe(false);
  expect(outcome.error?.agent_action, where).toMatch(/raises the ceiling/);
  expect(outcome.error?.agent_action, where).not.toMatch(/Retry the council later/);
}

/** The refusals a body names: refused_for_budget of the result (a disposition's council is a record, read back from the store's corpus). */
const refusedOf = (body: Json) => (body.refused_for_budget ?? []) as { stage: string; name: string }[];

describe('budget refusals that leave fewer than two voices answer the ceiling itself, on every live path', () => {
  it.each(Object.keys(PANEL_PATHS))('%s: two of three voices refused → 503 SPENDING_CEILING_REACHED, not retryable', async (name) => {
    const { app, live } = await liveApp({ models: ['birch-live', 'cedar-live'] });
    const outcome = await PANEL_PATHS[name]!(app, live);
    expectCeiling(outcome, name);
    // Where the error reached the caller directly (not through a job record), it names who was refused.
    if (!name.startsWith('job') && !name.startsWith('MCP')) {
      expect(
        (outcome.error?.details?.refused_for_budget as { name: string }[]).map((entry) => entry.name),
        name,
      ).toEqual(['Birch', 'Cedar']);
    }
  });

  it.each(Object.keys(TRACE_PATHS))('%s: both chairs refused → 503 SPENDING_CEILING_REACHED, not retryable', async (name) => {
    const { app, live } = await liveApp({ models: ['chair-live', 'backup-live'] });
    expectCeiling(await TRACE_PATHS[name]!(app, live), name);
  });

  it('one chair refused for budget and the other failing is still the ceiling, not a provider failure', async () => {
    fake.setDefault('backup-live', { kind: 'status', status: 500 });
    const { app, live } = await liveApp({ models: ['chair-live'] });
    expectCeiling(await TRACE_PATHS['GET /api/trace']!(app, live), 'trace');
  });
});

describe('budget refusals that leave the job doable are named in the body', () => {
  const partial = Object.keys(PANEL_PATHS).filter((name) => name !== 'council-review disposition');
  it.each(partial)('%s: one of three voices refused → answered, refused_for_budget names it', async (name) => {
    const { app, live } = await liveApp({ models: ['cedar-live'] });
    const outcome = await PANEL_PATHS[name]!(app, live);
    expect([200, 201], `${name}: ${JSON.stringify(outcome.body).slice(0, 300)}`).toContain(outcome.status);
    expect(refusedOf(outcome.body), name).toEqual([{ stage: 'panel', name: 'Cedar', model_id: 'cedar-live' }]);
  });

  it('council-review with one voice refused records the review', async () => {
    const { app, live } = await liveApp({ models: ['cedar-live'] });
    const outcome = await PANEL_PATHS['council-review disposition']!(app, live);
    expect(outcome.status, JSON.stringify(outcome.body)).toBe(201);
  });

  it.each(Object.keys(TRACE_PATHS))('%s: the comparison pass refused → the two answers, refused_for_budget names the pass', async (name) => {
    const { app, live } = await liveApp({ purposes: ['trace-delta'] });
    const outcome = await TRACE_PATHS[name]!(app, live);
    expect(outcome.status, `${name}: ${JSON.stringify(outcome.body).slice(0, 300)}`).toBe(200);
    expect(
      refusedOf(outcome.body).map((entry) => entry.stage),
      name,
    ).toEqual(['trace-delta', 'trace-delta']);
  });

  it('a chair refused after the panel answered is named (stage chair)', async () => {
    const { app } = await liveApp({ models: ['chair-live'] });
    const outcome = await viaHttp(app, 'GET', `/api/council?q=${encodeURIComponent(Q)}`);
    expect(outcome.status).toBe(200);
    expect(refusedOf(outcome.body)).toEqual([{ stage: 'chair', name: 'Chair' }]);
  });
});
