/**
 * The SQLite connection the concern files share (libsql ships a prebuilt binary in its npm
 * package): WAL with synchronous=FULL, so an acknowledged write survives kill -9; one
 * transaction helper; the versioned migrations of storage/migrations.ts applied at open.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { migrationSql, pendingMigrations, SCHEMA_MIGRATIONS_TABLE } from '../migrations.ts';
import { StoreUnavailableError } from '../store.ts';

export interface Statement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}
export interface Database {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  close(): void;
}

/** Runs `work` in one write transaction (BEGIN IMMEDIATE), rolled back if it throws. */
export type Transaction = <T>(work: () => T) => T;

/** JSON kept as text. */
export const parseJson = (value: unknown): unknown => JSON.parse(value as string);

/** `file` is a path, or ':memory:' for a store that lives as long as the process. */
export function openDatabase(file: string): { db: Database; transaction: Transaction } {
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const Libsql = createRequire(import.meta.url)('libsql') as new (file: string) => Database;
  const db = new Libsql(file);
  // The busy timeout first: another process opening the same new file may hold its lock while it
  // switches to WAL or migrates, and the switch below would otherwise fail at once with SQLITE_BUSY.
  db.exec('PRAGMA busy_timeout=5000; PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;');
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  const transaction: Transaction = (work) => {
    begin.run();
    try {
      const result = work();
      commit.run();
      return result;
    } catch (error) {
      rollback.run();
      throw error;
    }
  };
  migrate(db, transaction);
  return { db, transaction };
}

/**
 * Applies the pending migrations in order, each in its own write transaction, which also
 * re-reads the applied versions: of two processes opening one file, the second finds the
 * first's work done.
 */
export function migrate(db: Database, transaction: Transaction): void {
  db.exec(SCHEMA_MIGRATIONS_TABLE);
  const applied = () => new Set((db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((row) => Number(row.version)));
  for (const migration of pendingMigrations(applied())) {
    transaction(() => {
      if (applied().has(migration.version)) return;
      const sql = migrationSql(migration, 'sqlite');
      if (sql.trim()) db.exec(sql);
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(migration.version, new Date().toISOString());
    });
  }
}

/**
 * A database another process holds locked past busy_timeout (SQLITE_BUSY, SQLITE_LOCKED) is
 * transient, like PostgreSQL's outages: StoreUnavailableError (503, retryable). Other SQLite
 * errors are permanent and stay as they are.
 */
export function reportingBusy<S extends object>(store: S): S {
  const wrapped: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(store) as [string, (...args: unknown[]) => Promise<unknown>][]) {
    wrapped[name] = (...args: unknown[]) =>
      method(...args).catch((error: unknown) => {
        throw /^SQLITE_(BUSY|LOCKED)/.test(String((error as { code?: unknown })?.code ?? '')) ? new StoreUnavailableError(error) : error;
      });
  }
  return wrapped as S;
}
