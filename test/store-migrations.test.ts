/**
 * Versioned migrations on both drivers: a fresh store records every version; a store laid out
 * by the code before versioning (tables, rows, no schema_migrations) is recognised and brought
 * up to date with its rows; opening again applies nothing.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { LATEST_VERSION, MIGRATIONS } from '../storage/migrations.ts';
import { LEGACY_DDL } from './helpers/legacy-store-ddl.ts';
import { writeStoreDrivers } from './helpers/write-stores.ts';

const { drivers, stop } = writeStoreDrivers();
afterAll(() => stop(), 60_000);

const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute));
const versions = MIGRATIONS.map((migration) => migration.version);

describe('the migration list', () => {
  it('is numbered 1, 2, 3 … in order, without gaps', () => {
    expect(versions).toEqual(versions.map((_, index) => index + 1));
    expect(LATEST_VERSION).toBe(versions.length);
  });
});

for (const driver of drivers) {
  describe.skipIf(!driver.available)(`migrations: ${driver.name}`, () => {
    it('records every version on a fresh store, once, and applies nothing on the next open', async () => {
      const location = await driver.location();
      await (await driver.openAt(location)).close();
      const raw = await driver.raw(location);
      const first = await raw.rows<{ version: number; applied_at: string }>('SELECT version, applied_at FROM schema_migrations ORDER BY version');
      expect(first.map((row) => Number(row.version))).toEqual(versions);
      // two processes opening together: the migrations are applied once
      await Promise.all([driver.openAt(location), driver.openAt(location)]).then((stores) => Promise.all(stores.map((store) => store.close())));
      expect(await raw.rows('SELECT version, applied_at FROM schema_migrations ORDER BY version')).toEqual(first);
      await raw.close();
    }, 60_000);

    it('applies each migration in its own transaction: one that fails leaves the earlier ones applied and itself not at all', async () => {
      const location = await driver.location();
      const raw = await driver.raw(location);
      await raw.run(LEGACY_DDL[driver.name]);
      // A column migration 4 adds already there: its ALTER fails.
      await raw.run('ALTER TABLE jobs ADD COLUMN lease_expires_at BIGINT');
      await expect(driver.openAt(location)).rejects.toThrow();
      expect((await raw.rows<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).map((row) => Number(row.version))).toEqual(
        versions.filter((version) => version < 4),
      );
      // once the cause is gone, the next open applies what is pending
      await raw.run('ALTER TABLE jobs DROP COLUMN lease_expires_at');
      await (await driver.openAt(location)).close();
      expect((await raw.rows<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).map((row) => Number(row.version))).toEqual(
        versions,
      );
      await raw.close();
    }, 60_000);

    it.runIf(driver.name === 'sqlite')(
      'rolls back every statement of a failing migration (SQLite rebuilds a table in several)',
      async () => {
        const location = await driver.location();
        const raw = await driver.raw(location);
        // contributions without its reviews column: migration 2 creates the new table, then its copy fails
        await raw.run(LEGACY_DDL.sqlite.replace(/,\s*reviews TEXT NOT NULL DEFAULT '\[\]'/, ''));
        await raw.run(
          "INSERT INTO contributions (id, kind, identity, payload, content_hash, client, status, created_at) VALUES ('ctb_x', 'answer', 't', '{}', 'h', 'c', 'pending', 'then')",
        );
        await expect(driver.openAt(location)).rejects.toThrow();
        expect(await raw.rows("SELECT name FROM sqlite_master WHERE name = 'contributions_scoped'")).toEqual([]);
        expect(await raw.rows('SELECT id FROM contributions')).toEqual([{ id: 'ctb_x' }]);
        expect((await raw.rows<{ version: number }>('SELECT version FROM schema_migrations')).map((row) => Number(row.version))).toEqual([1]);
        await raw.close();
      },
      60_000,
    );

    it('brings a store laid out before versioning up to date and keeps its rows', async () => {
      const location = await driver.location();
      const raw = await driver.raw(location);
      await raw.run(LEGACY_DDL[driver.name]);
      const json = (value: unknown) => JSON.stringify(value);
      await raw.run('INSERT INTO jobs (id, kind, status, input, result, error, attempts, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
        'job_old',
        'council',
        'done',
        json({ q: 'old?' }),
        json({ answer: 'kept' }),
        null,
        1,
        at(0).toISOString(),
        at(1).toISOString(),
      ]);
      await raw.run('INSERT INTO jobs (id, kind, status, input, attempts, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
        'job_running',
        'trace',
        'running',
        json(null),
        1,
        at(0).toISOString(),
        at(2).toISOString(),
      ]);
      await raw.run(
        'INSERT INTO contributions (id, kind, record_id, identity, justification, payload, content_hash, idempotency_key, client, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        ['ctb_old', 'answer', 'X-D1', 'tester', 'missing_voice', json({ answer: 'old' }), 'hash-old', 'K', 'client-a', 'pending', at(0).toISOString()],
      );
      await raw.run('INSERT INTO sessions (id, client, created_at) VALUES (?, ?, ?)', ['ses_old', 'client-a', at(0).toISOString()]);
      await raw.run('INSERT INTO session_exchanges (session_id, seq, exchange, at) VALUES (?, ?, ?, ?)', [
        'ses_old',
        1,
        json({ question: 'q', answer: 'a', sources: [], at: at(1).toISOString() }),
        at(1).toISOString(),
      ]);
      await raw.run('INSERT INTO spend (at, purpose, model, prompt_tokens, completion_tokens, cost_usd) VALUES (?, ?, ?, ?, ?, ?)', [
        at(0).toISOString(),
        'council',
        'm',
        1,
        1,
        0.5,
      ]);
      await raw.run('INSERT INTO atlas_records (id, frontmatter, body, persisted_at) VALUES (?, ?, ?, ?)', [
        'X-D7',
        json({ id: 'X-D7' }),
        'body',
        at(0).toISOString(),
      ]);
      await raw.run('INSERT INTO secrets (name, value) VALUES (?, ?)', ['client-hash-salt', 'old-salt']);
      await raw.run('INSERT INTO rate_counters (key, window_start, count) VALUES (?, ?, ?)', ['live:x', at(0).getTime(), 2]);
      await raw.run('INSERT INTO tension_sightings (id, tension_key, data, seen_at, state) VALUES (?, ?, ?, ?, ?)', [
        's_old',
        'a__b__t',
        json({ id: 's_old', key: 'a__b__t', seen_at: at(0).toISOString() }),
        at(0).toISOString(),
        'pending',
      ]);
      await raw.run('INSERT INTO federation_peers (origin, node_id, public_key, last_signed_at) VALUES (?, ?, ?, ?)', [
        'http://a.test',
        'pn1:aa',
        'keyA',
        at(0).toISOString(),
      ]);

      const store = await driver.openAt(location);
      expect((await raw.rows<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).map((row) => Number(row.version))).toEqual(
        versions,
      );
      expect(await store.getJob('job_old')).toMatchObject({
        status: 'done',
        input: { q: 'old?' },
        result: { answer: 'kept' },
        attempts: 1,
        lease_expires_at: null,
      });
      expect(await store.getContribution('ctb_old')).toMatchObject({ status: 'pending', payload: { answer: 'old' }, idempotency_key: 'K', reviews: [] });
      expect(await store.findSession('ses_old', 3_600_000, at(2))).toEqual({
        client: 'client-a',
        exchanges: [{ question: 'q', answer: 'a', sources: [], at: at(1).toISOString() }],
      });
      expect(await store.totalSpendUsd()).toBe(0.5);
      expect(await store.listRecords()).toEqual([{ id: 'X-D7', frontmatter: { id: 'X-D7' }, body: 'body', persisted_at: at(0).toISOString() }]);
      expect(await store.secret('client-hash-salt')).toBe('old-salt');
      expect((await store.hit({ key: 'live:x', limit: 2, windowMs: 60_000 }, at(0))).allowed).toBe(false);
      expect((await store.listTensionSightings()).map((item) => item.id)).toEqual(['s_old']);
      expect(await store.getPeer('http://a.test')).toMatchObject({ node_id: 'pn1:aa', last_corpus_rev: '' });
      // the old global UNIQUE on the key is gone (migration 2): another client may use "K"
      const limit = { key: 'contribute:client-b', limit: 5, windowMs: 3_600_000 };
      const other = {
        id: 'ctb_new',
        kind: 'answer' as const,
        record_id: 'X-D1',
        identity: 'tester',
        justification: 'missing_voice',
        payload: { answer: 'new' },
        content_hash: 'hash-new',
        idempotency_key: 'K',
        client: 'client-b',
      };
      expect((await store.submitContribution(other, limit, at(3))).outcome).toBe('created');
      // the job lease column (migration 4) works on a job the old code left running
      expect((await store.unfinishedJobs()).map((job) => [job.id, job.lease_expires_at])).toEqual([['job_running', null]]);
      await store.requeueJob('job_running', at(4));
      expect(await store.claimJob('job_running', at(5), 60_000)).toBe(true);
      expect((await store.getJob('job_running'))!.lease_expires_at).toBe(at(6).toISOString());
      await store.close();
      await raw.close();
    }, 60_000);
  });
}
