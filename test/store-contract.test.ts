/**
 * One contract for every store driver (the embedded SQLite one and the PostgreSQL
 * scale-out one), the same test code for each concern: jobs (stages, cancel, leases),
 * contributions, sessions, limits (rate limits, plays), spend, records (persisted records,
 * kept councils), idempotency keys, federation, tension sightings, secrets. The drivers come
 * from test/helpers/write-stores.ts; under CI=true a missing PostgreSQL fails the suite.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createPostgresStore, isUnavailable } from '../storage/postgres-store.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import { StoreUnavailableError, UnstorableTextError, type ContributionKind, type ContributionStatus, type Store } from '../storage/store.ts';
import { tempDir } from '../devkit/app.ts';
import { writeStoreDrivers } from './helpers/write-stores.ts';

const { drivers: storeDrivers, stop } = writeStoreDrivers();
const postgresDriver = storeDrivers.find((driver) => driver.name === 'postgres')!;

const LEGACY_ROW = [
  'ctb_old',
  'answer',
  'X-D1',
  'tester',
  'missing_voice',
  '{"answer":"old"}',
  'hash-old',
  'K',
  'client-a',
  'pending',
  '2025-12-31T00:00:00.000Z',
];
const LEGACY_INSERT =
  'INSERT INTO contributions (id, kind, record_id, identity, justification, payload, content_hash, idempotency_key, client, status, created_at)';
/** The contributions table of the oldest stores: a global UNIQUE on the Idempotency-Key. */
const LEGACY_CONTRIBUTIONS = {
  sqlite: `CREATE TABLE contributions (
        id TEXT PRIMARY KEY, kind TEXT NOT NULL, record_id TEXT, identity TEXT NOT NULL, justification TEXT,
        payload TEXT NOT NULL, content_hash TEXT NOT NULL, idempotency_key TEXT UNIQUE, client TEXT NOT NULL,
        status TEXT NOT NULL, created_at TEXT NOT NULL, reviewed_at TEXT, reviewer TEXT, reason TEXT,
        reviews TEXT NOT NULL DEFAULT '[]'
      );
      CREATE INDEX contributions_status ON contributions(status, created_at);`,
  postgres: `CREATE TABLE contributions (
        id TEXT PRIMARY KEY, kind TEXT NOT NULL, record_id TEXT, identity TEXT NOT NULL, justification TEXT,
        payload JSONB NOT NULL, content_hash TEXT NOT NULL, idempotency_key TEXT UNIQUE, client TEXT NOT NULL,
        status TEXT NOT NULL, created_at TEXT NOT NULL, reviewed_at TEXT, reviewer TEXT, reason TEXT,
        reviews JSONB NOT NULL DEFAULT '[]'::jsonb
      )`,
};

/** The same contract code for every driver; `legacy` lays a store made by the oldest schema (one contribution, sent with key "K"). */
const drivers = storeDrivers.map((driver) => ({
  ...driver,
  async legacy() {
    const location = await driver.location();
    const raw = await driver.raw(location);
    await raw.run(LEGACY_CONTRIBUTIONS[driver.name]);
    await raw.run(`${LEGACY_INSERT} VALUES (${LEGACY_ROW.map(() => '?').join(', ')})`, LEGACY_ROW);
    await raw.close();
    return { open: () => driver.openAt(location) };
  },
}));

afterAll(() => stop(), 60_000);

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
  describe.skipIf(!driver.available)(`store contract: ${driver.name}`, () => {
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
      expect(await store.findSession('ses_a', hour, at(100))).toEqual({
        client: 'client-a',
        exchanges: [{ question: 'q1', answer: 'a1  \n', sources: ['X-1'], at: at(50).toISOString() }],
      });
      expect(await store.findSession('ses_a', hour, at(111))).toBeUndefined();
      await expect(store.createSession('ses_a', 'client-b', at(0))).rejects.toThrow();
      await store.close();
    });

    it('records job stages in order, byte for byte', async () => {
      const store = await driver.open();
      await store.createJob({ id: 'job_s', kind: 'deliberation', input: null }, at(0));
      expect(await store.jobStages('job_s')).toEqual([]);
      const stages = Array.from({ length: 12 }, (_, n) => ({
        stage: n === 0 ? ('retrieval' as const) : ('voice' as const),
        at: at(n).toISOString(),
        n,
        answer: `  verbatim ${n}\n\u{1F600}`,
      }));
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
      const result = { panel: [{ text: 'Alder:  yes.\n\t\u{1F600} end  ' }], n: 1.5, nested: { b: 1, a: 2 } };
      await store.keepCouncil('cnl_1', result, at(0), hour);
      // model text with NUL or a lone surrogate is kept in its storable form, alike on both drivers
      await store.keepCouncil('cnl_x', { panel: [{ text: 'a\u0000b\ud800c' }] }, at(0), hour);
      expect((await store.getCouncil('cnl_x', at(1)))!.result).toEqual({ panel: [{ text: 'ab\ufffdc' }] });
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
      expect(await store.listRecords()).toEqual([
        { id: 'X-D2', frontmatter: { id: 'X-D2', answers: [{ text: 'verbatim  \n' }] }, body: '', persisted_at: at(2).toISOString() },
      ]);
      await store.close();
    });

    it('reserves spend atomically against a ceiling, settles with real usage, and lets reservations expire', async () => {
      const store = await driver.open();
      const reservation = (id: string, amount: number, expiresMinute = 10) => ({
        id,
        purpose: 'council',
        model: 'm',
        amount_usd: amount,
        expires_at: at(expiresMinute),
      });
      await store.addSpend({ at: at(0).toISOString(), purpose: 'council', model: 'm', prompt_tokens: 1, completion_tokens: 1, cost_usd: 0.25 });
      // 40 concurrent reservations of $0.10 under a $1 ceiling with $0.25 spent: exactly 7 fit.
      const burst = await Promise.all(Array.from({ length: 40 }, (_, n) => store.reserveSpend(reservation(`r${n}`, 0.1), 1, at(1))));
      expect(burst.filter(Boolean)).toHaveLength(7);
      expect(await store.spendStatus(at(1))).toEqual({ spent_usd: 0.25, reserved_usd: expect.closeTo(0.7, 9) });
      // Settling replaces a reservation by what the call really cost; without usage, by nothing.
      const granted = burst.flatMap((ok, n) => (ok ? [`r${n}`] : []));
      await store.settleSpend(granted[0]!, {
        at: at(2).toISOString(),
        purpose: 'council',
        model: 'm',
        prompt_tokens: 10,
        completion_tokens: 20,
        cost_usd: 0.04,
      });
      await store.settleSpend(granted[1]!, undefined);
      expect(await store.spendStatus(at(2))).toEqual({ spent_usd: expect.closeTo(0.29, 9), reserved_usd: expect.closeTo(0.5, 9) });
      expect(await store.totalSpendUsd()).toBeCloseTo(0.29, 9);
      expect(await store.reserveSpend(reservation('late', 0.3), 1, at(2))).toBe(false);
      // A dead process's reservations stop counting at their expiry.
      expect(await store.reserveSpend(reservation('late', 0.3, 20), 1, at(10))).toBe(true);
      expect(await store.spendStatus(at(10))).toEqual({ spent_usd: expect.closeTo(0.29, 9), reserved_usd: expect.closeTo(0.3, 9) });
      await store.close();
    });

    it('cancels queued and running jobs; a cancelled job stays cancelled', async () => {
      const store = await driver.open();
      await store.createJob({ id: 'job_q', kind: 'council', input: null }, at(0));
      await store.createJob({ id: 'job_r', kind: 'council', input: null }, at(0));
      await store.claimJob('job_r', at(1));
      expect(await store.cancelJob('job_q', at(2))).toMatchObject({ status: 'cancelled', error: { code: 'JOB_CANCELLED' } });
      expect(await store.cancelJob('job_r', at(2))).toMatchObject({ status: 'cancelled' });
      expect(await store.claimJob('job_q', at(3))).toBe(false);
      await store.finishJob('job_r', { result: { late: true } }, at(3));
      expect(await store.getJob('job_r')).toMatchObject({ status: 'cancelled', result: null });
      expect(await store.unfinishedJobs()).toEqual([]);
      await store.createJob({ id: 'job_d', kind: 'council', input: null }, at(4));
      await store.claimJob('job_d', at(4));
      await store.finishJob('job_d', { result: 1 }, at(5));
      expect(await store.cancelJob('job_d', at(6))).toMatchObject({ status: 'done' });
      expect(await store.cancelJob('nope', at(6))).toBeUndefined();
      await store.close();
    });

    it('holds a running job under a lease that only its claim (attempt) renews', async () => {
      const store = await driver.open();
      await store.createJob({ id: 'job_l', kind: 'council', input: null }, at(0));
      expect((await store.getJob('job_l'))!.lease_expires_at).toBeNull();
      expect(await store.renewJobLease('job_l', 0, at(0), hour)).toBe(false);
      expect(await store.claimJob('job_l', at(1), hour)).toBe(true);
      expect((await store.getJob('job_l'))!.lease_expires_at).toBe(at(61).toISOString());
      expect(await store.renewJobLease('job_l', 1, at(30), hour)).toBe(true);
      expect((await store.unfinishedJobs())[0]!.lease_expires_at).toBe(at(90).toISOString());
      // another claim's attempt does not renew it
      expect(await store.renewJobLease('job_l', 2, at(31), hour)).toBe(false);
      // re-queued (its lease lapsed) and claimed again: the old attempt's heartbeat no longer holds it
      await store.requeueJob('job_l', at(91));
      expect(await store.renewJobLease('job_l', 1, at(91), hour)).toBe(false);
      expect(await store.claimJob('job_l', at(92), hour)).toBe(true);
      expect(await store.renewJobLease('job_l', 1, at(93), hour)).toBe(false);
      expect(await store.renewJobLease('job_l', 2, at(93), hour)).toBe(true);
      await store.finishJob('job_l', { result: 1 }, at(94));
      expect(await store.renewJobLease('job_l', 2, at(95), hour)).toBe(false);
      expect(await store.renewJobLease('nope', 1, at(95), hour)).toBe(false);
      await store.close();
    });

    it('submits contributions atomically: duplicate, limit, then insert', async () => {
      const store = await driver.open();
      const limit = { key: 'contribute:client-a', limit: 10, windowMs: hour };
      const burst = await Promise.all(Array.from({ length: 40 }, (_, n) => store.submitContribution(item(n), limit, at(0))));
      expect(burst.filter((outcome) => outcome.outcome === 'created')).toHaveLength(10);
      expect(burst.filter((outcome) => outcome.outcome === 'limited')).toHaveLength(30);
      const same = await Promise.all(
        Array.from({ length: 25 }, () => store.submitContribution(item(100, { client: 'client-b' }), { ...limit, key: 'contribute:client-b' }, at(1))),
      );
      expect(same.filter((outcome) => outcome.outcome === 'created')).toHaveLength(1);
      expect(same.filter((outcome) => outcome.outcome === 'duplicate')).toHaveLength(24);
      const duplicate = await store.submitContribution(item(100, { id: 'ctb_other', client: 'client-b' }), { ...limit, key: 'contribute:client-b' }, at(2));
      expect(duplicate).toMatchObject({ outcome: 'duplicate', contribution: { id: 'ctb_100' } });
      expect(await store.listContributions('pending')).toHaveLength(11);
      const later = await store.submitContribution(item(200), limit, new Date(at(0).getTime() + hour));
      expect(later.outcome).toBe('created');
      await store.close();
    });

    it('scopes Idempotency-Keys per client and operation and replays the stored acknowledgement', async () => {
      const store = await driver.open();
      const scope = { client: 'client-a', operation: 'contribute', key: 'K' };
      const ack = { status: 202, headers: { Location: '/x' }, body: '{"b":1,"a":"\u00e9"}' };
      expect(await store.reserveIdempotencyKey(scope, 'f1', at(0), 60_000)).toEqual({ state: 'reserved' });
      // Held: the same request waits, another request with the key is refused.
      expect(await store.reserveIdempotencyKey(scope, 'f1', at(0), 60_000)).toMatchObject({ state: 'in_progress' });
      expect(await store.reserveIdempotencyKey(scope, 'f2', at(0), 60_000)).toEqual({ state: 'mismatch' });
      // Another client, or another operation, with the same key is another key.
      expect(await store.reserveIdempotencyKey({ ...scope, client: 'client-b' }, 'f2', at(0), 60_000)).toEqual({ state: 'reserved' });
      expect(await store.reserveIdempotencyKey({ ...scope, operation: 'store' }, 'f3', at(0), 60_000)).toEqual({ state: 'reserved' });
      await store.completeIdempotencyKey(scope, ack);
      // Completed: replayed byte for byte (the body text, key order kept), whatever the age.
      expect(await store.reserveIdempotencyKey(scope, 'f1', at(59), 60_000)).toEqual({ state: 'replay', acknowledgement: ack });
      expect(await store.reserveIdempotencyKey(scope, 'f2', at(59), 60_000)).toEqual({ state: 'mismatch' });
      // A completed key is never released or completed again.
      await store.releaseIdempotencyKey(scope);
      await store.completeIdempotencyKey(scope, { ...ack, status: 500 });
      expect(await store.reserveIdempotencyKey(scope, 'f1', at(59), 60_000)).toEqual({ state: 'replay', acknowledgement: ack });
      // Released: free again, for any request.
      await store.releaseIdempotencyKey({ ...scope, client: 'client-b' });
      expect(await store.reserveIdempotencyKey({ ...scope, client: 'client-b' }, 'f9', at(0), 60_000)).toEqual({ state: 'reserved' });
      // Left pending past staleMs (its request crashed): taken over.
      expect(await store.reserveIdempotencyKey({ ...scope, operation: 'store' }, 'f4', at(1), 60_000)).toEqual({ state: 'reserved' });
      await store.close();
    });

    it('reserves one Idempotency-Key for exactly one of many concurrent requests', async () => {
      const store = await driver.open();
      const scope = { client: 'client-a', operation: 'query', key: 'burst' };
      const outcomes = await Promise.all(Array.from({ length: 30 }, (_, n) => store.reserveIdempotencyKey(scope, n % 2 === 0 ? 'even' : 'odd', at(0), 60_000)));
      expect(outcomes.filter((outcome) => outcome.state === 'reserved')).toHaveLength(1);
      expect(outcomes.filter((outcome) => outcome.state === 'in_progress' || outcome.state === 'mismatch')).toHaveLength(29);
      await store.close();
    });

    it('refuses NUL and unpaired surrogates alike in every write, storing nothing (permanent, not an outage)', async () => {
      const store = await driver.open();
      const limit = { key: 'contribute:client-a', limit: 10, windowMs: hour };
      const attempts: [string, () => Promise<unknown>][] = [
        ['answer with NUL', () => store.submitContribution(item(1, { payload: { answer: 'a\u0000b' } }), limit, at(0))],
        ['identity with a lone high surrogate', () => store.submitContribution(item(2, { identity: 'x\ud800' }), limit, at(0))],
        [
          'proposal text with a lone low surrogate',
          () =>
            store.submitContribution(
              item(3, { kind: 'proposal', record_id: null, justification: null, payload: { title: 't', text: '\udc00', sources: [] } }),
              limit,
              at(0),
            ),
        ],
        ['job input', () => store.createJob({ id: 'job_nul', kind: 'deliberation', input: { query: { q: 'why\u0000' } } }, at(0))],
        [
          'idempotency acknowledgement',
          () => store.completeIdempotencyKey({ client: 'c', operation: 'contribute', key: 'k' }, { status: 202, headers: {}, body: '"\u0000"' }),
        ],
        ['idempotency key', () => store.reserveIdempotencyKey({ client: 'c', operation: 'contribute', key: 'k\u0000' }, 'f', at(0), 60_000)],
      ];
      for (const [what, attempt] of attempts) {
        const error = await attempt().then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(error, what).toBeInstanceOf(UnstorableTextError);
        expect(error, what).not.toBeInstanceOf(StoreUnavailableError);
      }
      expect(await store.listContributions()).toEqual([]);
      expect(await store.getJob('job_nul')).toBeUndefined();
      expect(await store.reserveIdempotencyKey({ client: 'c', operation: 'contribute', key: 'k' }, 'f', at(0), 60_000)).toEqual({ state: 'reserved' });
      // A look-up by an id no stored item can have finds nothing (PostgreSQL used to fail on it).
      expect(await store.getJob('job\u0000')).toBeUndefined();
      expect(await store.getContribution('ctb_\ud800')).toBeUndefined();
      // Well-formed text of every plane is kept exactly: a surrogate pair, U+FFFD, controls other than NUL.
      const text = 'emoji \ud83d\ude00, replacement \ufffd, bell \u0007, RTL \u202e';
      const created = await store.submitContribution(item(4, { payload: { answer: text }, identity: text }), limit, at(0));
      expect(created).toMatchObject({ outcome: 'created', contribution: { identity: text, payload: { answer: text } } });
      expect((await store.getContribution('ctb_4'))?.payload.answer).toBe(text);
      await store.close();
    });

    it('stores text the server produced (model output) safely and alike: NUL removed, unpaired surrogates as U+FFFD', async () => {
      const store = await driver.open();
      // A model answer with a NUL must not cost an acknowledged job its result.
      await store.createJob({ id: 'job_model', kind: 'deliberation', input: { query: { q: 'why' } } }, at(0));
      await store.claimJob('job_model', at(0));
      await store.finishJob('job_model', { result: { answer: 'a\u0000b \ud800 \ud83d\ude00', ['k\u0000']: ['\udc00'] } }, at(1));
      expect((await store.getJob('job_model'))?.result).toEqual({ answer: 'ab \ufffd \ud83d\ude00', k: ['\ufffd'] });
      await store.appendExchange('s1', { question: 'q', answer: 'x\u0000y', sources: [], at: at(0).toISOString() }, 5, at(0));
      expect(await store.getSession('s1', hour, at(0))).toEqual([{ question: 'q', answer: 'xy', sources: [], at: at(0).toISOString() }]);
      await store.saveRecord({ id: 'X-D9', frontmatter: { question: 'q', answers: [{ text: '\ud800' }] }, body: 'b\u0000', persisted_at: at(0).toISOString() });
      expect(await store.listRecords()).toEqual([
        { id: 'X-D9', frontmatter: { question: 'q', answers: [{ text: '\ufffd' }] }, body: 'b', persisted_at: at(0).toISOString() },
      ]);
      await store.close();
    });

    it('opens a store made by the older schema (global Idempotency-Key) and keeps its rows', async () => {
      const legacy = await driver.legacy();
      const store = await legacy.open();
      expect(await store.getContribution('ctb_old')).toMatchObject({ idempotency_key: 'K', client: 'client-a', payload: { answer: 'old' } });
      const limit = { key: 'contribute:c', limit: 10, windowMs: hour };
      // The same key value from two clients: two rows (the old global UNIQUE would refuse the second).
      expect((await store.submitContribution(item(1, { idempotency_key: 'K', client: 'client-b' }), limit, at(0))).outcome).toBe('created');
      expect((await store.submitContribution(item(2, { idempotency_key: 'K', client: 'client-c' }), limit, at(0))).outcome).toBe('created');
      expect(await store.reserveIdempotencyKey({ client: 'client-b', operation: 'contribute', key: 'K' }, 'f', at(0), 60_000)).toEqual({ state: 'reserved' });
      await store.close();
      // A second start finds nothing left to migrate.
      const again = await legacy.open();
      expect(await again.listContributions()).toHaveLength(3);
      await again.close();
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
          const matching = ordered.filter((entry) =>
            (['status', 'kind', 'record_id', 'client'] as const).every((field) => query[field] === undefined || entry[field] === query[field]),
          );
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
      // found without being created; replaced (the federation key on rotation, its statements)
      expect(await store.findSecret('never-made')).toBeUndefined();
      expect(await store.findSecret('salt')).toBe(first);
      await store.replaceSecret('salt', 'replaced');
      await store.replaceSecret('new-one', 'value');
      expect([await store.secret('salt'), await store.findSecret('new-one')]).toEqual(['replaced', 'value']);
      await store.close();
    });

    it('keeps deliberation tension sightings pending until a curator keeps or dismisses each, once', async () => {
      const store = await driver.open();
      const sighting = (id: string, seen: number) => ({
        id,
        key: 'a__b__t',
        topic: 'T',
        voice_a: 'A',
        claim_a: 'a\u0000 ✓',
        voice_b: 'B',
        claim_b: 'b',
        status: 'divergent',
        question: 'Q?',
        seen_at: at(seen).toISOString(),
      });
      await store.addTensionSightings([sighting('s2', 2), sighting('s1', 1)]);
      await store.addTensionSightings([sighting('s1', 1)]);
      expect((await store.listTensionSightings('pending')).map((entry) => entry.id)).toEqual(['s1', 's2']);
      // model text is kept in its storable form (NUL removed), alike on both drivers
      expect((await store.listTensionSightings())[0]).toEqual({ ...sighting('s1', 1), claim_a: 'a ✓', state: 'pending', reviewer: null, reviewed_at: null });
      const decisions = await Promise.all([
        store.reviewTensionSighting('s1', { state: 'kept', reviewer: 'ana' }, at(3)),
        store.reviewTensionSighting('s1', { state: 'dismissed', reviewer: 'bo' }, at(3)),
      ]);
      expect(decisions.filter(Boolean)).toHaveLength(1);
      expect(await store.reviewTensionSighting('nope', { state: 'kept', reviewer: 'ana' }, at(3))).toBeUndefined();
      expect((await store.listTensionSightings('pending')).map((entry) => entry.id)).toEqual(['s2']);
      expect((await store.listTensionSightings()).find((entry) => entry.id === 's1')).toMatchObject({ reviewed_at: at(3).toISOString() });
      await store.close();
    });

    it('stages federation imports once per content hash, pins the peer key and refuses older manifests', async () => {
      const store = await driver.open();
      const peer = { origin: 'http://a.test', node_id: 'pn1:aa', public_key: 'keyA', last_signed_at: at(10).toISOString(), last_corpus_rev: '' };
      const markdown = '---\nid: AAA-D1\n---\n  verbatim \u{1F600}\n';
      const newImport = (n: number, hash: string) => ({
        id: `imp_${n}`,
        origin_node: 'pn1:aa',
        origin: 'http://a.test',
        record_id: 'AAA-D1',
        content_hash: hash,
        markdown,
        provenance: { signature: 'sig', nested: { b: 1, a: 2 } },
        staged_at: at(n).toISOString(),
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
      expect(await store.stageImports({ ...peer, public_key: 'keyB', last_signed_at: at(11).toISOString() }, [newImport(4, 'h4')])).toEqual({
        accepted: false,
        staged: [],
      });
      expect(await store.getPeer('http://a.test')).toEqual(peer);
      // a changed record supersedes the pending older version
      const newer = { ...peer, last_signed_at: at(20).toISOString() };
      expect((await store.stageImports(newer, [newImport(5, 'h5')])).staged.map((item) => item.id)).toEqual(['imp_5']);
      expect((await store.getImport('imp_1'))!.status).toBe('superseded');
      expect((await store.listImports('pending')).map((item) => item.id)).toEqual(['imp_5']);
      expect(await store.knownImports('pn1:aa')).toEqual(new Map([['AAA-D1', new Set(['h1', 'h5'])]]));
      expect(await store.knownImports('pn1:other')).toEqual(new Map());
      // reviewed once
      expect(await store.reviewImport('imp_5', { status: 'approved', reviewer: 'cur', reason: 'ok' }, at(30))).toMatchObject({
        status: 'approved',
        reviewer: 'cur',
        reviewed_at: at(30).toISOString(),
      });
      expect(await store.reviewImport('imp_5', { status: 'rejected', reviewer: 'other', reason: 'no' }, at(31))).toMatchObject({
        status: 'approved',
        reviewer: 'cur',
      });
      expect((await store.listImports()).map((item) => [item.id, item.status])).toEqual([
        ['imp_1', 'superseded'],
        ['imp_5', 'approved'],
      ]);
      expect((await store.getImport('imp_5'))!.markdown).toBe(markdown);
      await store.close();
    });

    it('pins a key by id before any pull, fills it on the first pull, and moves a pin only from the key it holds (issue 29 item 3)', async () => {
      const store = await driver.open();
      const origin = 'http://b.test';
      expect(await store.trustPeer(origin, 'pn1:bb')).toBe('pinned');
      expect(await store.trustPeer(origin, 'pn1:bb')).toBe('same');
      expect(await store.trustPeer(origin, 'pn1:cc')).toBe('conflict');
      expect(await store.getPeer(origin)).toEqual({ origin, node_id: 'pn1:bb', public_key: '', last_signed_at: '', last_corpus_rev: '' });
      // another key on first contact: refused; the pinned one fills in its full key
      expect(await store.stageImports({ origin, node_id: 'pn1:cc', public_key: 'keyC', last_signed_at: at(1).toISOString() }, [])).toEqual({
        accepted: false,
        staged: [],
      });
      const filled = { origin, node_id: 'pn1:bb', public_key: 'keyB', last_signed_at: at(1).toISOString(), last_corpus_rev: '00000000000000a1' };
      expect((await store.stageImports(filled, [])).accepted).toBe(true);
      expect(await store.getPeer(origin)).toEqual(filled);
      // a pushed offer (no revision) keeps the revision the last pull recorded; the next pull moves it (issue 45)
      const { last_corpus_rev: _kept, ...offer } = filled;
      expect((await store.stageImports(offer, [])).accepted).toBe(true);
      expect((await store.getPeer(origin))?.last_corpus_rev).toBe('00000000000000a1');
      expect((await store.stageImports({ ...filled, last_corpus_rev: '00000000000000a2' }, [])).accepted).toBe(true);
      expect((await store.getPeer(origin))?.last_corpus_rev).toBe('00000000000000a2');
      await store.stageImports(filled, []);
      // a rotation moves the pin only from the key it holds (compare and set), keeping the manifest clock
      expect(await store.rotatePeer(origin, { node_id: 'pn1:xx', public_key: 'keyX' }, { node_id: 'pn1:dd', public_key: 'keyD' })).toBe(false);
      expect(await store.rotatePeer(origin, filled, { node_id: 'pn1:dd', public_key: 'keyD' })).toBe(true);
      expect(await store.getPeer(origin)).toEqual({ ...filled, node_id: 'pn1:dd', public_key: 'keyD' });
      expect(await store.rotatePeer(origin, filled, { node_id: 'pn1:ee', public_key: 'keyE' })).toBe(false);
      await store.close();
    });
  });
}

describe.skipIf(!postgresDriver.available)('PostgreSQL store: rate-limit counters', () => {
  it('keeps them in an unlogged table, and turns a logged one from an older store unlogged', async () => {
    const { default: pg } = await import('pg');
    const url = await postgresDriver.location();
    // An older store: the counters logged, with a window in progress.
    const old = new pg.Client({ connectionString: url });
    await old.connect();
    await old.query('CREATE TABLE rate_counters (key TEXT PRIMARY KEY, window_start BIGINT NOT NULL, count INTEGER NOT NULL)');
    await old.query('INSERT INTO rate_counters VALUES ($1, $2, 2)', ['live:x', at(0).getTime()]);
    const persistence = async () =>
      (await old.query<{ relpersistence: string }>("SELECT relpersistence FROM pg_class WHERE oid = to_regclass('rate_counters')")).rows[0]!.relpersistence;
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

describe('transient and permanent store errors', () => {
  it('PostgreSQL: outages, deadlocks, lock and statement timeouts are transient; bad data and constraints are permanent', async () => {
    const { default: pg } = await import('pg');
    const failure = (code: string) => Object.assign(new pg.DatabaseError('failed', 0, 'error'), { code });
    for (const code of ['08006', '57P01', '57P03', '53300', '53200', '40001', '40P01', '55P03', '57014']) expect(isUnavailable(failure(code)), code).toBe(true);
    // 22021/22P05: NUL and untranslatable characters (what used to answer 500 retryable); 23505: unique violation.
    for (const code of ['22021', '22P05', '22P02', '23505', '42601', '42P01']) expect(isUnavailable(failure(code)), code).toBe(false);
  });

  it('SQLite: a database locked by another process past busy_timeout is StoreUnavailableError, not a permanent failure', async () => {
    const file = path.join(tempDir('store-busy'), 'store.db');
    const store = createSqliteStore(file);
    const Libsql = createRequire(import.meta.url)('libsql') as new (file: string) => { exec(sql: string): void; close(): void };
    const other = new Libsql(file);
    other.exec('BEGIN IMMEDIATE');
    const error = await store.submitContribution(item(1), { key: 'c', limit: 5, windowMs: hour }, at(0)).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    other.exec('ROLLBACK');
    other.close();
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((await store.submitContribution(item(1), { key: 'c', limit: 5, windowMs: hour }, at(0))).outcome).toBe('created');
    await store.close();
  }, 30_000);
});
