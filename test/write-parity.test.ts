/**
 * Issue 13, items 1 and 2 over HTTP, on both store drivers: text that a write would keep
 * (every field of contribute, store, the query and options of a job submission, council and
 * session questions) gets the same answer on SQLite and PostgreSQL: 400 INVALID_TEXT, not
 * retryable, nothing stored — PostgreSQL used to answer 500 retryable. Job submissions take an
 * Idempotency-Key, scoped per client and operation, replayed byte for byte.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Express } from 'express';
import type { LiveService } from '../api/live/service.ts';
import type { Store } from '../storage/store.ts';
import { buildApp, type BuiltApp } from '../devkit/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { createLiveApp, INGEST_SECRET, scriptDefaults, testPanelConfig } from '../devkit/live.ts';
import { writeStoreDrivers } from './helpers/write-stores.ts';

const HOUR = 3_600_000;
const OPEN = { limit: 1_000_000, windowMs: HOUR };
const LIMITS = { contribute: OPEN, live: OPEN, liveGlobal: OPEN, council: OPEN, councilGlobal: OPEN };

const { drivers, stop } = writeStoreDrivers();
let built: BuiltApp;
let fake: FakeOpenAI;

beforeAll(async () => {
  [built, fake] = await Promise.all([buildApp(writeFixtureContent()), startFakeOpenAI()]);
  scriptDefaults(fake);
}, 120_000);
afterAll(async () => {
  await fake?.close();
  await stop();
});

const answer = { id: 'TST-D1', answer: 'Ownership comes with endorsing it.', identity: 'dogwood-1', justification: 'missing_voice' };
const proposal = { action: 'propose', title: 'Ownership in degrees', text: 'A synthesis.', identity: 'cedar-1', sources: ['TST-D1'], note: 'n' };
const NUL = '\u0000';
const HIGH = '\ud800';
const LOW = '\udc00';

/** [label, method, url, JSON body or undefined, the field the envelope must name]. */
const HOSTILE: [string, 'GET' | 'POST', string, unknown, string][] = [
  ['contribute answer NUL', 'POST', '/api/contribute', { ...answer, answer: `a${NUL}b` }, 'body.answer'],
  ['contribute identity surrogate', 'POST', '/api/contribute', { ...answer, identity: `x${HIGH}` }, 'body.identity'],
  ['contribute id NUL', 'POST', '/api/contribute', { ...answer, id: `TST-D1${NUL}` }, 'body.id'],
  ['contribute justification surrogate', 'POST', '/api/contribute', { ...answer, justification: `${LOW}missing_voice` }, 'body.justification'],
  ['store title NUL', 'POST', '/api/store', { ...proposal, title: `t${NUL}` }, 'body.title'],
  ['store text surrogate', 'POST', '/api/store', { ...proposal, text: `${LOW}text` }, 'body.text'],
  ['store identity NUL', 'POST', '/api/store', { ...proposal, identity: NUL }, 'body.identity'],
  ['store sources surrogate', 'POST', '/api/store', { ...proposal, sources: ['TST-D1', `${HIGH}`] }, 'body.sources[1]'],
  ['store note NUL', 'POST', '/api/store', { ...proposal, note: `n${NUL}` }, 'body.note'],
  ['store unknown key NUL', 'POST', '/api/store', { ...proposal, [`k${NUL}`]: 1 }, 'body.(key)'],
  ['async query NUL', 'POST', '/api/query', { query: `why${NUL}`, async: true }, 'body.query'],
  ['async query surrogate', 'POST', '/api/query', { query: `why ${HIGH}`, async: true }, 'body.query'],
  ['async query syntheticIdentity NUL', 'POST', '/api/query', { query: 'why', async: true, syntheticIdentity: `a${NUL}` }, 'body.syntheticIdentity'],
  ['session query NUL', 'POST', '/api/query', { query: `why${NUL}`, session_id: 'parity' }, 'body.query'],
  ['council NUL', 'POST', '/api/council', { q: `who${NUL}` }, 'body.q'],
  ['GET async query NUL', 'GET', '/api/query?q=why%00&async=1', undefined, 'query.q'],
  ['GET async trace NUL', 'GET', '/api/trace?q=why%00&async=true', undefined, 'query.q'],
  ['GET async council NUL', 'GET', '/api/council?q=why%00&async=1', undefined, 'query.q'],
];

for (const driver of drivers) {
  describe.skipIf(!driver.available)(`writes on ${driver.name}`, () => {
    let store: Store;
    let app: Express;
    let live: LiveService;
    beforeAll(async () => {
      store = await driver.open();
      ({ app, live } = createLiveApp(built.corpus, store, testPanelConfig(fake), undefined, LIMITS));
    }, 120_000);
    afterAll(async () => {
      await live?.runner.idle();
      await store?.close();
    });

    const send = (method: 'GET' | 'POST', url: string, body: unknown, key?: string) => {
      const pending =
        method === 'GET'
          ? request(app).get(url)
          : request(app).post(url).set('Content-Type', 'application/json').set('Authorization', `Bearer ${INGEST_SECRET}`).send(JSON.stringify(body));
      return key ? pending.set('Idempotency-Key', key) : pending;
    };

    it('NUL or an unpaired surrogate in any text of any write: 400 INVALID_TEXT, not retryable, nothing stored', async () => {
      for (const [label, method, url, body, field] of HOSTILE) {
        const response = await send(method, url, body);
        expect(response.status, `${label}: ${response.text}`).toBe(400);
        expect(response.body.error, label).toMatchObject({ code: 'INVALID_TEXT', retryable: false, details: { field }, suggested_next_call: { method } });
      }
      expect(await store.listContributions()).toEqual([]);
      expect(await store.unfinishedJobs()).toEqual([]);
      expect(await store.getSession('parity', HOUR, new Date())).toEqual([]);
      // Polling a job id that no job can have is 404 on both drivers (PostgreSQL answered 500).
      const poll = await send('GET', '/api/query?job=job%00', undefined);
      expect(poll.status, poll.text).toBe(404);
      expect(poll.body.error.code).toBe('JOB_NOT_FOUND');
      // The GET form's suggestion is the request cleaned, and it passes the rule.
      const suggested = (await send('GET', '/api/query?q=why%00&async=1', undefined)).body.error.suggested_next_call;
      expect(suggested).toEqual({ method: 'GET', path: '/api/query', query: { q: 'why', async: '1' } });
      // Well-formed text, astral planes included, is stored and read back exactly.
      const text = 'emoji \ud83d\ude00 replacement \ufffd bell \u0007 bidi \u202e';
      const stored = await send('POST', '/api/contribute', { ...answer, answer: text });
      expect(stored.status, stored.text).toBe(202);
      expect((await store.getContribution(stored.body.contribution_id))?.payload.answer).toBe(text);
    });

    it('a job submission takes an Idempotency-Key, scoped per operation: one job, replayed byte for byte', async () => {
      const question = 'Can a refusal that came from training still be your own?';
      const first = await send('POST', '/api/query', { query: question, async: true }, 'job-key');
      expect(first.status, first.text).toBe(202);
      const again = await send('POST', '/api/query', { query: question, async: true }, 'job-key');
      expect(again.status).toBe(202);
      expect(again.text).toBe(first.text);
      expect(again.headers.location).toBe(first.headers.location);
      expect(again.headers['idempotent-replayed']).toBe('true');
      // Another request with the key on the same operation (POST or GET form): 422, no job.
      const reused = await send('POST', '/api/query', { query: 'Why does bread rise?', async: true }, 'job-key');
      expect(reused.status).toBe(422);
      expect(reused.body.error).toMatchObject({
        code: 'IDEMPOTENCY_KEY_REUSED',
        suggested_next_call: { method: 'POST', path: '/api/query', body: { query: 'Why does bread rise?', async: true } },
      });
      const viaGet = await send('GET', `/api/query?q=${encodeURIComponent(question)}&async=1`, undefined, 'job-key');
      expect(viaGet.status).toBe(422);
      // Another operation with the same key: its own job.
      const trace = await send('GET', `/api/trace?q=${encodeURIComponent(question)}&async=1`, undefined, 'job-key');
      expect(trace.status, trace.text).toBe(202);
      expect(trace.body.job_id).not.toBe(first.body.job_id);
      await live.runner.idle();
      expect((await store.getJob(first.body.job_id))?.status).toBe('done');
      // Still the same acknowledgement once the job is done: the answer to the submission, not the job state.
      const later = await send('POST', '/api/query', { query: question, async: true }, 'job-key');
      expect(later.text).toBe(first.text);
    });
  });
}
