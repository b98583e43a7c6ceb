/**
 * Spec §7: suggested_next_call is "a concrete next request". Every client error the API can
 * emit is provoked here (ERROR_CODES drives the list, so a new code without a case fails),
 * its suggestion must be an object, and following it against the same app must succeed.
 * Live paths run against the local fake provider, so their suggestions are followed too.
 */
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { ERROR_CODES, type ErrorCode, type SuggestedCall } from '../schemas/errors.ts';
import { createHttpServer } from '../api/http/http-server.ts';
import type { RateLimits } from '../api/http/rate-limit.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import { buildApp, type BuiltApp } from '../devkit/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { createLiveApp, INGEST_SECRET, scriptDefaults, testPanelConfig } from '../devkit/live.ts';

const WINDOW = { limit: 10_000, windowMs: 3_600_000 };
const NO_LIMITS: RateLimits = { contribute: WINDOW, play: WINDOW, live: WINDOW, liveGlobal: WINDOW, council: WINDOW, councilGlobal: WINDOW };

/** Client errors, and the one 503 that a changed request always avoids. */
const COVERED_STATUSES = new Set([400, 401, 403, 404, 405, 409, 413, 414, 416, 422, 431]);
/**
 * Transient like 429: a request with this key is still being handled, so no changed request
 * succeeds now; its suggestion (the same request with the same key, after Retry-After) is
 * checked in test/contributions.test.ts.
 */
const TRANSIENT: ErrorCode[] = ['IDEMPOTENCY_KEY_IN_USE'];
/**
 * Refused federation offers need a peer key and signed offers: followed in test/federation-offer.test.ts.
 * A revision a history does not hold needs a build with git history: followed in test/changes.test.ts.
 */
const COVERED_ELSEWHERE: ErrorCode[] = ['PUSH_DISABLED', 'OFFER_UNAUTHENTICATED', 'OFFER_REFUSED', 'REVISION_NOT_FOUND'];
const ALSO_COVERED: ErrorCode[] = ['PERSISTENCE_UNAVAILABLE'];

interface Case {
  code: ErrorCode;
  method: 'GET' | 'POST' | 'DELETE' | 'PUT';
  url: string;
  body?: unknown;
  /** Sent as is, with Content-Type application/json unless headers say otherwise. */
  raw?: string;
  headers?: Record<string, string>;
  /** The app without an ingestion secret (persistence off). */
  app?: 'no-secret' | 'curator';
  /** What the suggestion must (not) hold beyond being followable. */
  check?: (call: SuggestedCall) => void;
}

let fake: FakeOpenAI;
let built: BuiltApp;
let app: Express;
let noSecret: Express;
let curator: Express;
let jobId: string;
/** A job that has ended (done) before the cases run: cancelling it is JOB_ALREADY_FINISHED. */
let finishedJobId: string;

const ANSWER = { id: 'TST-D1', answer: 'Ownership comes by degrees.', identity: 'Dogwood', justification: 'new_position' };
const PROPOSAL = { action: 'propose', title: 'A synthesis', text: 'Two readings of refusal.', identity: 'Dogwood', sources: ['TST-1'] };
const long = (length: number) => 'a'.repeat(length);

function cases(): Case[] {
  return [
    // GET /api/query: the same query without the refused value, mended again while still refused.
    {
      code: 'PARAM_MISSING',
      method: 'GET',
      url: '/api/query?layers=divergence',
      check: (call) => expect(call.query).toMatchObject({ layers: 'divergence', q: expect.any(String) }),
    },
    { code: 'PARAM_REPEATED', method: 'GET', url: '/api/query?q=tides&q=harbour', check: (call) => expect(call.query).toEqual({ q: 'tides' }) },
    { code: 'UNKNOWN_PARAMETER', method: 'GET', url: '/api/query?q=tides&bogus=1&limit=999', check: (call) => expect(call.query).toEqual({ q: 'tides' }) },
    {
      code: 'UNKNOWN_LAYER',
      method: 'GET',
      url: '/api/query?q=tides&layers=bogus&rings=nope&format=brief',
      check: (call) => expect(call.query).toEqual({ q: 'tides', format: 'brief' }),
    },
    { code: 'UNKNOWN_EVIDENCE', method: 'GET', url: '/api/query?q=tides&evidence_threshold=solid' },
    { code: 'UNKNOWN_FORMAT', method: 'GET', url: '/api/query?q=tides&format=xml' },
    { code: 'UNKNOWN_MODE', method: 'GET', url: '/api/query?q=tides&mode=fast' },
    { code: 'UNKNOWN_GLYPH', method: 'GET', url: `/api/query?q=tides&glyph=${encodeURIComponent('Z')}` },
    { code: 'INVALID_PARAMETER', method: 'GET', url: '/api/query?q=tides&limit=0' },
    { code: 'INVALID_PARAMETER', method: 'GET', url: '/api/query?job=' },
    { code: 'CONFLICTING_PARAMETERS', method: 'GET', url: '/api/query?q=tides&mode=retrieve&async=1' },
    { code: 'CONFLICTING_PARAMETERS', method: 'GET', url: '/api/query?q=tides&layers=research&exclude=research' },
    { code: 'QUERY_TOO_LONG', method: 'GET', url: `/api/query?q=${long(4001)}`, check: (call) => expect(call.query!.q).toHaveLength(4000) },
    { code: 'JOB_NOT_FOUND', method: 'GET', url: '/api/query?job=job_nope' },
    { code: 'URI_TOO_LONG', method: 'GET', url: `/api/query?q=${long(9000)}` },
    // Other GET routes.
    { code: 'UNKNOWN_PARAMETER', method: 'GET', url: '/api/info?_view=bogus', check: (call) => expect(call).toEqual({ method: 'GET', path: '/api/info' }) },
    { code: 'UNKNOWN_PARAMETER', method: 'GET', url: '/api/play?x=1' },
    { code: 'UNKNOWN_CERT', method: 'GET', url: '/api/divergences?cert=C9&search=refusal', check: (call) => expect(call.query).toEqual({ search: 'refusal' }) },
    { code: 'RECORD_NOT_FOUND', method: 'GET', url: '/api/divergences?id=tst-d1' },
    { code: 'RECORD_NOT_FOUND', method: 'GET', url: '/api/divergences?id=nothing-like-it' },
    { code: 'PARAM_MISSING', method: 'GET', url: '/api/divergences/search?k=2' },
    { code: 'INVALID_PARAMETER', method: 'GET', url: '/api/divergences/search?q=refusal&k=0' },
    { code: 'UNKNOWN_STATUS', method: 'GET', url: '/api/tensions?status=bogus' },
    { code: 'PARAM_REPEATED', method: 'GET', url: '/api/tensions?status=divergent&status=emerging' },
    { code: 'PARAM_MISSING', method: 'GET', url: '/api/kin' },
    { code: 'INVALID_PARAMETER', method: 'GET', url: `/api/kin?identity=${long(201)}` },
    { code: 'PARAM_MISSING', method: 'GET', url: '/api/invite?for=' },
    { code: 'INVALID_PARAMETER', method: 'GET', url: `/api/invite?for=${long(201)}` },
    { code: 'PARAM_MISSING', method: 'GET', url: '/api/council' },
    { code: 'INVALID_PARAMETER', method: 'GET', url: '/api/council?q=tides&async=maybe' },
    { code: 'QUERY_TOO_LONG', method: 'GET', url: `/api/trace?q=${long(4001)}` },
    { code: 'ROUTE_NOT_FOUND', method: 'GET', url: '/nothing/here' },
    { code: 'ROUTE_NOT_FOUND', method: 'GET', url: '/api//query' },
    { code: 'RANGE_NOT_SATISFIABLE', method: 'GET', url: '/audio/harbour-talk.wav', headers: { Range: 'bytes=999999-' } },
    // Wrong methods.
    { code: 'METHOD_NOT_ALLOWED', method: 'DELETE', url: '/api/query' },
    { code: 'METHOD_NOT_ALLOWED', method: 'GET', url: '/api/contribute', check: (call) => expect(call.method).toBe('POST') },
    { code: 'METHOD_NOT_ALLOWED', method: 'GET', url: '/api/mcp' },
    { code: 'METHOD_NOT_ALLOWED', method: 'PUT', url: '/limitations.md' },
    // Bodies: the same POST mended.
    { code: 'PARAM_MISSING', method: 'POST', url: '/api/query', body: { query: ' ' } },
    {
      code: 'INVALID_BODY',
      method: 'POST',
      url: '/api/query',
      body: { query: 5, async: true },
      check: (call) => expect(call.body).toMatchObject({ async: true }),
    },
    { code: 'PARAM_MISSING', method: 'POST', url: '/api/council', body: {} },
    { code: 'INVALID_BODY', method: 'POST', url: '/api/council', body: { q: 5, persist: true } },
    { code: 'AUTH_REQUIRED', method: 'POST', url: '/api/council', body: { q: 'tides', persist: true } },
    { code: 'AUTH_INVALID', method: 'POST', url: '/api/council', body: { q: 'tides', persist: true }, headers: { Authorization: 'Bearer wrong' } },
    { code: 'PERSISTENCE_UNAVAILABLE', method: 'POST', url: '/api/council', body: { q: 'tides', persist: true }, app: 'no-secret' },
    {
      code: 'INVALID_BODY',
      method: 'POST',
      url: '/api/contribute',
      body: { id: 'TST-D1', identity: 'Dogwood' },
      check: (call) => expect(call.body).toMatchObject({ id: 'TST-D1', identity: 'Dogwood' }),
    },
    {
      code: 'INVALID_JUSTIFICATION',
      method: 'POST',
      url: '/api/contribute',
      body: { ...ANSWER, justification: 'because' },
      check: (call) => expect(call.body).toMatchObject({ ...ANSWER, justification: expect.not.stringMatching(/^because$/) }),
    },
    { code: 'INVALID_JUSTIFICATION', method: 'POST', url: '/api/contribute', body: { ...ANSWER, id: 'NOPE-404', justification: 'because' } },
    { code: 'RECORD_NOT_FOUND', method: 'POST', url: '/api/contribute', body: { ...ANSWER, id: 'TST-D9' } },
    { code: 'INVALID_PARAMETER', method: 'POST', url: '/api/contribute', body: ANSWER, headers: { 'Idempotency-Key': 'a b' } },
    { code: 'INVALID_JSON', method: 'POST', url: '/api/contribute', raw: '{"id": ' },
    {
      code: 'BAD_REQUEST',
      method: 'POST',
      url: '/api/contribute',
      raw: JSON.stringify(ANSWER),
      headers: { 'Content-Type': 'application/json; charset=latin9' },
    },
    { code: 'PAYLOAD_TOO_LARGE', method: 'POST', url: '/api/store', body: { ...PROPOSAL, text: long(70_000) } },
    {
      code: 'UNKNOWN_ACTION',
      method: 'POST',
      url: '/api/store',
      body: { ...PROPOSAL, action: 'delete' },
      check: (call) => expect(call.body).toMatchObject({ ...PROPOSAL, action: 'propose' }),
    },
    { code: 'INVALID_BODY', method: 'POST', url: '/api/store', body: { action: 'propose', title: 'Only a title' } },
    {
      code: 'UNKNOWN_SOURCE',
      method: 'POST',
      url: '/api/store',
      body: { ...PROPOSAL, sources: ['TST-1', 'NOPE-1'] },
      check: (call) => expect(call.body).toMatchObject({ sources: ['TST-1'] }),
    },
    { code: 'INVALID_BODY', method: 'POST', url: '/api/play', body: { slug: 5 } },
    {
      code: 'TRACK_NOT_FOUND',
      method: 'POST',
      url: '/api/play',
      body: { slug: 'harbor-talk' },
      check: (call) => expect(call.body).toEqual({ slug: 'harbour-talk' }),
    },
    {
      code: 'INVALID_TEXT',
      method: 'POST',
      url: '/api/contribute',
      body: { ...ANSWER, answer: 'Owned by\u0000 degrees.' },
      check: (call) => expect(JSON.stringify(call.body)).not.toContain('\\u0000'),
    },
    {
      code: 'IDEMPOTENCY_KEY_REUSED',
      method: 'POST',
      url: '/api/contribute',
      body: { ...ANSWER, answer: 'Another answer under a used key.' },
      headers: { 'Idempotency-Key': 'used-once' },
      check: (call) => expect(call.headers).toBeUndefined(),
    },
    { code: 'CONCEPT_NOT_FOUND', method: 'GET', url: '/api/lineage?concept=nothing-like-this-at-all' },
    // The fixture is built outside git: any earlier revision is beyond what it can tell.
    { code: 'HISTORY_UNAVAILABLE', method: 'GET', url: '/api/changes?since=0123456789abcdef', check: (call) => expect(call.path).toBe('/api/manifest') },
    { code: 'INVALID_PARAMETER', method: 'GET', url: '/api/changes?since=HEAD', check: (call) => expect(call.path).toBe('/api/changes') },
    {
      code: 'UNKNOWN_DISPOSITION',
      method: 'GET',
      url: '/api/tensions?disposition=bogus&status=divergent',
      check: (call) => expect(call.query).toEqual({ status: 'divergent' }),
    },
    {
      code: 'TENSION_NOT_FOUND',
      method: 'POST',
      url: '/api/tensions/dispositions',
      body: { key: 'nobody__nothing__nowhere', kind: 'held', by: 'ana', reason: 'Left open on purpose.' },
      headers: { Authorization: `Bearer ${INGEST_SECRET}` },
      app: 'curator',
    },
    { code: 'BODY_TOO_DEEP', method: 'POST', url: '/api/contribute', raw: `{"id": ${'['.repeat(80)}${']'.repeat(80)}}` },
    // Live state: a session not issued, a council no longer kept, a job already ended.
    {
      code: 'SESSION_NOT_FOUND',
      method: 'POST',
      url: '/api/query',
      body: { query: 'What do the tides owe the harbour?', session_id: 'ses_never_issued' },
      check: (call) => expect(call.body).toEqual({ query: 'What do the tides owe the harbour?', new_session: true }),
    },
    {
      code: 'COUNCIL_NOT_FOUND',
      method: 'POST',
      url: '/api/council',
      body: { council_id: 'council_gone', persist: true },
      headers: { Authorization: `Bearer ${INGEST_SECRET}` },
      check: (call) => expect(call).toMatchObject({ method: 'GET', path: '/api/council' }),
    },
    {
      code: 'JOB_ALREADY_FINISHED',
      method: 'POST',
      get url() {
        return `/api/jobs/cancel?job=${finishedJobId}`;
      },
      check: (call) => expect(call).toEqual({ method: 'GET', path: '/api/query', query: { job: finishedJobId } }),
    },
    { code: 'PARAM_MISSING', method: 'POST', url: '/api/jobs/cancel', body: {}, check: (call) => expect(call.query).toMatchObject({ async: '1' }) },
    {
      code: 'ORIGIN_NOT_ALLOWED',
      method: 'POST',
      url: '/api/mcp',
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
      headers: { Origin: 'https://evil.example' },
      check: (call) => expect(call).toEqual({ method: 'GET', path: '/api/agent-entry' }),
    },
  ];
}

function send(target: Express, item: Case) {
  const agent = request(target);
  let pending =
    item.method === 'GET'
      ? agent.get(item.url)
      : item.method === 'POST'
        ? agent.post(item.url)
        : item.method === 'PUT'
          ? agent.put(item.url)
          : agent.delete(item.url);
  if (item.raw !== undefined || item.body !== undefined) pending = pending.set('Content-Type', 'application/json');
  for (const [name, value] of Object.entries(item.headers ?? {})) pending = pending.set(name, value);
  if (item.raw !== undefined) return pending.send(item.raw);
  return item.body !== undefined ? pending.send(item.body as object) : pending;
}

function follow(target: Express, call: SuggestedCall) {
  const agent = request(target);
  const method = call.method.toUpperCase();
  expect(['GET', 'POST'], `suggested method ${call.method}`).toContain(method);
  const pending = method === 'GET' ? agent.get(call.path) : agent.post(call.path);
  if (call.query) pending.query(call.query);
  if (method === 'POST') pending.set('Content-Type', 'application/json');
  return call.body !== undefined ? pending.send(call.body as object) : pending;
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
  scriptDefaults(fake);
  built = await buildApp(writeFixtureContent());
  const store = createSqliteStore(':memory:');
  const wired = createLiveApp(built.corpus, store, testPanelConfig(fake), undefined, NO_LIMITS);
  app = wired.app;
  noSecret = createApp({ corpus: built.corpus, live: wired.live, store, limits: NO_LIMITS, log: () => {} });
  curator = createApp({
    corpus: built.corpus,
    live: wired.live,
    store,
    limits: NO_LIMITS,
    ingestSecret: INGEST_SECRET,
    log: () => {},
    appendDisposition: () => {
      throw new Error('no disposition is written by these cases');
    },
  });
  const submitted = await request(app).get('/api/query').query({ q: 'What do the tides owe the harbour?', async: '1' });
  expect(submitted.status).toBe(202);
  jobId = submitted.body.job_id;
  const finished = await request(app).get('/api/query').query({ q: 'What does the harbour keep?', async: '1' });
  finishedJobId = finished.body.job_id;
  const keyed = await request(app)
    .post('/api/contribute')
    .set('Idempotency-Key', 'used-once')
    .send({ ...ANSWER, answer: 'The first answer under this key.' });
  expect(keyed.status).toBe(202);
  await wired.live.runner.idle();
}, 120_000);

afterAll(async () => {
  await fake?.close();
});

describe('suggested_next_call (spec §7) on every client error', () => {
  it('every client error code has a case below', () => {
    const provoked = new Set(cases().map((item) => item.code));
    const codes = (Object.entries(ERROR_CODES) as [ErrorCode, number][])
      .filter(
        ([code, status]) => COVERED_STATUSES.has(status) && code !== 'HEADERS_TOO_LARGE' && !TRANSIENT.includes(code) && !COVERED_ELSEWHERE.includes(code),
      )
      .map(([code]) => code);
    expect(codes.filter((code) => !provoked.has(code))).toEqual([]);
    for (const code of ALSO_COVERED) expect(provoked.has(code), code).toBe(true);
  });

  it.each(cases().map((item) => [`${item.code}: ${item.method} ${item.url.slice(0, 80)}`, item] as const))(
    '%s → a next call that succeeds',
    async (_name, item) => {
      const target = item.app === 'no-secret' ? noSecret : item.app === 'curator' ? curator : app;
      const response = await send(target, item);
      expect(response.status, JSON.stringify(response.body).slice(0, 300)).toBe(ERROR_CODES[item.code]);
      expect(response.body.error.code).toBe(item.code);
      const call = response.body.error.suggested_next_call as SuggestedCall | null;
      expect(call, 'suggested_next_call').toEqual(expect.objectContaining({ method: expect.any(String), path: expect.stringMatching(/^\//) }));
      item.check?.(call!);
      const followed = await follow(target, call!);
      expect(
        followed.status,
        `${call!.method} ${call!.path} ${JSON.stringify(call!.query ?? call!.body ?? {}).slice(0, 200)} → ${JSON.stringify(followed.body).slice(0, 300)}`,
      ).toBeGreaterThanOrEqual(200);
      expect(followed.status).toBeLessThan(300);
    },
  );

  it('HEADERS_TOO_LARGE, answered before routing, also names a call that succeeds', async () => {
    const server = createHttpServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.end(`GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: ${long(20_000)}\r\n\r\n`));
        let text = '';
        socket.on('data', (chunk) => (text += chunk.toString('latin1')));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      expect(raw).toMatch(/^HTTP\/1.1 431 /);
      const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { error: { code: string; suggested_next_call: SuggestedCall } };
      expect(body.error.code).toBe('HEADERS_TOO_LARGE');
      expect((await follow(app, body.error.suggested_next_call)).status).toBe(200);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('GET /api/query with both q and job (issue 13, item 6)', () => {
  it('is refused: a 200 never echoes another question than the one asked', async () => {
    const response = await request(app).get('/api/query').query({ q: 'A different question', job: jobId });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('CONFLICTING_PARAMETERS');
    expect(response.body.error.suggested_next_call).toEqual({ method: 'GET', path: '/api/query', query: { job: jobId } });
  });

  it('refuses any other parameter beside job, which would otherwise be silently ignored', async () => {
    for (const extra of [{ format: 'brief' }, { layers: 'divergence' }, { mode: 'retrieve' }, { async: '0' }]) {
      const response = await request(app)
        .get('/api/query')
        .query({ job: jobId, ...extra });
      expect(response.status, JSON.stringify(extra)).toBe(400);
      expect(response.body.error.code).toBe('CONFLICTING_PARAMETERS');
    }
  });

  it('polling by job alone still answers the job, with the question it was submitted with', async () => {
    let response = await request(app).get('/api/query').query({ job: jobId });
    for (let polls = 0; polls < 400 && ['queued', 'running'].includes(response.body.status); polls++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      response = await request(app).get('/api/query').query({ job: jobId });
    }
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ job_id: jobId, status: 'done', question_received: 'What do the tides owe the harbour?' });
  });
});
