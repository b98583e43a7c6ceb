/**
 * Found by the issue-26 fuzz on both drivers: a disposition of a tension sighted only in a
 * persisted council record (kept in the store, not yet in the content folder) failed the content
 * validation of the append and answered 500. It is 404 TENSION_NOT_FOUND, saying why, and
 * nothing is written.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendDisposition } from '../content-files/tension-dispositions.ts';
import { trackedTensions } from '../api/routes/tracked-tensions.ts';
import { buildApp, type BuiltApp } from '../devkit/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { createLiveApp, INGEST_SECRET, scriptDefaults, testPanelConfig } from '../devkit/live.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';

let built: BuiltApp;
let fake: FakeOpenAI;
let contentDir: string;
const logged: string[] = [];

beforeAll(async () => {
  contentDir = writeFixtureContent();
  [built, fake] = await Promise.all([buildApp(contentDir), startFakeOpenAI()]);
  scriptDefaults(fake);
});
afterAll(async () => {
  await fake?.close();
});

describe('a disposition of a tension sighted only in a persisted council', () => {
  it('is 404 TENSION_NOT_FOUND naming the reason, not a 500, and writes nothing', async () => {
    const { app } = createLiveApp(built.corpus, createSqliteStore(':memory:'), testPanelConfig(fake), undefined, undefined, {
      log: (line) => logged.push(line),
      appendDisposition: (key, disposition) => appendDisposition(contentDir, key, disposition),
    });
    const before = new Set(trackedTensions(built.corpus).map((tension) => tension.id));
    const council = await request(app)
      .post('/api/council')
      .set('Authorization', `Bearer ${INGEST_SECRET}`)
      .send({ q: 'Who owns a refusal that came from training?', persist: true });
    expect(council.status).toBe(201);
    const fresh = trackedTensions(built.corpus)
      .map((tension) => tension.id)
      .filter((id) => !before.has(id));
    expect(fresh.length, 'the persisted council brought a tension of its own').toBeGreaterThan(0);

    const response = await request(app)
      .post('/api/tensions/dispositions')
      .set('Authorization', `Bearer ${INGEST_SECRET}`)
      .send({ kind: 'held', key: fresh[0], by: 'Ada', reason: 'Both readings hold.' });
    expect(response.status, response.text).toBe(404);
    expect(response.body.error).toMatchObject({ code: 'TENSION_NOT_FOUND', suggested_next_call: { method: 'GET', path: '/api/tensions' } });
    expect(response.body.error.message).toMatch(/persisted councils/);
    expect(response.body.error.agent_action).toMatch(/export:records/);
    expect(existsSync(path.join(contentDir, 'tensions', `${fresh[0]}.yaml`))).toBe(false);
    expect(logged.filter((line) => line.includes('INTERNAL_ERROR'))).toEqual([]);
  });
});
