/**
 * Issue 14's limits (deadlines, ceiling by reservation, cost, truncation, cancellation) held
 * together with the progress stages and the council kept by council_id, against the local
 * fake provider.
 */
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadCorpus } from '../api/load-artifacts.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import { buildApp, testEmbedder, type BuiltApp } from '../devkit/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { createLiveApp, INGEST_SECRET, PANEL, scriptDefaults, testPanelConfig } from '../devkit/live.ts';

type Json = Record<string, unknown>;
let fake: FakeOpenAI;
let built: BuiltApp;
const panelIds = PANEL.map((name) => `${name.toLowerCase()}-live`);

beforeAll(async () => {
  fake = await startFakeOpenAI();
  built = await buildApp(writeFixtureContent());
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  scriptDefaults(fake);
});

async function liveApp(overrides: Parameters<typeof testPanelConfig>[1] = {}) {
  const store = createSqliteStore(':memory:');
  const corpus = await loadCorpus(built.artifactsDir, await testEmbedder());
  return { ...createLiveApp(corpus, store, testPanelConfig(fake, overrides)), store };
}

async function eventually(condition: () => boolean | Promise<boolean>, limitMs = 10_000): Promise<boolean> {
  for (let waited = 0; waited < limitMs; waited += 20) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return condition();
}

const voiceStages = (stages: Json[]) => stages.filter((stage) => stage.stage === 'voice');

describe('job stages under the limits of issue 14', () => {
  it('record a voice failing by the run deadline and by truncation', async () => {
    fake.setDefault('alder-live', { kind: 'hang' });
    fake.script('birch-live', [{ kind: 'answer', content: '', finishReason: 'length' }]);
    const { app, live } = await liveApp({
      defaults: { timeout_ms: 60_000, max_retries: 0, max_tokens: 400, retry_truncated: false, deliberation_deadline_ms: 300 },
    });
    const submitted = await request(app).get('/api/council?q=Who%20fails%3F&async=1');
    await live.runner.idle();
    const done = (await request(app).get(submitted.body.poll_url)).body as Json & { stages: Json[] };
    expect(voiceStages(done.stages)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'Alder', status: 'failed', failure: 'deadline' }),
        expect.objectContaining({ name: 'Birch', status: 'failed', failure: 'truncated' }),
        expect.objectContaining({ name: 'Cedar', status: 'answered', truncated: false }),
      ]),
    );
  });

  it('record every voice refused by the spending ceiling, and the job fails as the ceiling', async () => {
    const { app, live, store } = await liveApp({ spending_ceiling_usd: 0.000001 });
    const submitted = await request(app).get('/api/council?q=Too%20dear%3F&async=1');
    expect(submitted.status).toBe(202);
    await live.runner.idle();
    const done = (await request(app).get(submitted.body.poll_url)).body as Json & { stages: Json[] };
    expect(done).toMatchObject({ status: 'failed', error: { code: 'SPENDING_CEILING_REACHED' } });
    expect(voiceStages(done.stages).map((stage) => stage.failure)).toEqual(['spending_ceiling', 'spending_ceiling', 'spending_ceiling']);
    expect(fake.requests).toHaveLength(0);
    expect((await store.spendStatus(new Date())).reserved_usd).toBe(0);
  });

  it('stop when the job is cancelled: no voice aborted by the cancel, no chair', async () => {
    fake.setDefault('birch-live', { kind: 'hang' });
    fake.setDefault('cedar-live', { kind: 'hang' });
    const { app, live } = await liveApp({ defaults: { timeout_ms: 60_000, max_retries: 0, max_tokens: 400 } });
    const submitted = await request(app).get('/api/council?q=Stop%20here&async=1');
    expect(await eventually(async () => voiceStages((await request(app).get(submitted.body.poll_url)).body.stages).length === 1)).toBe(true);
    expect((await request(app).post(submitted.body.cancel_url)).body.status).toBe('cancelled');
    await live.runner.idle();
    const after = (await request(app).get(submitted.body.poll_url)).body as Json & { stages: Json[] };
    expect(after.status).toBe('cancelled');
    // Before the merge fix, the aborted Birch and Cedar were stored as failed voices after the cancel.
    expect(after.stages.map((stage) => `${String(stage.stage)}:${String(stage.name ?? stage.status)}:${String(stage.status)}`)).toEqual([
      'voice:Alder:answered',
    ]);
    expect(fake.counts('chair-live')).toBe(0);
  });
});

describe('a council kept by council_id', () => {
  it('persists with its cost block and truncated markers exactly as shown, with no call and no reservation', async () => {
    fake.script('alder-live', [{ kind: 'answer', content: 'Alder is cut', finishReason: 'length' }]);
    const { app, store } = await liveApp({ defaults: { timeout_ms: 2000, max_retries: 0, max_tokens: 400, retry_truncated: false } });
    const shown = (await request(app).get('/api/council?q=Kept%20as%20shown%3F')).body as Json & { panel: Json[]; cost: Json };
    expect(shown.panel[0]).toMatchObject({ model: 'Alder', truncated: true });
    expect((shown.cost as { calls: number }).calls).toBe(4);
    const callsBefore = fake.requests.length;
    const spendBefore = await store.spendStatus(new Date());
    const kept = await request(app).post('/api/council').set('Authorization', `Bearer ${INGEST_SECRET}`).send({ council_id: shown.council_id, persist: true });
    expect(kept.status).toBe(201);
    const { persisted, ...again } = kept.body as Json;
    expect(again).toEqual(shown);
    expect(fake.requests.length).toBe(callsBefore);
    expect(await store.spendStatus(new Date())).toEqual(spendBefore);
    const record = await request(app).get((persisted as { href: string }).href);
    expect(record.body.answers[0]).toMatchObject({ model: 'Alder', text: 'Alder is cut', truncated: true });
    expect(panelIds.every((model) => fake.counts(model) === 1)).toBe(true);
  });
});
