/**
 * The two store drivers every store test runs on: a fresh SQLite file, or a fresh database on
 * a throw-away PostgreSQL cluster (started on first use). In CI PostgreSQL is always taken as
 * available (devkit/postgres.ts), so a missing server fails the suites instead of skipping them.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { createPostgresStore } from '../../storage/postgres-store.ts';
import { createSqliteStore } from '../../storage/sqlite-store.ts';
import type { Store } from '../../storage/store.ts';
import { tempDir } from '../../devkit/app.ts';
import { POSTGRES_AVAILABLE, startPostgres, type TestPostgres } from '../../devkit/postgres.ts';

/** The test's own connection to a store's database, past the driver (e.g. to lay an older layout). */
export interface RawDatabase {
  /** Runs statements; `?` placeholders on both dialects. */
  run(sql: string, params?: unknown[]): Promise<void>;
  rows<T>(sql: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

export interface StoreDriver {
  name: 'sqlite' | 'postgres';
  available: boolean;
  /** A fresh, empty store. */
  open(): Promise<Store>;
  /** A new, empty location (a file or a database URL), with nothing in it yet. */
  location(): Promise<string>;
  /** Opens the store at a location (creating or migrating its tables). */
  openAt(location: string): Promise<Store>;
  raw(location: string): Promise<RawDatabase>;
}

export function writeStoreDrivers(): { drivers: StoreDriver[]; stop(): Promise<void>; postgres(): Promise<TestPostgres> } {
  let postgres: Promise<TestPostgres> | undefined;
  let databases = 0;
  const cluster = () => (postgres ??= startPostgres());
  const sqlite: StoreDriver = {
    name: 'sqlite',
    available: true,
    location: async () => path.join(tempDir('writes'), 'store.db'),
    openAt: async (file) => createSqliteStore(file),
    open: async () => createSqliteStore(await sqlite.location()),
    async raw(file) {
      const Libsql = createRequire(import.meta.url)('libsql') as new (file: string) => {
        exec(sql: string): void;
        prepare(sql: string): { run(...values: unknown[]): unknown; all(...values: unknown[]): unknown[] };
        close(): void;
      };
      const db = new Libsql(file);
      return {
        run: async (sql, params) => void (params ? db.prepare(sql).run(...params) : db.exec(sql)),
        rows: async <T>(sql: string, params: unknown[] = []) => db.prepare(sql).all(...params) as T[],
        close: async () => db.close(),
      };
    },
  };
  const postgresDriver: StoreDriver = {
    name: 'postgres',
    available: POSTGRES_AVAILABLE,
    async location() {
      const { url } = await cluster();
      const { default: pg } = await import('pg');
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      const name = `writes_${++databases}`;
      await admin.query(`CREATE DATABASE ${name}`);
      await admin.end();
      return url.replace(/\/postgres$/, `/${name}`);
    },
    openAt: (url) => createPostgresStore(url),
    open: async () => createPostgresStore(await postgresDriver.location()),
    async raw(url) {
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const numbered = (sql: string) => {
        let n = 0;
        return sql.replace(/\?/g, () => `$${++n}`);
      };
      return {
        run: async (sql, params) => void (await client.query(numbered(sql), params)),
        rows: async <T>(sql: string, params: unknown[] = []) => (await client.query(numbered(sql), params)).rows as T[],
        close: () => client.end(),
      };
    },
  };
  return {
    drivers: [sqlite, postgresDriver],
    postgres: cluster,
    async stop() {
      if (postgres) (await postgres).stop();
    },
  };
}
