/**
 * Chooses the store driver from configuration: PostgreSQL for a postgres:// URL, else SQLite.
 * The PostgreSQL driver (and its client, `pg`) is imported only here, when such a store is
 * opened: the embedded SQLite path never loads it.
 */
import { createSqliteStore } from './sqlite-store.ts';
import type { Store } from './store.ts';

export async function openStore(location: string): Promise<Store> {
  if (isSharedStore(location)) {
    const { createPostgresStore } = await import('./postgres-store.ts');
    return createPostgresStore(location);
  }
  return createSqliteStore(location);
}

export function isSharedStore(location: string): boolean {
  return /^postgres(ql)?:\/\//.test(location);
}
