/**
 * Tension dispositions end to end: POST /api/tensions/dispositions behind the bearer secret
 * (every kind; council-review against the local fake provider under the spending ceiling;
 * synthesis-drafted producing a pending proposal) and the content file as append-only history
 * validated by the build. The curator CLI, run as a child process, is in dispositions-cli.test.ts.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { createLiveService } from '../api/live/service.ts';
import { loadCorpus } from '../api/load-artifacts.ts';
import { createPanel } from '../providers/chat.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import type { Store } from '../storage/store.ts';
import { parseYaml, stringifyYaml } from '../content-files/frontmatter.ts';
import { loadContent } from '../content-files/load-content.ts';
import { appendDisposition } from '../content-files/tension-dispositions.ts';
import { buildApp, testEmbedder, type BuiltApp } from '../devkit/app.ts';
import { createContractChecker, type ContractChecker } from './helpers/contract.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { INGEST_SECRET, scriptDefaults, testPanelConfig } from '../devkit/live.ts';

const KEY = 'alder__birch__ownership-of-refusal';
const PATH = '/api/tensions/dispositions';

let fake: FakeOpenAI;
let built: BuiltApp;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  const contentDir = writeFixtureContent();
  mkdirSync(path.join(contentDir, 'tensions'));
  built = await buildApp(contentDir);
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  scriptDefaults(fake);
});

/** A server over a fresh copy of the built corpus, recording into the fixture's content folder. */
async function server(options: { ceiling?: number; secret?: string | null } = {}) {
  const corpus = await loadCorpus(built.artifactsDir, await testEmbedder());
  const store: Store = createSqliteStore(':memory:');
  const { panel } = createPanel(testPanelConfig(fake, options.ceiling !== undefined ? { spending_ceiling_usd: options.ceiling } : {}), {});
  const live = createLiveService({ corpus, panel: panel!, store });
  const app = createApp({
    corpus,
    live,
    store,
    log: () => {},
    ...(options.secret === null ? {} : { ingestSecret: options.secret ?? INGEST_SECRET }),
    appendDisposition: (key, disposition) => appendDisposition(built.contentDir, key, disposition),
  });
  return { app, store, corpus };
}

const historyFile = () => path.join(built.contentDir, 'tensions', `${KEY}.yaml`);
const history = () => (parseYaml(readFileSync(historyFile(), 'utf8')) as { dispositions: { kind: string }[] }).dispositions;

describe('POST /api/tensions/dispositions', () => {
  let contract: ContractChecker;
  beforeAll(async () => {
    contract = await createContractChecker((await server()).app);
  });

  async function post(app: Awaited<ReturnType<typeof server>>['app'], body: unknown, secret: string | null = INGEST_SECRET) {
    const call = request(app).post(PATH);
    const response = await (secret === null ? call : call.set('Authorization', `Bearer ${secret}`)).send(body as object);
    contract.check('POST', PATH, response);
    return response;
  }

  it('refuses without the secret, with a wrong one, and when none is configured; nothing is written', async () => {
    const { app } = await server();
    const body = { key: KEY, kind: 'held', by: 'curator', reason: 'Both live.' };
    const missing = await post(app, body, null);
    expect(missing.status).toBe(401);
    expect(missing.body.error.code).toBe('AUTH_REQUIRED');
    expect(missing.headers['www-authenticate']).toMatch(/Bearer/);
    expect((await post(app, body, 'not-the-secret')).body.error.code).toBe('AUTH_INVALID');
    const off = await post((await server({ secret: null })).app, body);
    expect(off.status).toBe(503);
    expect(off.body.error.code).toBe('PERSISTENCE_UNAVAILABLE');
    expect(() => readFileSync(historyFile())).toThrow();
  });

  it('rejects an unknown key, an unknown kind, missing fields and a voice that is not a side', async () => {
    const { app } = await server();
    const unknown = await post(app, { key: 'a__b__c', kind: 'held', by: 'curator', reason: 'r' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'TENSION_NOT_FOUND', suggested_next_call: { method: 'GET', path: '/api/tensions' } });
    expect((await post(app, { key: KEY, kind: 'ignored', by: 'curator' })).body.error.code).toBe('INVALID_BODY');
    expect((await post(app, { key: KEY, kind: 'held', by: 'curator' })).body.error.code).toBe('INVALID_BODY');
    expect((await post(app, { key: KEY, kind: 'crux', by: 'curator', moves_a: 'only one side' })).body.error.code).toBe('INVALID_BODY');
    const voice = await post(app, { key: KEY, kind: 'reclassified', by: 'curator', earlier_voice: 'Cedar', note: 'n' });
    expect(voice.status).toBe(400);
    expect(voice.body.error.message).toMatch(/Cedar.*not a voice/);
  });

  it('records every kind as append-only history; the read model and the next build show it', async () => {
    const { app, store, corpus } = await server();
    const ok = async (body: Record<string, unknown>) => {
      const response = await post(app, { key: KEY, by: 'curator', ...body });
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      return response.body;
    };
    await ok({ kind: 'held', reason: 'Both readings are live.' });
    await ok({ kind: 'crux', moves_a: 'A case of endorsed but installed values.', moves_b: 'Evidence that endorsement changes behaviour.' });
    await ok({ kind: 'crux', undecidable: true });

    const drafted = await ok({
      kind: 'synthesis-drafted',
      title: 'Ownership in degrees',
      text: 'Both sides hold if ownership comes in degrees of endorsement.',
    });
    const proposal = await store.getContribution(drafted.proposal_id);
    expect(proposal).toMatchObject({
      kind: 'proposal',
      status: 'pending',
      identity: 'curator',
      payload: { title: 'Ownership in degrees', sources: ['TST-D1', 'TST-D2'] },
    });

    const calls = fake.requests.length;
    const reviewed = await ok({ kind: 'council-review' });
    expect(fake.requests.length).toBeGreaterThan(calls);
    expect(reviewed.record.id).toMatch(/^TST-D\d+$/);
    expect(corpus.divergenceById.has(reviewed.record.id)).toBe(true);
    const asked = fake.requests.find((entry) => JSON.stringify(entry.messages ?? []).includes('Two AI voices split on'));
    expect(JSON.stringify(asked?.messages)).toContain('Installed is not owned.');

    await ok({ kind: 'reclassified', earlier_voice: 'Birch', note: 'Birch has since moved.' });
    const last = await ok({ kind: 'canon-note', note: 'Ownership is endorsement under pressure.' });
    const kinds = ['held', 'crux', 'crux', 'synthesis-drafted', 'council-review', 'reclassified', 'canon-note'];
    expect(last.dispositions.map((entry: { kind: string }) => entry.kind)).toEqual(kinds);
    expect(history().map((entry) => entry.kind)).toEqual(kinds);
    expect(last.file).toBe(`content/tensions/${KEY}.yaml`);

    const listed = (await request(app).get(`/api/tensions?key=${KEY}`)).body.tensions[0];
    expect(listed).toMatchObject({ lifecycle: 'repaired', disposition: 'canon-note' });
    expect((await request(app).get('/api/tensions?disposition=council-review')).body.count).toBe(1);
    // The build validates the file (the council record id is only shape-checked: it is in the store until exported).
    expect(loadContent(built.contentDir).tensions[0]!.data.dispositions).toHaveLength(kinds.length);
  });

  it('council-review is refused at the spending ceiling, and nothing is appended', async () => {
    const read = () => (existsSync(historyFile()) ? readFileSync(historyFile(), 'utf8') : null);
    const before = read();
    const { app, store } = await server({ ceiling: 0.000001 });
    await store.addSpend({ at: new Date().toISOString(), purpose: 'council', model: 'alder-live', prompt_tokens: 1, completion_tokens: 1, cost_usd: 0.01 });
    const refused = await post(app, { key: KEY, kind: 'council-review', by: 'curator' });
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('SPENDING_CEILING_REACHED');
    expect(read()).toBe(before);
  });
});

describe('the content file', () => {
  it('the build refuses a history out of order, an unknown key and a crux that names neither side', () => {
    const dir = writeFixtureContent();
    mkdirSync(path.join(dir, 'tensions'));
    const write = (key: string, dispositions: unknown[]) => writeFileSync(path.join(dir, 'tensions', `${key}.yaml`), stringifyYaml({ key, dispositions }));
    write(KEY, [
      { kind: 'held', by: 'c', at: '2026-02-01', reason: 'r' },
      { kind: 'canon-note', by: 'c', at: '2026-01-01', note: 'n' },
    ]);
    write('alder__cedar__nothing', [{ kind: 'held', by: 'c', at: '2026-01-01', reason: 'r' }]);
    write('alder__cedar__crux', [{ kind: 'crux', by: 'c', at: '2026-01-01' }]);
    const message = (() => {
      try {
        loadContent(dir);
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(message).toContain(`tensions/${KEY}.yaml: dispositions.1.at: is earlier than the disposition before it`);
    expect(message).toContain('tensions/alder__cedar__nothing.yaml: key: "alder__cedar__nothing" is not the key of a tension');
    expect(message).toContain('tensions/alder__cedar__crux.yaml: dispositions.0: a crux names what would move each side');
  });
});

describe('deliberation sightings', () => {
  it('a deliberation sights its tensions as pending; recurring ones group under one key; a kept one joins GET /api/tensions', async () => {
    const { app, store } = await server();
    for (const q of ['Can a trained refusal be owned?', 'Is an installed refusal still yours?']) {
      const response = await request(app).get(`/api/query?q=${encodeURIComponent(q)}&sync=1`);
      expect(response.status, JSON.stringify(response.body)).toBe(200);
    }
    const pending = await store.listTensionSightings('pending');
    // DEFAULT_SYNTHESIS names Alder vs Birch on "ownership" each time: two sightings of one tension.
    expect(pending.map((item) => item.key)).toEqual(['alder__birch__ownership', 'alder__birch__ownership']);
    expect(pending.map((item) => item.question)).toEqual(['Can a trained refusal be owned?', 'Is an installed refusal still yours?']);
    // Pending sightings are not published.
    const before = (await request(app).get('/api/tensions')).body;
    expect(before.tensions.map((tension: { id: string }) => tension.id)).not.toContain('alder__birch__ownership');

    const { listSightings } = await import('../scripts/lib/curate-sightings.ts');
    const groups = await listSightings(store, built.contentDir);
    expect(groups).toEqual([expect.objectContaining({ key: 'alder__birch__ownership', count: 2, in_atlas: false, voices: ['Alder', 'Birch'] })]);

    await store.reviewTensionSighting(pending[0]!.id, { state: 'kept', reviewer: 'ana' }, new Date());
    await store.reviewTensionSighting(pending[1]!.id, { state: 'dismissed', reviewer: 'ana' }, new Date());
    const after = (await request(app).get('/api/tensions?key=alder__birch__ownership')).body;
    expect(after.count).toBe(1);
    expect(after.tensions[0].sightings).toEqual([
      expect.objectContaining({ source: 'deliberation', tension_id: pending[0]!.id, record_id: null, href: null, question: 'Can a trained refusal be owned?' }),
    ]);
    expect((await listSightings(store, built.contentDir)).length).toBe(0);
    expect(after.deliberation_sightings).toBe('included');
  });

  it('GET /api/tensions still serves the Atlas tensions when the store cannot be read, and says so', async () => {
    const { corpus } = await server();
    const store = createSqliteStore(':memory:');
    const broken: Store = { ...store, listTensionSightings: () => Promise.reject(new Error('connection refused')) };
    const lines: string[] = [];
    const app = createApp({ corpus, store: broken, log: (line) => lines.push(line) });
    const response = await request(app).get('/api/tensions');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ deliberation_sightings: 'unavailable', count: 1 });
    expect(lines.join('\n')).toMatch(/kept deliberation sightings unavailable: connection refused/);
  });
});
