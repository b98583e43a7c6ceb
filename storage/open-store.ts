/** Chooses the store driver from configuration: PostgreSQL for a postgres:// URL, else SQLite. */
import { createPostgresStore } from './postgres-store.ts';
import { createSqliteStore } from './sqlite-store.ts';
import type { Store } from './store.ts';

export async function openStore(location: string): Promise<Store> {
  if (/^postgres(ql)?:\/\//.test(location)) return createPostgresStore(location);
  return createSqliteStore(location);
}

export function isSharedStore(location: string): boolean {
  return /^postgres(ql)?:\/\//.test(location);
}
