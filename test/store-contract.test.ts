/**
 * One contract for every store driver (the embedded SQLite one and the PostgreSQL
 * scale-out one): jobs, sessions, spend, records, contributions, limits, plays, secrets.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { createPostgresStore } from '../api/storage/postgres-store.ts';
import { createSqliteStore } from '../api/storage/sqlite-store.ts';
import type { ContributionKind, ContributionStatus, Store } from '../api/storage/store.ts';
import { tempDir } from './helpers/app.ts';
import { POSTGRES_AVAILABLE, startPostgres, type TestPostgres } from './helpers/postgres.ts';

interface Driver {
  name: string;
  /** A fresh, empty store. */
  open(): Promise<Store>;
}

let postgres: TestPostgres | undefined;
let database = 0;

/** A new, empty database on the test server; its connection URL. */
async function freshDatabase(prefix: string): Promise<string> {
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: postgres!.url });
  await admin.connect();
  const name = `${prefix}_${++database}`;
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return postgres!.url.replace(/\/postgres$/, `/${name}`);
}
const drivers: Driver[] = [
  { name: 'sqlite', open: async () => createSqliteStore(path.join(tempDir('store'), 'store.db')) },
  { name: 'postgres', open: async () => createPostgresStore(await freshDatabase('contract')) },
];

beforeAll(async () => {
  if (POSTGRES_AVAILABLE) postgres = await startPostgres();
}, 120_000);
afterAll(() => postgres?.stop());

const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute));
const hour = 3_600_000;
const item = (n: number, extra: Partial<Parameters<Store['submitContribution']>[0]> = {}) => ({
  id: `ctb_${n}`,
  kind: 'answer' as const,
  record_id: 'X-D1',
  identity: 'tester',
  justification: 'missing_voice',
  payload: { answer: `answer ${n}` },
  content_hash: `hash-${n}`,
  idempotency_key: null,
  client: 'client-a',
  ...extra,
});

for (const driver of drivers) {
  describe.skipIf(driver.name === 'postgres' && !POSTGRES_AVAILABLE)(`store contract: ${driver.name}`, () => {
    it('runs jobs through queued → running → done / failed, and a claim is exclusive', async () => {
      const store = await driver.open();
      const job = await store.createJob({ id: 'job_1', kind: 'council', input: { question: 'q?' } }, at(0));
      expect(job).toMatchObject({ status: 'queued', attempts: 0, input: { question: 'q?' }, result: null });
      const claims = await Promise.all([store.claimJob('job_1', at(1)), store.claimJob('job_1', at(1)), store.claimJob('job_1', at(1))]);
      expect(claims.filter(Boolean)).toHaveLength(1);
      expect((await store.unfinishedJobs()).map((entry) => entry.status)).toEqual(['running']);
      await store.finishJob('job_1', { result: { answer: 'a' } }, at(2));
      expect(await store.getJob('job_1')).toMatchObject({ status: 'done', result: { answer: 'a' }, attempts: 1 });
      await store.createJob({ id: 'job_2', kind: 'trace', input: null }, at(3));
      await store.claimJob('job_2', at(3));
      await store.requeueJob('job_2', at(4));
      expect(await store.claimJob('job_2', at(5))).toBe(true);
      await store.finishJob('job_2', { error: { code: 'X', message: 'boom' } }, at(6));
      expect(await store.getJob('job_2')).toMatchObject({ status: 'failed', error: { code: 'X' }, attempts: 2 });
      expect(await store.getJob('nope')).toBeUndefined();
      await store.close();
    });

    it('keeps a rolling session buffer with a time-to-live', async () => {
      const store = await driver.open();
      for (let n = 1; n <= 7; n++) await store.appendExchange('s1', { question: `q${n}`, answer: `a${n}`, sources: [], at: at(n).toISOString() }, 5, at(n));
      expect((await store.getSession('s1', hour, at(8))).map((turn) => turn.question)).toEqual(['q3', 'q4', 'q5', 'q6', 'q7']);
      expect(await store.getSession('s1', hour, at(7 + 61))).toEqual([]);
      expect(await store.getSession('s1', hour, at(8))).toEqual([]);
      await store.close();
    });

    it('issues sessions to a client: unknown ids find nothing, activity keeps them alive for the time-to-live', async () => {
      const store = await driver.open();
      expect(await store.findSession('never-issued', hour, at(0))).toBeUndefined();
      // exchanges under an id the server never issued do not make it a session
      await store.appendExchange('never-issued', { question: 'q', answer: 'a', sources: [], at: at(0).toISOString() }, 5, at(0));
      expect(await store.findSession('never-issued', hour, at(0))).toBeUndefined();
      await store.createSession('ses_a', 'client-a', at(0));
      expect(await store.findSession('ses_a', hour, at(59))).toEqual({ client: 'client-a', exchanges: [] });
      await store.appendExchange('ses_a', { question: 'q1', answer: 'a1  \n', sources: ['X-1'], at: at(50).toISOString() }, 5, at(50));
      expect(await store.findSession('ses_a', hour, at(100))).toEqual({ client: 'client-a', exchanges: [{ question: 'q1', answer: 'a1  \n', sources: ['X-1'], at: at(50).toISOString() }] });
      expect(await store.findSession('ses_a', hour, at(111))).toBeUndefined();
      await expect(store.createSession('ses_a', 'client-b', at(0))).rejects.toThrow();
      await store.close();
    });

    it('records job stages in order, byte for byte', async () => {
      const store = await driver.open();
      await store.createJob({ id: 'job_s', kind: 'deliberation', input: null }, at(0));
      expect(await store.jobStages('job_s')).toEqual([]);
      const stages = Array.from({ length: 12 }, (_, n) => ({ stage: n === 0 ? 'retrieval' : 'voice', at: at(n).toISOString(), n, answer: `  verbatim ${n}\n\u{1F600}` }));
      for (const stage of stages.slice(0, 2)) await store.addJobStage('job_s', stage);
      // concurrent voices: every stage kept, none lost to a sequence clash
      await Promise.all(stages.slice(2).map((stage) => store.addJobStage('job_s', stage)));
      const kept = await store.jobStages('job_s');
      expect(kept.slice(0, 2)).toEqual(stages.slice(0, 2));
      expect([...kept].sort((a, b) => Number(a.n) - Number(b.n))).toEqual(stages);
      expect(await store.jobStages('job_other')).toEqual([]);
      await store.close();
    });

    it('keeps council results for a bounded time, exactly, and persists each once', async () => {
      const store = await driver.open();
      const result = { panel: [{ text: 'Alder:  yes.\n\u0000\ud800 end  ' }], n: 1.5, nested: { b: 1, a: 2 } };
      await store.keepCouncil('cnl_1', result, at(0), hour);
      const kept = await store.getCouncil('cnl_1', at(59));
      expect(kept).toEqual({ id: 'cnl_1', result, created_at: at(0).toISOString(), expires_at: at(60).toISOString(), persisted_id: null });
      expect(JSON.stringify(kept!.result)).toBe(JSON.stringify(result));
      expect(await store.getCouncil('cnl_1', at(61))).toBeUndefined();
      expect(await store.getCouncil('cnl_nope', at(0))).toBeUndefined();
      // compare and set: only one of several concurrent persists claims it
      const claims = await Promise.all(['X-D1', 'X-D2', 'X-D3'].map((id) => store.setCouncilPersisted('cnl_1', id, null)));
      expect(claims.filter(Boolean)).toHaveLength(1);
      const winner = (await store.getCouncil('cnl_1', at(1)))!.persisted_id!;
      expect(await store.setCouncilPersisted('cnl_1', null, 'X-D9')).toBe(false);
      expect(await store.setCouncilPersisted('cnl_1', null, winner)).toBe(true);
      expect((await store.getCouncil('cnl_1', at(1)))!.persisted_id).toBeNull();
      // keeping another result later drops the expired ones
      await store.keepCouncil('cnl_2', { n: 2 }, at(200), hour);
      expect(await store.getCouncil('cnl_1', at(0))).toBeUndefined();
      await store.close();
    });

    it('adds up spend and keeps persisted records', async () => {
      const store = await driver.open();
      await store.addSpend({ at: at(0).toISOString(), purpose: 'council', model: 'm', prompt_tokens: 10, completion_tokens: 5, cost_usd: 0.25 });
      await store.addSpend({ at: at(1).toISOString(), purpose: 'council', model: 'm', prompt_tokens: 10, completion_tokens: 5, cost_usd: 0.5 });
      expect(await store.totalSpendUsd()).toBeCloseTo(0.75);
      await store.saveRecord({ id: 'X-D2', frontmatter: { id: 'X-D2', answers: [{ text: 'verbatim  \n' }] }, body: '', persisted_at: at(2).toISOString() });
      expect(await store.listRecords()).toEqual([{ id: 'X-D2', frontmatter: { id: 'X-D2', answers: [{ text: 'verbatim  \n' }] }, body: '', persisted_at: at(2).toISOString() }]);
      await store.close();
    });

    it('submits contributions atomically: replay, duplicate, limit, then insert', async () => {
      const store = await driver.open();
      const limit = { key: 'contribute:client-a', limit: 10, windowMs: hour };
      const burst = await Promise.all(Array.from({ length: 40 }, (_, n) => store.submitContribution(item(n), limit, at(0))));
      expect(burst.filter((outcome) => outcome.outcome === 'created')).toHaveLength(10);
      expect(burst.filter((outcome) => outcome.outcome === 'limited')).toHaveLength(30);
      const keyed = await Promise.all(Array.from({ length: 25 }, () => store.submitContribution(item(100, { idempotency_key: 'k1', client: 'client-b' }), { ...limit, key: 'contribute:client-b' }, at(1))));
      expect(keyed.filter((outcome) => outcome.outcome === 'created')).toHaveLength(1);
      expect(keyed.filter((outcome) => outcome.outcome === 'replayed')).toHaveLength(24);
      const duplicate = await store.submitContribution(item(100, { id: 'ctb_other', client: 'client-b' }), { ...limit, key: 'contribute:client-b' }, at(2));
      expect(duplicate).toMatchObject({ outcome: 'duplicate', contribution: { id: 'ctb_100' } });
      expect(await store.listContributions('pending')).toHaveLength(11);
      const later = await store.submitContribution(item(200), limit, new Date(at(0).getTime() + hour));
      expect(later.outcome).toBe('created');
      await store.close();
    });

    it('reviews contributions once and keeps panel votes', async () => {
      const store = await driver.open();
      await store.submitContribution(item(1), { key: 'c', limit: 5, windowMs: hour }, at(0));
      await store.addReview('ctb_1', { reviewer: 'A', vote: 'approve', reason: 'good', at: at(1).toISOString() });
      await store.addReview('ctb_1', { reviewer: 'B', vote: 'reject', reason: 'off topic', at: at(1).toISOString() });
      const approved = await store.reviewContribution('ctb_1', { status: 'approved', reviewer: 'curator', reason: 'ok' }, at(2));
      expect(approved).toMatchObject({ status: 'approved', reviewer: 'curator', reviews: [{ reviewer: 'A' }, { reviewer: 'B' }] });
      const again = await store.reviewContribution('ctb_1', { status: 'rejected', reviewer: 'other', reason: 'late' }, at(3));
      expect(again).toMatchObject({ status: 'approved', reviewer: 'curator' });
      expect(await store.listContributions('rejected')).toEqual([]);
      await store.close();
    });

    it('filters and pages contributions in the store, with the total of every match', async () => {
      const store = await driver.open();
      const limit = { key: 'c', limit: 1000, windowMs: hour };
      // Several items share a timestamp, so the order falls back on the id.
      for (let n = 0; n < 36; n++) {
        const extra = n % 3 === 0 ? { kind: 'proposal' as const, record_id: null, justification: null } : { record_id: n % 2 === 0 ? 'X-D1' : 'X-D2' };
        await store.submitContribution(item(n, { id: `ctb_${String(n % 7).padStart(2, '0')}_${n}`, client: `client-${n % 4}`, ...extra }), limit, at(n % 5));
      }
      const all = await store.listContributions();
      for (const [index, contribution] of all.entries()) {
        if (index % 5 === 1) await store.reviewContribution(contribution.id, { status: 'approved', reviewer: 'curator', reason: 'ok' }, at(9));
        if (index % 5 === 2) await store.reviewContribution(contribution.id, { status: 'rejected', reviewer: 'curator', reason: 'no' }, at(9));
      }
      const everything = await store.listContributions();
      const ordered = [...everything].sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1));
      expect(everything.map((entry) => entry.id)).toEqual(ordered.map((entry) => entry.id));

      const queries = fc.record(
        {
          status: fc.constantFrom('pending', 'approved', 'rejected') as fc.Arbitrary<ContributionStatus>,
          kind: fc.constantFrom('answer', 'proposal') as fc.Arbitrary<ContributionKind>,
          record_id: fc.constantFrom('X-D1', 'X-D2', 'X-D9', "X'; DROP TABLE contributions; --"),
          client: fc.constantFrom('client-0', 'client-1', 'client-3', 'client-9'),
          limit: fc.integer({ min: 0, max: 40 }),
          offset: fc.integer({ min: 0, max: 40 }),
        },
        { requiredKeys: [] },
      );
      await fc.assert(
        fc.asyncProperty(queries, async (query) => {
          const matching = ordered.filter((entry) => (['status', 'kind', 'record_id', 'client'] as const).every((field) => query[field] === undefined || entry[field] === query[field]));
          const start = query.offset ?? 0;
          const page = await store.findContributions(query);
          expect(page.total).toBe(matching.length);
          expect(page.items).toEqual(matching.slice(start, query.limit === undefined ? undefined : start + query.limit));
        }),
        { numRuns: 60 },
      );
      expect((await store.findContributions({})).items).toEqual(ordered);
      expect(await store.findContributions({ kind: 'proposal', offset: 500 })).toEqual({ items: [], total: 12 });
      await store.close();
    });

    it('counts rate-limit windows, plays and keeps one secret', async () => {
      const store = await driver.open();
      const limit = { key: 'live:x', limit: 2, windowMs: 60_000 };
      const hits = await Promise.all([1, 2, 3, 4].map(() => store.hit(limit, at(0))));
      expect(hits.filter((hit) => hit.allowed)).toHaveLength(2);
      expect(hits.find((hit) => !hit.allowed)!.resetMs).toBeLessThanOrEqual(60_000);
      expect((await store.hit(limit, at(2))).allowed).toBe(true);
      expect(await store.recordPlay('track', 'c1', '2026-01-01')).toBe(true);
      expect(await store.recordPlay('track', 'c1', '2026-01-01')).toBe(false);
      await store.recordPlay('track', 'c1', '2026-01-02');
      await store.recordPlay('track', 'c2', '2026-01-02');
      expect(await store.playCounts()).toEqual([{ slug: 'track', plays: 3, listeners: 2, returning: 1 }]);
      const [first, second] = await Promise.all([store.secret('salt'), store.secret('salt')]);
      expect(first).toMatch(/^[0-9a-f]{64}$/);
      expect(second).toBe(first);
      await store.close();
    });

    it('stages federation imports once per content hash, pins the peer key and refuses older manifests', async () => {
      const store = await driver.open();
      const peer = { origin: 'http://a.test', node_id: 'pn1:aa', public_key: 'keyA', last_signed_at: at(10).toISOString() };
      const markdown = '---\nid: AAA-D1\n---\n  verbatim \u{1F600}\n';
      const newImport = (n: number, hash: string) => ({
        id: `imp_${n}`, origin_node: 'pn1:aa', origin: 'http://a.test', record_id: 'AAA-D1', content_hash: hash,
        markdown, provenance: { signature: 'sig', nested: { b: 1, a: 2 } }, staged_at: at(n).toISOString(),
      });
      expect(await store.getPeer('http://a.test')).toBeUndefined();
      const first = await store.stageImports(peer, [newImport(1, 'h1')]);
      expect(first.accepted).toBe(true);
      expect(first.staged).toEqual([{ ...newImport(1, 'h1'), status: 'pending', reviewed_at: null, reviewer: null, reason: null }]);
      expect(await store.getPeer('http://a.test')).toEqual(peer);
      // the same record and hash again (a second pull, even under another id): nothing new
      expect((await store.stageImports(peer, [newImport(2, 'h1')])).staged).toEqual([]);
      expect(await store.getImport('imp_2')).toBeUndefined();
      // an older manifest (replay) or another key for the origin: refused, nothing written
      expect(await store.stageImports({ ...peer, last_signed_at: at(9).toISOString() }, [newImport(3, 'h3')])).toEqual({ accepted: false, staged: [] });
      expect(await store.stageImports({ ...peer, public_key: 'keyB', last_signed_at: at(11).toISOString() }, [newImport(4, 'h4')])).toEqual({ accepted: false, staged: [] });
      expect(await store.getPeer('http://a.test')).toEqual(peer);
      // a changed record supersedes the pending older version
      const newer = { ...peer, last_signed_at: at(20).toISOString() };
      expect((await store.stageImports(newer, [newImport(5, 'h5')])).staged.map((item) => item.id)).toEqual(['imp_5']);
      expect((await store.getImport('imp_1'))!.status).toBe('superseded');
      expect((await store.listImports('pending')).map((item) => item.id)).toEqual(['imp_5']);
      expect(await store.knownImports('pn1:aa')).toEqual(new Map([['AAA-D1', new Set(['h1', 'h5'])]]));
      expect(await store.knownImports('pn1:other')).toEqual(new Map());
      // reviewed once
      expect(await store.reviewImport('imp_5', { status: 'approved', reviewer: 'cur', reason: 'ok' }, at(30))).toMatchObject({ status: 'approved', reviewer: 'cur', reviewed_at: at(30).toISOString() });
      expect(await store.reviewImport('imp_5', { status: 'rejected', reviewer: 'other', reason: 'no' }, at(31))).toMatchObject({ status: 'approved', reviewer: 'cur' });
      expect((await store.listImports()).map((item) => [item.id, item.status])).toEqual([['imp_1', 'superseded'], ['imp_5', 'approved']]);
      expect((await store.getImport('imp_5'))!.markdown).toBe(markdown);
      await store.close();
    });
  });
}

describe.skipIf(!POSTGRES_AVAILABLE)('PostgreSQL store: rate-limit counters', () => {
  it('keeps them in an unlogged table, and turns a logged one from an older store unlogged', async () => {
    const { default: pg } = await import('pg');
    const url = await freshDatabase('counters');
    // An older store: the counters logged, with a window in progress.
    const old = new pg.Client({ connectionString: url });
    await old.connect();
    await old.query('CREATE TABLE rate_counters (key TEXT PRIMARY KEY, window_start BIGINT NOT NULL, count INTEGER NOT NULL)');
    await old.query('INSERT INTO rate_counters VALUES ($1, $2, 2)', ['live:x', at(0).getTime()]);
    const persistence = async () => (await old.query<{ relpersistence: string }>("SELECT relpersistence FROM pg_class WHERE oid = to_regclass('rate_counters')")).rows[0]!.relpersistence;
    expect(await persistence()).toBe('p');
    const store = await createPostgresStore(url);
    expect(await persistence()).toBe('u');
    // the window in progress survived the change: a third hit over a limit of 2 is refused
    expect((await store.hit({ key: 'live:x', limit: 2, windowMs: 60_000 }, at(0))).allowed).toBe(false);
    await store.close();
    // a second start leaves it as it is
    const again = await createPostgresStore(url);
    expect(await persistence()).toBe('u');
    await again.close();
    await old.end();
  });
});
