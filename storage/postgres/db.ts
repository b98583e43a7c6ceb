/**
 * The PostgreSQL pool the concern files share: one transaction helper, advisory locks, the
 * versioned migrations of storage/migrations.ts applied at open, and outages reported as
 * StoreUnavailableError. Only the PostgreSQL driver imports this file (and `pg`).
 */
import pg from 'pg';
import { migrationSql, pendingMigrations, SCHEMA_MIGRATIONS_TABLE } from '../migrations.ts';
import { StoreUnavailableError } from '../store.ts';

export type Queryable = Pick<pg.PoolClient, 'query'>;
export type Transaction = <T>(work: (client: pg.PoolClient) => Promise<T>) => Promise<T>;

/** Holds an advisory lock on `key` until the end of the transaction. */
export const lock = (client: Queryable, key: string) => client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [key]);

/** JSONB columns come back parsed. */
export const asIs = (value: unknown): unknown => value;

/**
 * Whether an error is transient — the database cannot be reached or could not complete the
 * statement for the moment — rather than a statement that will fail again: SQLSTATE class 08
 * (connection exception), 57P01-57P03 (shut down, crashed, starting up), class 53
 * (insufficient resources, e.g. too many connections), class 40 (serialization failure,
 * deadlock), 55P03 (lock not available), 57014 (statement cancelled or timed out), a socket
 * error, or pg's own lost-connection errors. Everything else (bad data, constraint) is permanent.
 */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof pg.DatabaseError) return /^(08|57P0[1-3]|53|40|55P03|57014)/.test(error.code ?? '');
  if (!(error instanceof Error)) return false;
  if ('syscall' in error) return true;
  return /^Connection terminated|is not queryable|timeout exceeded when trying to connect/.test(error.message);
}

/** Every method of the store, with an unreachable database reported as StoreUnavailableError. */
export function reportingOutages<S extends object>(store: S): S {
  const wrapped: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(store) as [string, (...args: unknown[]) => Promise<unknown>][]) {
    wrapped[name] = (...args: unknown[]) =>
      method(...args).catch((error: unknown) => {
        throw isUnavailable(error) ? new StoreUnavailableError(error) : error;
      });
  }
  return wrapped as S;
}

export async function openPool(connectionString: string, options: { max?: number } = {}): Promise<{ pool: pg.Pool; transaction: Transaction }> {
  // An unreachable host fails a request after 10 s instead of holding it.
  const pool = new pg.Pool({ connectionString, max: options.max ?? 10, connectionTimeoutMillis: 10_000 });
  // An idle connection lost with the server (crash, restart) is dropped from the pool and
  // reported here; unhandled, the event would end the process. The next query reconnects.
  pool.on('error', () => {});
  // A connection can report a lost server more than once (the server's FATAL message, then the
  // socket's end) while pg-pool listens for one report per checked-out query: without a
  // listener of its own, the second report would end the process. The failing query still
  // rejects (StoreUnavailableError), and the pool drops the connection.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });

  async function transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    // Checked out, a connection lost with the server is reported on the client (the failing
    // query rejects as well); unhandled, the event would end the process.
    const ignore = () => {};
    client.on('error', ignore);
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollback: unknown) => {
        broken = rollback as Error;
      });
      throw error;
    } finally {
      client.removeListener('error', ignore);
      // A connection that could not even roll back is closed, not handed to the next caller.
      client.release(broken);
    }
  }

  try {
    await migrate(pool);
  } catch (error) {
    await pool.end();
    throw error;
  }
  return { pool, transaction };
}

/**
 * Applies the pending migrations in order, each in its own transaction (on one connection) with
 * its row in schema_migrations, while that connection holds a session advisory lock: processes starting together take
 * turns, and the later ones find the work done.
 */
export async function migrate(pool: pg.Pool): Promise<void> {
  const setup = await pool.connect();
  try {
    await setup.query('SELECT pg_advisory_lock(hashtext($1))', ['polyphony-schema']);
    try {
      await setup.query(SCHEMA_MIGRATIONS_TABLE);
      const { rows } = await setup.query<{ version: number }>('SELECT version FROM schema_migrations');
      for (const migration of pendingMigrations(new Set(rows.map((row) => Number(row.version))))) {
        await setup.query('BEGIN');
        try {
          const sql = migrationSql(migration, 'postgres');
          if (sql.trim()) await setup.query(sql);
          await setup.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [migration.version, new Date().toISOString()]);
          await setup.query('COMMIT');
        } catch (error) {
          await setup.query('ROLLBACK');
          throw error;
        }
      }
    } finally {
      await setup.query('SELECT pg_advisory_unlock(hashtext($1))', ['polyphony-schema']);
    }
  } finally {
    setup.release();
  }
}
