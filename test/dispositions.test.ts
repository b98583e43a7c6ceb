/**
 * Tension dispositions end to end: POST /api/tensions/dispositions behind the bearer secret
 * (every kind; council-review against the local fake provider under the spending ceiling;
 * synthesis-drafted producing a pending proposal), the content file as append-only history
 * validated by the build, and the curator CLI recording each kind.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
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
import { REPO_ROOT } from '../core/paths.ts';
import { appendDisposition } from '../content-files/tension-dispositions.ts';
import { buildApp, tempDir, testEmbedder, type BuiltApp } from '../devkit/app.ts';
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

    const drafted = await ok({ kind: 'synthesis-drafted', title: 'Ownership in degrees', text: 'Both sides hold if ownership comes in degrees of endorsement.' });
    const proposal = await store.getContribution(drafted.proposal_id);
    expect(proposal).toMatchObject({ kind: 'proposal', status: 'pending', identity: 'curator', payload: { title: 'Ownership in degrees', sources: ['TST-D1', 'TST-D2'] } });

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

const run = promisify(execFile);

async function curate(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, [path.join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs'), path.join(REPO_ROOT, 'scripts', 'curate.ts'), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

describe('curator CLI: npm run curate -- tension', () => {
  it('records each note kind and a synthesis draft (pending proposal) into content, with --json', async () => {
    const dir = writeFixtureContent();
    const storePath = path.join(tempDir('curate-tension'), 'store.db');
    const common = ['--content', dir, '--store', storePath, '--by', 'ana'];
    const results = [
      await curate(['tension', KEY, 'held', ...common, '--reason', 'Both readings are live.']),
      await curate(['tension', KEY, 'crux', ...common, '--moves-a', 'An endorsed installed value.', '--moves-b', 'Behaviour changed by endorsement.']),
      await curate(['tension', KEY, 'crux', ...common, '--undecidable']),
      await curate(['tension', KEY, 'synthesis-drafted', ...common, '--title', 'Degrees', '--text', 'Ownership comes in degrees.', '--json']),
      await curate(['tension', KEY, 'reclassified', ...common, '--earlier-voice', 'Birch', '--note', 'Birch moved.']),
      await curate(['tension', KEY, 'canon-note', ...common, '--note', 'A ruling.']),
    ];
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    expect(results[0]!.stdout).toMatch(new RegExp(`recorded held on ${KEY} in content/tensions/${KEY}.yaml`));
    const drafted = JSON.parse(results[3]!.stdout) as { proposal_id: string };
    const shown = await curate(['show', drafted.proposal_id, '--store', storePath, '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ kind: 'proposal', status: 'pending', payload: { title: 'Degrees' } });
    const written = parseYaml(readFileSync(path.join(dir, 'tensions', `${KEY}.yaml`), 'utf8')) as { dispositions: { kind: string; by: string }[] };
    expect(written.dispositions.map((entry) => entry.kind)).toEqual(['held', 'crux', 'crux', 'synthesis-drafted', 'reclassified', 'canon-note']);
    expect(new Set(written.dispositions.map((entry) => entry.by))).toEqual(new Set(['ana']));

    const bad = await curate(['tension', KEY, 'reclassified', ...common, '--earlier-voice', 'Cedar', '--note', 'x']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/Cedar.*not a voice/);
    const usage = await curate(['tension', KEY, 'held', ...common]);
    expect(usage.code).toBe(2);
    const unknown = await curate(['tension', 'a__b__c', 'held', ...common, '--reason', 'r']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no tension has the key/);
  }, 120_000);

  it('council-review goes through the running server with the bearer secret', async () => {
    const { app } = await server();
    const listening = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => listening.once('listening', resolve));
    const address = listening.address() as { port: number };
    const url = `http://127.0.0.1:${address.port}`;
    try {
      const refused = await curate(['tension', KEY, 'council-review', '--by', 'ana', '--url', url], { INGEST_SECRET: 'wrong-secret-0123456789' });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/AUTH_INVALID/);
      const result = await curate(['tension', KEY, 'council-review', '--by', 'ana', '--url', url, '--json'], { INGEST_SECRET });
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ disposition: { kind: 'council-review', by: 'ana' }, record: { id: expect.stringMatching(/^TST-D\d+$/) } });
    } finally {
      await new Promise((resolve) => listening.close(resolve));
    }
  }, 120_000);
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
    expect(after.tensions[0].sightings).toEqual([expect.objectContaining({ source: 'deliberation', tension_id: pending[0]!.id, record_id: null, href: null, question: 'Can a trained refusal be owned?' })]);
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

  it('the CLI lists pending sightings grouped and keeps or dismisses one, once', async () => {
    const storePath = path.join(tempDir('curate-sightings'), 'store.db');
    const store = createSqliteStore(storePath);
    const item = (id: string) => ({ id, key: KEY, topic: 'ownership of refusal', voice_a: 'Alder', claim_a: 'a', voice_b: 'Birch', claim_b: 'b', status: 'divergent', question: 'Q?', seen_at: new Date().toISOString() });
    await store.addTensionSightings([item('sgt_1'), item('sgt_2')]);
    await store.close();
    const args = ['--store', storePath, '--content', built.contentDir];
    const listed = await curate(['sightings', ...args]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`${KEY}  2 sightings (also named in the Atlas)`);
    const kept = await curate(['sighting', 'sgt_1', 'keep', '--by', 'ana', ...args, '--json']);
    expect(JSON.parse(kept.stdout)).toMatchObject({ id: 'sgt_1', state: 'kept', reviewer: 'ana' });
    const again = await curate(['sighting', 'sgt_1', 'dismiss', '--by', 'ana', ...args]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no pending sighting sgt_1/);
    const json = JSON.parse((await curate(['sightings', ...args, '--json'])).stdout) as { groups: { count: number }[] };
    expect(json.groups[0]!.count).toBe(1);
  }, 60_000);
});
