/**
 * The two store drivers behind a write-path test: a fresh SQLite file, or a fresh database
 * on a throw-away PostgreSQL cluster (started on first use; in CI it is always available).
 */
import path from 'node:path';
import { createPostgresStore } from '../../storage/postgres-store.ts';
import { createSqliteStore } from '../../storage/sqlite-store.ts';
import type { Store } from '../../storage/store.ts';
import { tempDir } from '../../devkit/app.ts';
import { POSTGRES_AVAILABLE, startPostgres, type TestPostgres } from '../../devkit/postgres.ts';

export interface StoreDriver {
  name: 'sqlite' | 'postgres';
  available: boolean;
  /** A fresh, empty store. */
  open(): Promise<Store>;
}

export function writeStoreDrivers(): { drivers: StoreDriver[]; stop(): Promise<void> } {
  let postgres: Promise<TestPostgres> | undefined;
  let databases = 0;
  const drivers: StoreDriver[] = [
    { name: 'sqlite', available: true, open: async () => createSqliteStore(path.join(tempDir('writes'), 'store.db')) },
    {
      name: 'postgres',
      available: POSTGRES_AVAILABLE,
      open: async () => {
        postgres ??= startPostgres();
        const { url } = await postgres;
        const { default: pg } = await import('pg');
        const admin = new pg.Client({ connectionString: url });
        await admin.connect();
        const name = `writes_${++databases}`;
        await admin.query(`CREATE DATABASE ${name}`);
        await admin.end();
        return createPostgresStore(url.replace(/\/postgres$/, `/${name}`));
      },
    },
  ];
  return {
    drivers,
    async stop() {
      if (postgres) (await postgres).stop();
    },
  };
}
