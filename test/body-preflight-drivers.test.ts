/**
 * Issue 26's reproduction on both store drivers: a NUL in identity and 5,000 nested arrays in an
 * unknown field answer 400 BODY_TOO_DEEP on SQLite and PostgreSQL alike (the preflight refuses
 * before any store is reached), and the same body without the nesting 400 INVALID_TEXT.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Express } from 'express';
import { createApp } from '../api/app.ts';
import { buildApp, type BuiltApp } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import type { Store } from '../storage/store.ts';
import { writeStoreDrivers } from './helpers/write-stores.ts';

const DEEP = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;
const REPRODUCTION = `{"id":"TST-D1","answer":"x","identity":"a \\u0000 b","justification":"dissent","extra":${DEEP}}`;
const SHALLOW = `{"id":"TST-D1","answer":"x","identity":"a \\u0000 b","justification":"dissent"}`;

const { drivers, stop } = writeStoreDrivers();
let built: BuiltApp;

beforeAll(async () => {
  built = await buildApp(writeFixtureContent());
}, 120_000);
afterAll(async () => {
  await stop();
});

for (const driver of drivers) {
  describe.skipIf(!driver.available)(`on ${driver.name}`, () => {
    let store: Store;
    let app: Express;
    const logged: string[] = [];
    beforeAll(async () => {
      store = await driver.open();
      app = createApp({ corpus: built.corpus, store, log: (line) => logged.push(line) });
    }, 120_000);
    afterAll(async () => {
      await store?.close();
    });

    it.each(['/api/contribute', '/api/store', '/api/council', '/api/query'])('%s: the reproduction is 400 BODY_TOO_DEEP', async (path) => {
      const response = await request(app).post(path).set('Content-Type', 'application/json').send(REPRODUCTION);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('BODY_TOO_DEEP');
    });

    it('/api/store with Idempotency-Key twice: 400 BODY_TOO_DEEP', async () => {
      const response = await request(app)
        .post('/api/store')
        .set('Content-Type', 'application/json')
        .set('Idempotency-Key', ['k-1', 'k-1'] as unknown as string)
        .send(REPRODUCTION);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('BODY_TOO_DEEP');
    });

    it('without the nesting: 400 INVALID_TEXT naming the field, nothing stored', async () => {
      const response = await request(app).post('/api/contribute').set('Content-Type', 'application/json').send(SHALLOW);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_TEXT', details: { field: 'body.identity', problem: 'nul' } });
      expect(await store.listContributions()).toEqual([]);
      expect(logged.filter((line) => line.includes('INTERNAL_ERROR'))).toEqual([]);
    });
  });
}
