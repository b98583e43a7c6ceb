/**
 * Issue 45 part 4, the last of it: a pull after the first asks the peer's signed manifest for
 * what changed since the revision it last accepted (?since=), and the peer, holding that
 * revision in its git history, signs a manifest of only those records. A real git repository
 * (test/helpers/git-repo.ts) built twice, served by one node key over loopback; the puller is
 * the operator's pull, as `npm run federate -- pull` runs it. A peer that ignores since (an older
 * engine), one that does not hold the revision, and one that answers a since not asked are met too.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { FederationError } from '../api/federation/errors.ts';
import { createFetcher } from '../api/federation/fetch.ts';
import { keyFromFile } from '../api/federation/keys.ts';
import { signManifest } from '../api/federation/protocol.ts';
import { pullFromPeer } from '../api/federation/pull.ts';
import { loadCorpus } from '../api/load-artifacts.ts';
import { tempDir } from '../devkit/app.ts';
import { createHashedEmbedder } from '../devkit/hashed-embedder.ts';
import type { ChangesDelta } from '../schemas/api/changes.ts';
import type { FederationManifest } from '../schemas/federation.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import type { Store } from '../storage/store.ts';
import { createTestRepo, type TestRepo } from './helpers/git-repo.ts';
import { buildHistory, D1, D9, newRecordFrom } from './helpers/history-builds.ts';

type Mode = 'honest' | 'ignores-since' | 'answers-another-since';

let repo: TestRepo;
let first: { app: Express; rev: string };
let last: { app: Express; rev: string };
let keyFile: string;
const peer: { app: Express | undefined; mode: Mode; requests: string[] } = { app: undefined, mode: 'honest', requests: [] };
let server: http.Server;
let base: string;
const stores: Store[] = [];

async function federatedBuild(contentDir: string): Promise<{ app: Express; rev: string }> {
  const built = await buildHistory(contentDir);
  const corpus = await loadCorpus(built.artifactsDir, createHashedEmbedder());
  return { app: createApp({ corpus, log: () => {}, federation: { keyFile } }), rev: built.rev };
}

beforeAll(async () => {
  keyFile = path.join(tempDir('federation-since'), 'key.pem');
  repo = createTestRepo();
  first = await federatedBuild(repo.content);
  repo.write(D9, newRecordFrom(repo.read(D1)));
  repo.commit('Add TST-D9');
  repo.edit(D1, (text) => text.replace('tier: C3', 'tier: C1'));
  repo.commit('TST-D1: tier C1');
  last = await federatedBuild(repo.content);
  server = http.createServer((req, res) => {
    peer.requests.push(req.url!);
    const url = new URL(req.url!, 'http://peer.test');
    if (peer.mode === 'ignores-since' && url.pathname.startsWith('/federation/')) req.url = url.pathname;
    if (peer.mode === 'answers-another-since' && url.pathname === '/federation/manifest.json' && url.searchParams.has('since')) {
      // Validly signed by the node's own key, but listing the changes since a revision the pull did not ask.
      void request(peer.app!)
        .get(`/federation/manifest.json?since=${first.rev}`)
        .set('host', req.headers.host!)
        .then((answer) => {
          const manifest = { ...(answer.body as FederationManifest), since: last.rev };
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify(manifest));
        });
      return;
    }
    if (peer.mode === 'answers-another-since' && url.pathname === '/federation/manifest.sig' && url.searchParams.has('since')) {
      void request(peer.app!)
        .get(`/federation/manifest.json?since=${first.rev}`)
        .set('host', req.headers.host!)
        .then((answer) => {
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify(signManifest(keyFromFile(keyFile), { ...(answer.body as FederationManifest), since: last.rev })));
        });
      return;
    }
    peer.app!(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 300_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  for (const store of stores) await store.close();
  repo?.dispose();
});

function newStore(): Store {
  const store = createSqliteStore(':memory:');
  stores.push(store);
  return store;
}

const pull = (store: Store) =>
  pullFromPeer(base, {
    store,
    fetch: createFetcher({ allowPrivate: true, timeoutMs: 10_000 }),
    localPrefix: 'BBB',
    maxRecords: 100,
    maxBytes: 5_000_000,
    now: () => new Date(),
  });

/** Pulls from a peer serving `app` in `mode`, with the requests it received. */
async function pullFrom(store: Store, app: Express, mode: Mode = 'honest') {
  Object.assign(peer, { app, mode, requests: [] });
  const report = await pull(store);
  return { report, requests: [...peer.requests] };
}

const records = (requests: string[]) => requests.filter((url) => url.startsWith('/records/')).sort();
const manifests = (requests: string[]) => requests.filter((url) => url.startsWith('/federation/'));

describe('a pull after the first asks what changed since the revision it accepted', () => {
  it('lists, fetches and stages only the records the peer changed since then; up to date, nothing', async () => {
    const store = newStore();
    const full = await pullFrom(store, first.app);
    expect(manifests(full.requests)).toEqual(['/federation/manifest.json', '/federation/manifest.sig']);
    expect(full.report).toMatchObject({ since: null, corpus_rev: first.rev, unchanged: 0 });
    const everyRecord = full.report.staged.map((item) => item.record_id).sort();
    expect(full.report.listed).toBe(everyRecord.length);
    expect((await store.getPeer(new URL(base).origin))?.last_corpus_rev).toBe(first.rev);

    // The peer's own account of what changed, as any reader gets it.
    const delta = (await request(last.app).get(`/api/changes?since=${first.rev}`)).body as ChangesDelta;
    const changedIds = [...delta.added, ...delta.changed]
      .filter((change) => change.kind === 'divergence')
      .map((change) => change.id)
      .sort();
    expect(changedIds).toEqual(['TST-D1', 'TST-D9']);
    // at least one record the peer held at the first revision did not change
    expect(everyRecord.filter((id) => !changedIds.includes(id)).length).toBeGreaterThan(0);

    const next = await pullFrom(store, last.app);
    expect(manifests(next.requests)).toEqual([`/federation/manifest.json?since=${first.rev}`, `/federation/manifest.sig?since=${first.rev}`]);
    expect(next.report).toMatchObject({ since: first.rev, corpus_rev: last.rev, listed: 2, unchanged: 0 });
    expect(next.report.staged.map((item) => item.record_id).sort()).toEqual(changedIds);
    expect(records(next.requests)).toEqual(changedIds.map((id) => `/records/${id}.md`));
    expect((await store.getPeer(new URL(base).origin))?.last_corpus_rev).toBe(last.rev);
    const imports = await store.listImports();
    expect(imports.filter((item) => item.record_id === 'TST-D1').map((item) => item.status)).toEqual(['superseded', 'pending']);
    expect(imports.find((item) => item.record_id === 'TST-D1' && item.status === 'pending')?.markdown).toContain('tier: C1');

    const upToDate = await pullFrom(store, last.app);
    expect(manifests(upToDate.requests)).toEqual([`/federation/manifest.json?since=${last.rev}`, `/federation/manifest.sig?since=${last.rev}`]);
    expect(upToDate.report).toMatchObject({ since: last.rev, corpus_rev: last.rev, listed: 0, unchanged: 0, staged: [] });
    expect(records(upToDate.requests)).toEqual([]);
  });

  it('from a peer that ignores since (an older engine), the whole manifest: the same records staged', async () => {
    const store = newStore();
    await pullFrom(store, first.app);
    const next = await pullFrom(store, last.app, 'ignores-since');
    expect(manifests(next.requests)[0]).toBe(`/federation/manifest.json?since=${first.rev}`);
    expect(next.report.since).toBeNull();
    expect(next.report.listed).toBe((await store.listImports()).filter((item) => item.status !== 'superseded').length);
    expect(next.report.unchanged).toBe(next.report.listed - 2);
    expect(next.report.staged.map((item) => item.record_id).sort()).toEqual(['TST-D1', 'TST-D9']);
  });

  it('a revision the peer does not hold gets the whole manifest, not a guess', async () => {
    const store = newStore();
    await pullFrom(store, first.app);
    const origin = new URL(base).origin;
    const known = (await store.getPeer(origin))!;
    await store.stageImports({ ...known, last_corpus_rev: 'ffffffffffffffff' }, []);
    const next = await pullFrom(store, last.app);
    expect(manifests(next.requests)[0]).toBe('/federation/manifest.json?since=ffffffffffffffff');
    expect(next.report).toMatchObject({ since: null, corpus_rev: last.rev });
    expect(next.report.staged.map((item) => item.record_id).sort()).toEqual(['TST-D1', 'TST-D9']);
    expect((await store.getPeer(origin))?.last_corpus_rev).toBe(last.rev);
  });

  it('refuses a manifest, validly signed, that lists the changes since a revision the pull did not ask, staging nothing', async () => {
    const store = newStore();
    await pullFrom(store, first.app);
    const before = await store.listImports();
    const error = await pullFrom(store, last.app, 'answers-another-since').then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(FederationError);
    expect((error as FederationError).code).toBe('INVALID_DOCUMENT');
    expect((error as FederationError).message).toContain(`asked since ${first.rev}`);
    expect(await store.listImports()).toEqual(before);
    expect((await store.getPeer(new URL(base).origin))?.last_corpus_rev).toBe(first.rev);
  });

  it('the manifest and its signature take since; a malformed one is 400 INVALID_PARAMETER with the envelope', async () => {
    const manifest = await request(last.app).get(`/federation/manifest.json?since=${first.rev}`);
    expect(manifest.status).toBe(200);
    expect((manifest.body as FederationManifest).since).toBe(first.rev);
    expect((manifest.body as FederationManifest).records.map((entry) => entry.id)).toEqual(['TST-D1', 'TST-D9']);
    const whole = await request(last.app).get('/federation/manifest.json');
    expect((whole.body as FederationManifest).since).toBeUndefined();
    expect((whole.body as FederationManifest).records.length).toBeGreaterThan(2);
    const bad = await request(last.app).get('/federation/manifest.sig?since=HEAD');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'INVALID_PARAMETER' });
    expect(typeof bad.body.error.agent_action).toBe('string');
  });
});
