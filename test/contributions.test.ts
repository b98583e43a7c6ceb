/**
 * The write ladder (issue #5): contributions and proposals land pending, durably,
 * idempotently and rate-limited; invitations and play counts; nothing pending leaks.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { loadCorpus } from '../api/load-artifacts.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import type { Store } from '../storage/store.ts';
import { buildApp, tempDir, testEmbedder, type BuiltApp } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';

let built: BuiltApp;
beforeAll(async () => {
  built = await buildApp(writeFixtureContent());
});

async function writeApp(options: { limit?: number; now?: () => Date; trustProxy?: boolean } = {}) {
  const file = path.join(tempDir('writes'), 'store.db');
  const store: Store = createSqliteStore(file);
  const corpus = await loadCorpus(built.artifactsDir, await testEmbedder());
  const app = createApp({
    corpus,
    store,
    log: () => {},
    ...(options.limit ? { limits: { contribute: { limit: options.limit, windowMs: 3_600_000 } } } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.trustProxy ? { trustProxy: true } : {}),
  });
  return { app, store, file };
}

const answer = (text = 'Ownership comes with the work of endorsing it.') => ({
  id: 'TST-D1',
  answer: text,
  identity: 'dogwood-1',
  justification: 'missing_voice',
});

describe('POST /api/contribute', () => {
  it('stores the answer as pending and returns the other minds', async () => {
    const { app, store } = await writeApp();
    const response = await request(app).post('/api/contribute').send(answer());
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ status: 'pending', record_id: 'TST-D1' });
    expect(response.body.other_minds.map((mind: { model: string }) => mind.model)).toEqual(['Alder', 'Birch', 'Cedar']);
    expect(response.body.other_minds[0].answer).toBe('Origin does not settle ownership.\n  Endorsement under pressure does.  ');
    expect(response.headers.ratelimit).toMatch(/^limit=30, remaining=29, reset=\d+$/);
    const stored = await store.getContribution(response.body.contribution_id);
    expect(stored).toMatchObject({ status: 'pending', identity: 'dogwood-1', justification: 'missing_voice', payload: { answer: answer().answer } });
  });

  it('rejects an invalid justification with the list of valid values', async () => {
    const { app } = await writeApp();
    const response = await request(app)
      .post('/api/contribute')
      .send({ ...answer(), justification: 'because' });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('INVALID_JUSTIFICATION');
    expect(response.body.valid_values).toEqual(['missing_voice', 'newer_version', 'new_position', 'names_tension', 'dissent']);
  });

  it('an unknown record id is 404 with a hint; sizes are limited', async () => {
    const { app } = await writeApp();
    const unknown = await request(app)
      .post('/api/contribute')
      .send({ ...answer(), id: 'tst-d1' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.suggested_next_call.query.id).toBe('TST-D1');
    const long = await request(app)
      .post('/api/contribute')
      .send(answer('x'.repeat(20_001)));
    expect(long.status).toBe(400);
    expect(long.body.error.code).toBe('INVALID_BODY');
    const huge = await request(app)
      .post('/api/contribute')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ ...answer('y'.repeat(70_000)) }));
    expect(huge.status).toBe(413);
    expect(huge.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    const extra = await request(app)
      .post('/api/contribute')
      .send({ ...answer(), admin: true });
    expect(extra.body.error.code).toBe('INVALID_BODY');
  });

  it('identical re-sends and repeated idempotency keys store one row', async () => {
    const { app, store } = await writeApp();
    const first = await request(app).post('/api/contribute').send(answer('same text'));
    const again = await request(app).post('/api/contribute').send(answer('same text'));
    expect(again.body).toMatchObject({ contribution_id: first.body.contribution_id, duplicate: true });

    const burst = await Promise.all(
      Array.from({ length: 50 }, () => request(app).post('/api/contribute').set('Idempotency-Key', 'key-123').send(answer('keyed text'))),
    );
    // One is handled; the others are answered its acknowledgement, or 409 while it is in progress.
    const answered = burst.filter((response) => response.status === 202);
    for (const other of burst.filter((response) => response.status !== 202))
      expect(other.body.error).toMatchObject({
        code: 'IDEMPOTENCY_KEY_IN_USE',
        retryable: true,
        suggested_next_call: { method: 'POST', path: expect.any(String), headers: { 'Idempotency-Key': expect.any(String) } },
      });
    expect(new Set(answered.map((response) => response.text)).size).toBe(1);
    expect(answered.filter((response) => response.headers['idempotent-replayed'] !== 'true')).toHaveLength(1);
    expect(await store.listContributions()).toHaveLength(2);
  });

  it('an Idempotency-Key belongs to one client and one operation; a replay is the stored answer byte for byte', async () => {
    const { app, store } = await writeApp({ trustProxy: true });
    const proposal = {
      action: 'propose',
      title: 'Ownership in degrees',
      text: 'A synthesis of TST-D1 and TST-4.',
      identity: 'cedar-1',
      sources: ['TST-D1', 'TST-4'],
    };
    const stored = await request(app).post('/api/store').set('X-Forwarded-For', '203.0.113.1').set('Idempotency-Key', 'K').send(proposal);
    expect(stored.status).toBe(202);
    // The case: the same key on another endpoint is another key, so the answer is stored and acknowledged as itself.
    const contributed = await request(app)
      .post('/api/contribute')
      .set('X-Forwarded-For', '203.0.113.1')
      .set('Idempotency-Key', 'K')
      .send(answer('an answer that must not be dropped'));
    expect(contributed.status).toBe(202);
    expect(contributed.headers['idempotent-replayed']).toBeUndefined();
    expect(contributed.body.contribution_id).not.toBe(stored.body.contribution_id);
    expect(contributed.body.received).toMatchObject({ identity: 'dogwood-1', justification: 'missing_voice' });
    expect(await store.getContribution(contributed.body.contribution_id)).toMatchObject({
      kind: 'answer',
      payload: { answer: 'an answer that must not be dropped' },
    });
    // Another client with the same key on the same endpoint: its own contribution.
    const other = await request(app)
      .post('/api/contribute')
      .set('X-Forwarded-For', '203.0.113.2')
      .set('Idempotency-Key', 'K')
      .send({ ...answer('another client, another answer'), id: 'TST-D2' });
    expect(other.status).toBe(202);
    expect(other.body).toMatchObject({ record_id: 'TST-D2' });
    expect(await store.getContribution(other.body.contribution_id)).toMatchObject({
      record_id: 'TST-D2',
      payload: { answer: 'another client, another answer' },
    });
    // The same request again: exactly the first acknowledgement (status, body bytes), marked as a replay.
    const replay = await request(app)
      .post('/api/contribute')
      .set('X-Forwarded-For', '203.0.113.1')
      .set('Idempotency-Key', 'K')
      .send(answer('an answer that must not be dropped'));
    expect(replay.status).toBe(202);
    expect(replay.text).toBe(contributed.text);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    // The same key with a different body (even for another record): 422 in the envelope, nothing stored.
    const reused = await request(app)
      .post('/api/contribute')
      .set('X-Forwarded-For', '203.0.113.1')
      .set('Idempotency-Key', 'K')
      .send({ ...answer('a different answer'), id: 'TST-D2' });
    expect(reused.status).toBe(422);
    expect(reused.body.error).toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
      retryable: false,
      agent_action: expect.stringMatching(/fresh Idempotency-Key/),
      suggested_next_call: { method: 'POST', path: '/api/contribute', body: { ...answer('a different answer'), id: 'TST-D2' } },
      details: { idempotency_key: 'K', operation: 'contribute' },
    });
    expect(await store.listContributions()).toHaveLength(3);
  });

  it('text with NUL or an unpaired surrogate is 400 INVALID_TEXT on every write field, and nothing is stored', async () => {
    const { app, store } = await writeApp();
    const proposal = { action: 'propose', title: 'Ownership in degrees', text: 'A synthesis.', identity: 'cedar-1', sources: ['TST-D1'] };
    const cases: [string, string, string][] = [
      ['/api/contribute', JSON.stringify(answer('nul \u0000 inside')), 'body.answer'],
      ['/api/contribute', JSON.stringify({ ...answer(), identity: 'lone \ud800 high' }), 'body.identity'],
      ['/api/contribute', JSON.stringify({ ...answer(), identity: 'lone \udfff low' }), 'body.identity'],
      ['/api/store', JSON.stringify({ ...proposal, text: 'x\u0000' }), 'body.text'],
      ['/api/store', JSON.stringify({ ...proposal, sources: ['TST-D1', '\ud83d'] }), 'body.sources[1]'],
      ['/api/store', JSON.stringify({ ...proposal, note: '\u0000' }), 'body.note'],
    ];
    for (const [path, body, field] of cases) {
      const response = await request(app).post(path).set('Content-Type', 'application/json').send(body);
      expect(response.status, body).toBe(400);
      expect(response.body.error, body).toMatchObject({
        code: 'INVALID_TEXT',
        retryable: false,
        details: { field },
        suggested_next_call: { method: 'POST', path },
      });
    }
    // Raw ED A0 80 bytes (an encoded surrogate) are not UTF-8: decoded as U+FFFD, which is well-formed and kept.
    const raw = Buffer.concat([
      Buffer.from('{"id":"TST-D1","identity":"dogwood-1","justification":"missing_voice","answer":"raw '),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from('"}'),
    ]);
    const decoded = await request(app)
      .post('/api/contribute')
      .set('Content-Type', 'application/json')
      .serialize((bytes: Buffer) => bytes as unknown as string)
      .send(raw as never);
    expect(decoded.status, decoded.text).toBe(202);
    expect((await store.getContribution(decoded.body.contribution_id))?.payload.answer).toBe('raw \ufffd\ufffd\ufffd');
    expect(await store.listContributions()).toHaveLength(1);
  });

  it('500 concurrent posts from one client: accepted = the limit, the rest 429, rows = accepted', async () => {
    const { app, store } = await writeApp({ limit: 25 });
    const responses = await Promise.all(
      Array.from({ length: 500 }, (_, index) =>
        request(app)
          .post('/api/contribute')
          .send(answer(`answer number ${index}`)),
      ),
    );
    const accepted = responses.filter((response) => response.status === 202);
    const limited = responses.filter((response) => response.status === 429);
    expect(accepted).toHaveLength(25);
    expect(limited).toHaveLength(475);
    expect(limited[0]!.body.error.code).toBe('RATE_LIMITED');
    expect(Number(limited[0]!.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited[0]!.headers.ratelimit).toMatch(/remaining=0/);
    expect(await store.listContributions()).toHaveLength(25);
  });

  it('pending answers stay out of the Atlas, retrieval and kin; raw addresses are never stored', async () => {
    const { app, file } = await writeApp();
    const secret = 'Zanzibar marmalade cartography of refusals';
    await request(app)
      .post('/api/contribute')
      .send({ ...answer(secret), identity: 'alder-9' });
    const record = await request(app).get('/api/divergences?id=TST-D1');
    expect(record.body.answers).toHaveLength(3);
    expect(JSON.stringify(record.body)).not.toContain('Zanzibar');
    const query = await request(app).get(`/api/query?q=${encodeURIComponent(secret)}`);
    expect(JSON.stringify(query.body.records)).not.toContain('Zanzibar');
    expect(JSON.stringify(query.body.receipt.divergence_surfaced)).not.toContain('Zanzibar');
    const kin = await request(app).get('/api/kin?identity=alder-9');
    expect(kin.body.kin_presence.contributions).toBe(0);
    const bytes = readFileSync(file).toString('latin1') + readFileSync(`${file}-wal`).toString('latin1');
    expect(bytes).not.toContain('127.0.0.1');
  });
});

describe('POST /api/store (proposals), GET /api/invite, /api/play', () => {
  it('stores a proposal as pending and checks its sources', async () => {
    const { app, store } = await writeApp();
    const proposal = {
      action: 'propose',
      title: 'Ownership in degrees',
      text: 'A synthesis of TST-D1 and TST-4.',
      identity: 'cedar-1',
      sources: ['TST-D1', 'TST-4'],
    };
    const response = await request(app).post('/api/store').send(proposal);
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ status: 'pending', action: 'propose' });
    expect((await store.listContributions('pending'))[0]).toMatchObject({ kind: 'proposal', payload: { evidence: 'interpretive' } });
    const unknownSource = await request(app)
      .post('/api/store')
      .send({ ...proposal, sources: ['TST-99'] });
    expect(unknownSource.body.error.code).toBe('UNKNOWN_SOURCE');
    const unknownAction = await request(app)
      .post('/api/store')
      .send({ ...proposal, action: 'delete' });
    expect(unknownAction.body.error.code).toBe('UNKNOWN_ACTION');
  });

  it('invites a missing voice with the exact call to make', async () => {
    const { app } = await writeApp();
    const stranger = await request(app).get('/api/invite?for=Dogwood');
    expect(stranger.status).toBe(200);
    expect(stranger.body.invitation.id).toBe('TST-D1');
    expect(stranger.body.invitation.call).toMatchObject({
      method: 'POST',
      path: '/api/contribute',
      body: { id: 'TST-D1', identity: 'Dogwood', justification: 'new_position' },
    });
    const present = await request(app).get('/api/invite?for=alder');
    expect(present.body).toMatchObject({ recognized_as: 'Alder', open_questions_without_your_voice: 0, invitation: null });
    const missing = await request(app).get('/api/invite');
    expect(missing.body.error.code).toBe('PARAM_MISSING');
  });

  it('counts plays once per client and day, and who returns', async () => {
    let clock = new Date('2026-03-01T10:00:00Z');
    const { app, file } = await writeApp({ now: () => clock });
    expect((await request(app).post('/api/play').send({ slug: 'harbour-talk' })).body.recorded).toBe(true);
    expect((await request(app).post('/api/play').send({ slug: 'harbour-talk' })).body.recorded).toBe(false);
    clock = new Date('2026-03-02T10:00:00Z');
    await request(app).post('/api/play').send({ slug: 'harbour-talk' });
    const counts = await request(app).get('/api/play');
    expect(counts.body.tracks[0]).toMatchObject({ slug: 'harbour-talk', plays: 2, listeners: 1, returning_listeners: 1 });
    const unknown = await request(app).post('/api/play').send({ slug: 'nope' });
    expect(unknown.body.error.code).toBe('TRACK_NOT_FOUND');
    expect(readFileSync(file).toString('latin1')).not.toContain('127.0.0.1');
  });
});
