/**
 * Issue 14, items 6-8, against the local fake provider: persisting the council that was
 * read (by council_id, no model call), sessions the server issues and binds to a client,
 * and progress (stages on the job, Server-Sent Events on the sync paths).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadCorpus } from '../api/load-artifacts.ts';
import { createInProcessCall } from '../api/mcp/in-process.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import { buildApp, type BuiltApp, testEmbedder } from '../devkit/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { createLiveApp, DEFAULT_SYNTHESIS, INGEST_SECRET, scriptDefaults, testPanelConfig } from '../devkit/live.ts';

type Json = Record<string, unknown>;

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

async function liveApp(overrides: Parameters<typeof testPanelConfig>[1] = {}, now?: () => Date) {
  const store = createSqliteStore(':memory:');
  const corpus = await loadCorpus(built.artifactsDir, await testEmbedder());
  return { ...createLiveApp(corpus, store, testPanelConfig(fake, overrides), now), store };
}

const bearer = { Authorization: `Bearer ${INGEST_SECRET}` };

describe('persisting the council that was read (item 6)', () => {
  // Whitespace, a tab and an emoji are kept byte for byte; a NUL has no storable form on every
  // driver, so it is removed as the answer arrives and what is shown is what is stored (ADR 0009).
  const SENT = 'Alder:  yes.\n\tIndented line  \u{1F600} \u0000 trailing  ';
  const VERBATIM = 'Alder:  yes.\n\tIndented line  \u{1F600}  trailing  ';

  it('stores exactly what was shown under its council_id, with no model call, once', async () => {
    fake.script('alder-live', [{ kind: 'answer', content: SENT }]);
    const { app } = await liveApp();
    const shown = await request(app).get('/api/council?q=Can%20a%20refusal%20be%20owned%3F');
    expect(shown.status).toBe(200);
    expect(shown.body.council_id).toMatch(/^council_[0-9a-f]{32}$/);
    expect(Date.parse(shown.body.kept_until) - Date.parse(shown.body.date)).toBeGreaterThan(0);
    expect(shown.body.panel[0].text).toBe(VERBATIM);
    const before = (await request(app).get('/api/manifest')).body.counts.atlas.live_records;
    const callsBefore = fake.requests.length;

    const persisted = await request(app).post('/api/council').set(bearer).send({ council_id: shown.body.council_id, persist: true });
    expect(persisted.status).toBe(201);
    expect(fake.requests.length).toBe(callsBefore);
    const { persisted: info, ...body } = persisted.body as Json & { persisted: Json };
    // the response is the council as shown, plus where it was stored
    expect(body).toEqual(shown.body);
    expect(persisted.headers.location).toBe(info.href);
    const record = await request(app).get(String(info.href));
    expect(record.status).toBe(200);
    const answered = (shown.body.panel as Json[]).filter((voice) => voice.status === 'answered');
    expect(record.body.answers.map((answer: Json) => answer.text)).toEqual(answered.map((voice) => voice.text));
    expect(record.body.answers[0].text).toBe(VERBATIM);
    expect(record.body.question).toBe(shown.body.question);
    expect(record.body.tensions).toEqual((shown.body.tensions as Json[]).map((tension) => expect.objectContaining(tension)));
    expect((await request(app).get('/api/manifest')).body.counts.atlas.live_records).toBe(before + 1);

    // a second persist answers the same record and stores nothing new
    const again = await request(app).post('/api/council').set(bearer).send({ council_id: shown.body.council_id, persist: true });
    expect(again.status).toBe(200);
    expect(again.body.persisted).toMatchObject({ id: info.id, already_persisted: true });
    expect((await request(app).get('/api/manifest')).body.counts.atlas.live_records).toBe(before + 1);
    expect(fake.requests.length).toBe(callsBefore);
  });

  it('a council job carries its council_id too', async () => {
    const { app, live } = await liveApp();
    const submitted = await request(app).get('/api/council?q=Owned%3F&async=1');
    await live.runner.idle();
    const done = await request(app).get(submitted.body.poll_url);
    expect(done.body).toMatchObject({ status: 'done', council_id: expect.stringMatching(/^council_/) });
    const persisted = await request(app).post('/api/council').set(bearer).send({ council_id: done.body.council_id, persist: true });
    expect(persisted.status).toBe(201);
    expect(persisted.body.panel).toEqual(done.body.panel);
  });

  it('an unknown or expired council_id is a 404 that says how to get one; nothing is stored', async () => {
    let clock = new Date('2026-03-01T00:00:00Z');
    const { app, store } = await liveApp({}, () => clock);
    const unknown = await request(app).post('/api/council').set(bearer).send({ council_id: 'council_nope', persist: true });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'COUNCIL_NOT_FOUND', retryable: false, suggested_next_call: { method: 'GET', path: '/api/council' } });
    expect(unknown.body.error.agent_action).toMatch(/Run the council again/);

    const shown = await request(app).get('/api/council?q=Kept%20for%20a%20day%3F');
    clock = new Date(clock.getTime() + 24 * 3_600_000 + 1000);
    const calls = fake.requests.length;
    const expired = await request(app).post('/api/council').set(bearer).send({ council_id: shown.body.council_id, persist: true });
    expect(expired.status).toBe(404);
    expect(expired.body.error.code).toBe('COUNCIL_NOT_FOUND');
    expect(fake.requests.length).toBe(calls);
    expect(await store.listRecords()).toEqual([]);
  });

  it('needs the bearer secret, persist true, and either council_id or q', async () => {
    const { app, store } = await liveApp();
    const shown = await request(app).get('/api/council?q=Secret%3F');
    const id = shown.body.council_id as string;
    expect((await request(app).post('/api/council').send({ council_id: id, persist: true })).status).toBe(401);
    expect((await request(app).post('/api/council').set('Authorization', 'Bearer wrong').send({ council_id: id, persist: true })).status).toBe(403);
    const withoutPersist = await request(app).post('/api/council').set(bearer).send({ council_id: id });
    expect(withoutPersist.status).toBe(400);
    expect(withoutPersist.body.error.code).toBe('INVALID_BODY');
    const both = await request(app).post('/api/council').set(bearer).send({ council_id: id, q: 'another', persist: true });
    expect(both.status).toBe(400);
    expect(both.body.error.code).toBe('CONFLICTING_PARAMETERS');
    expect(await store.listRecords()).toEqual([]);
  });
});

describe('sessions the server issues (item 7)', () => {
  it('an id the server did not issue is refused before any model call', async () => {
    const { app } = await liveApp();
    const response = await request(app).post('/api/query').send({ query: 'Remember me?', session_id: 'sess-1' });
    expect(response.status).toBe(404);
    expect(response.body.error).toMatchObject({
      code: 'SESSION_NOT_FOUND',
      suggested_next_call: { method: 'POST', path: '/api/query', body: { new_session: true } },
    });
    expect(fake.requests).toHaveLength(0);
    const both = await request(app).post('/api/query').send({ query: 'x', session_id: 'sess-1', new_session: true });
    expect(both.status).toBe(400);
    expect(both.body.error.code).toBe('CONFLICTING_PARAMETERS');
  });

  it('issues unguessable ids, and a session issued to one client never reads for another', async () => {
    const { app } = await liveApp();
    const alice = createInProcessCall(app, { remoteAddress: '203.0.113.7' });
    const mallory = createInProcessCall(app, { remoteAddress: '198.51.100.9' });
    const ids = new Set<string>();
    let aliceSession = '';
    for (let n = 0; n < 3; n++) {
      const started = await alice({ method: 'POST', path: '/api/query', body: { query: `private question ${n} about the harbour`, new_session: true } });
      expect(started.status).toBe(200);
      aliceSession = ((started.body as Json).session as Json).session_id as string;
      ids.add(aliceSession);
    }
    expect(ids.size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^ses_[A-Za-z0-9_-]{32}$/);

    const calls = fake.requests.length;
    const stolen = await mallory({ method: 'POST', path: '/api/query', body: { query: 'what did they ask?', session_id: aliceSession } });
    expect(stolen.status).toBe(404);
    expect((stolen.body as Json & { error: Json }).error.code).toBe('SESSION_NOT_FOUND');
    expect(fake.requests.length).toBe(calls);
    const stolenAsync = await mallory({ method: 'POST', path: '/api/query', body: { query: 'what did they ask?', session_id: aliceSession, async: true } });
    expect(stolenAsync.status).toBe(404);

    // the owner continues, and sees its own turn in the prompt
    const next = await alice({ method: 'POST', path: '/api/query', body: { query: 'and then?', session_id: aliceSession } });
    expect(next.status).toBe(200);
    expect((next.body as Json).session).toMatchObject({ session_id: aliceSession, prior_exchanges: 1, started: false });
    expect(JSON.stringify(fake.requestsFor('alder-live').at(-1)!.messages)).toContain('private question 2 about the harbour');
    expect(JSON.stringify(fake.requests.map((entry) => entry.messages))).not.toContain('what did they ask?');
  });

  it('the async form returns the new session_id at once and threads it in the job', async () => {
    const { app, live } = await liveApp();
    const submitted = await request(app).post('/api/query').send({ query: 'async session', async: true, new_session: true });
    expect(submitted.status).toBe(202);
    expect(submitted.body.session_id).toMatch(/^ses_/);
    await live.runner.idle();
    const done = await request(app).get(submitted.body.poll_url);
    expect(done.body.session).toMatchObject({ session_id: submitted.body.session_id, started: true, prior_exchanges: 0 });
    const next = await request(app).post('/api/query').send({ query: 'continued', session_id: submitted.body.session_id });
    expect(next.body.session.prior_exchanges).toBe(1);
  });
});

/** Server-Sent Events of a finished response body. */
function parseEvents(text: string): { event: string; data: Json }[] {
  return text
    .split('\n\n')
    .filter((block) => block.includes('data: '))
    .map((block) => {
      const lines = block.split('\n');
      return {
        event: lines.find((line) => line.startsWith('event: '))!.slice(7),
        data: JSON.parse(lines.find((line) => line.startsWith('data: '))!.slice(6)) as Json,
      };
    });
}

async function listen(app: Express): Promise<string> {
  const server = await new Promise<Server>((resolve) => {
    const started = app.listen(0, '127.0.0.1', () => resolve(started));
  });
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('progress (item 8)', () => {
  it('stores stages on the job as they happen, visible while it runs', async () => {
    fake.script('alder-live', [{ kind: 'answer', content: 'late alder', delayMs: 2500 }]);
    fake.script('cedar-live', [{ kind: 'status', status: 500 }]);
    const { app, live } = await liveApp({ defaults: { timeout_ms: 5000, max_retries: 0, max_tokens: 400 } });
    const submitted = await request(app).get('/api/query?q=Can%20a%20trained%20refusal%20be%20owned%3F&async=1');
    let running: Json | undefined;
    // Alder answers late: Birch and Cedar's stages show while the job waits for it.
    while (!running) {
      const polled = (await request(app).get(submitted.body.poll_url)).body as Json & { stages: Json[] };
      expect(polled.status).not.toBe('done');
      if (polled.stages.filter((stage) => stage.stage === 'voice').length === 2) running = polled;
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(running.status).toBe('running');
    const stages = running.stages as Json[];
    expect(stages[0]).toMatchObject({ stage: 'retrieval', sources: expect.arrayContaining(['TST-D1']), attempt: 1, at: expect.any(String) });
    expect(stages.slice(1)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          stage: 'voice',
          name: 'Birch',
          model_id: 'birch-live',
          status: 'answered',
          answer: expect.stringContaining('Birch answers'),
        }),
        expect.objectContaining({ stage: 'voice', name: 'Cedar', status: 'failed', failure: 'server_error' }),
      ]),
    );
    await live.runner.idle();
    const done = (await request(app).get(submitted.body.poll_url)).body as Json & { stages: Json[] };
    expect(done.status).toBe('done');
    expect(done.stages.map((stage) => `${String(stage.stage)}:${String(stage.name ?? stage.status)}`).slice(-3)).toEqual([
      'voice:Alder',
      'chair:started',
      'chair:done',
    ]);
    expect(done.stages.at(-1)).toMatchObject({ chair: 'Chair' });
    expect(done.answer).toBe(DEFAULT_SYNTHESIS.answer);
  });

  it('streams stages, then the result, as Server-Sent Events on the sync path', async () => {
    const { app } = await liveApp();
    const response = await request(app)
      .get('/api/query?q=Can%20a%20trained%20refusal%20be%20owned%3F&sync=1')
      .set('Accept', 'text/event-stream')
      .buffer(true)
      .parse((res, done) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        res.on('end', () => done(null, text));
      });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(response.headers['cache-control']).toMatch(/no-transform/);
    expect(response.headers.vary).toMatch(/Accept/);
    const events = parseEvents(response.body as string);
    expect(events.map((entry) => `${entry.event}:${String(entry.data.stage ?? '')}`)).toEqual([
      'stage:retrieval',
      'stage:voice',
      'stage:voice',
      'stage:voice',
      'stage:chair',
      'stage:chair',
      'result:',
    ]);
    const result = events.at(-1)!.data;
    expect(result).toMatchObject({ question_received: 'Can a trained refusal be owned?', answer: DEFAULT_SYNTHESIS.answer });
    const voices = events.filter((entry) => entry.data.stage === 'voice').map((entry) => entry.data.answer);
    expect(new Set(voices)).toEqual(new Set((result.panel as Json[]).map((voice) => voice.answer)));

    // POST /api/query and GET /api/council stream too
    const posted = await request(app)
      .post('/api/query')
      .set('Accept', 'text/event-stream')
      .send({ query: 'posted', new_session: true })
      .buffer(true)
      .parse((res, done) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        res.on('end', () => done(null, text));
      });
    expect(parseEvents(posted.body as string).at(-1)!.data.session).toMatchObject({ started: true });
    const council = await request(app)
      .get('/api/council?q=streamed')
      .set('Accept', 'text/event-stream')
      .buffer(true)
      .parse((res, done) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        res.on('end', () => done(null, text));
      });
    const councilEvents = parseEvents(council.body as string);
    expect(councilEvents.filter((entry) => entry.data.stage === 'voice')).toHaveLength(3);
    expect(councilEvents.at(-1)).toMatchObject({ event: 'result', data: { council_id: expect.stringMatching(/^council_/) } });
  });

  it('a failure after the stream started is an error event carrying the envelope; earlier ones keep their status', async () => {
    for (const model of ['chair-live', 'backup-live']) fake.setDefault(model, { kind: 'status', status: 500 });
    const { app } = await liveApp();
    const streamed = await request(app)
      .get('/api/trace?q=Nobody%20answers')
      .set('Accept', 'text/event-stream')
      .buffer(true)
      .parse((res, done) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        res.on('end', () => done(null, text));
      });
    const events = parseEvents(streamed.body as string);
    expect(events[0]).toMatchObject({ event: 'stage', data: { stage: 'retrieval' } });
    const error = events.at(-1)!;
    expect(error.event).toBe('error');
    expect(error.data).toMatchObject({
      status: 502,
      error: { code: 'PROVIDER_FAILED', retryable: true, agent_action: expect.any(String), suggested_next_call: null },
    });
    expect(JSON.stringify(error.data)).not.toMatch(/\bat .*\.ts:\d+/);

    const missing = await request(app).get('/api/query?sync=1').set('Accept', 'text/event-stream');
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('PARAM_MISSING');
    // Spend at the ceiling is refused before the stream starts (reservations keep real runs below it).
    const { app: broke, store: brokeStore } = await liveApp({ spending_ceiling_usd: 0.01 });
    await brokeStore.addSpend({
      at: new Date().toISOString(),
      purpose: 'council',
      model: 'alder-live',
      prompt_tokens: 10,
      completion_tokens: 10,
      cost_usd: 0.01,
    });
    const refused = await request(broke).get('/api/query?q=again&sync=1').set('Accept', 'text/event-stream');
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('SPENDING_CEILING_REACHED');
  });

  it("closing the stream aborts that run's own calls (issue 14 item 5), nobody else's", async () => {
    fake.script('alder-live', [{ kind: 'hang' }]);
    const { app } = await liveApp();
    const base = await listen(app);
    const controller = new AbortController();
    const response = await fetch(`${base}/api/query?q=first%20question&sync=1`, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
    const reader = response.body!.getReader();
    let seen = '';
    while (!seen.includes('"stage":"voice"')) seen += new TextDecoder().decode((await reader.read()).value);
    controller.abort();

    // the abandoned run's hanging call is aborted, and its chair is never asked
    for (let waited = 0; waited < 10_000 && !fake.requestsFor('alder-live')[0]!.abortedByClient; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fake.requestsFor('alder-live')[0]!.abortedByClient).toBe(true);
    // another caller is served in full meanwhile
    const other = await request(app).get('/api/query?q=second%20question&sync=1');
    expect(other.status).toBe(200);
    expect(other.body.answer).toBe(DEFAULT_SYNTHESIS.answer);
    expect(other.body.failed_voices).toEqual([]);
    expect(fake.requestsFor('chair-live')).toHaveLength(1);
    expect(fake.requestsFor('alder-live')).toHaveLength(2);
    expect((await request(app).get('/api/health')).status).toBe(200);
  });
});
