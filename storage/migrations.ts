/**
 * The store's schema as one ordered list of numbered migrations, for both drivers. Each is one
 * SQL text both run, or a pair where the dialects differ (JSON as TEXT or JSONB, REAL or
 * DOUBLE PRECISION, what SQLite cannot ALTER). A store records the versions it has applied in
 * `schema_migrations` (version, applied_at); at open the driver applies the pending ones in
 * order, each in its own transaction with its row in schema_migrations.
 *
 * A store made before versioning has tables but no schema_migrations: it starts at version 0,
 * and migrations 1–3 are written to accept any layout such a store can have (CREATE … IF NOT
 * EXISTS, a rebuild that keeps every row, DROP … IF EXISTS), so it is brought up to date with
 * its rows. New migrations are appended; an applied one is never edited.
 */
export type Dialect = 'sqlite' | 'postgres';

export interface Migration {
  version: number;
  name: string;
  /** One text both drivers run, or one per dialect. */
  sql: string | Record<Dialect, string>;
}

/** SQLite cannot drop a column constraint: migration 2 rebuilds the table from this definition. */
const SQLITE_CONTRIBUTIONS = `
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, record_id TEXT, identity TEXT NOT NULL, justification TEXT,
  payload TEXT NOT NULL, content_hash TEXT NOT NULL, idempotency_key TEXT, client TEXT NOT NULL,
  status TEXT NOT NULL, created_at TEXT NOT NULL, reviewed_at TEXT, reviewer TEXT, reason TEXT,
  reviews TEXT NOT NULL DEFAULT '[]'`;
const CONTRIBUTION_COLUMNS =
  'id, kind, record_id, identity, justification, payload, content_hash, idempotency_key, client, status, created_at, reviewed_at, reviewer, reason, reviews';
const CONTRIBUTION_INDEXES = `
CREATE INDEX IF NOT EXISTS contributions_status ON contributions(status, created_at);
CREATE INDEX IF NOT EXISTS contributions_hash ON contributions(content_hash, status);`;

/** Tables whose columns are the same words in both dialects. */
const PLAIN_TABLES = `
CREATE INDEX IF NOT EXISTS jobs_status ON jobs(status);
CREATE TABLE IF NOT EXISTS plays (slug TEXT NOT NULL, client TEXT NOT NULL, day TEXT NOT NULL, PRIMARY KEY (slug, client, day));
CREATE TABLE IF NOT EXISTS secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS job_stages (job_id TEXT NOT NULL, seq INTEGER NOT NULL, stage TEXT NOT NULL, PRIMARY KEY (job_id, seq));
CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, client TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS kept_councils (
  id TEXT PRIMARY KEY, result TEXT NOT NULL, created_at TEXT NOT NULL, expires_at TEXT NOT NULL, persisted_id TEXT
);
CREATE TABLE IF NOT EXISTS tension_sightings (
  id TEXT PRIMARY KEY, tension_key TEXT NOT NULL, data TEXT NOT NULL, seen_at TEXT NOT NULL, state TEXT NOT NULL, reviewer TEXT, reviewed_at TEXT
);
CREATE TABLE IF NOT EXISTS federation_peers (
  origin TEXT PRIMARY KEY, node_id TEXT NOT NULL, public_key TEXT NOT NULL, last_signed_at TEXT NOT NULL
);`;

/** The tables that differ only in their JSON, number and persistence words. */
function typedTables(words: { json: string; real: string; bigint: string; counters: string }): string {
  return `
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL, input ${words.json} NOT NULL,
  result ${words.json}, error ${words.json}, attempts INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS session_exchanges (
  session_id TEXT NOT NULL, seq INTEGER NOT NULL, exchange ${words.json} NOT NULL, at TEXT NOT NULL,
  PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS spend (
  at TEXT NOT NULL, purpose TEXT NOT NULL, model TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, cost_usd ${words.real} NOT NULL
);
CREATE TABLE IF NOT EXISTS spend_reservations (
  id TEXT PRIMARY KEY, purpose TEXT NOT NULL, model TEXT NOT NULL, amount_usd ${words.real} NOT NULL, expires_at ${words.bigint} NOT NULL
);
CREATE TABLE IF NOT EXISTS atlas_records (
  id TEXT PRIMARY KEY, frontmatter ${words.json} NOT NULL, body TEXT NOT NULL, persisted_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS idempotency_keys (
  client TEXT NOT NULL, operation TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL,
  acknowledgement TEXT, reserved_at ${words.bigint} NOT NULL, PRIMARY KEY (client, operation, key)
);
CREATE ${words.counters} TABLE IF NOT EXISTS rate_counters (key TEXT PRIMARY KEY, window_start ${words.bigint} NOT NULL, count INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS federation_imports (
  id TEXT PRIMARY KEY, origin_node TEXT NOT NULL, origin TEXT NOT NULL, record_id TEXT NOT NULL,
  content_hash TEXT NOT NULL, markdown TEXT NOT NULL, provenance ${words.json} NOT NULL, status TEXT NOT NULL,
  staged_at TEXT NOT NULL, reviewed_at TEXT, reviewer TEXT, reason TEXT,
  UNIQUE (origin_node, record_id, content_hash)
);`;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'tables of every concern',
    sql: {
      sqlite: `${typedTables({ json: 'TEXT', real: 'REAL', bigint: 'INTEGER', counters: '' })}
CREATE TABLE IF NOT EXISTS contributions (${SQLITE_CONTRIBUTIONS});
${CONTRIBUTION_INDEXES}
${PLAIN_TABLES}`,
      // Rate-limit counters are the hottest rows (every limited request writes two) and the
      // only state whose loss after a database crash harms nobody (the windows start again):
      // unlogged, they skip the write-ahead log and its flush.
      postgres: `${typedTables({ json: 'JSONB', real: 'DOUBLE PRECISION', bigint: 'BIGINT', counters: 'UNLOGGED' })}
CREATE TABLE IF NOT EXISTS contributions (
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, record_id TEXT, identity TEXT NOT NULL, justification TEXT,
  payload JSONB NOT NULL, content_hash TEXT NOT NULL, idempotency_key TEXT, client TEXT NOT NULL,
  status TEXT NOT NULL, created_at TEXT NOT NULL, reviewed_at TEXT, reviewer TEXT, reason TEXT,
  reviews JSONB NOT NULL DEFAULT '[]'::jsonb
);
${CONTRIBUTION_INDEXES}
${PLAIN_TABLES}`,
    },
  },
  {
    version: 2,
    // Keys are scoped per client and operation in idempotency_keys; stores made before had a
    // global UNIQUE on contributions.idempotency_key, which refused a second client's key.
    name: 'idempotency keys scoped per client and operation',
    sql: {
      sqlite: `CREATE TABLE contributions_scoped (${SQLITE_CONTRIBUTIONS});
INSERT INTO contributions_scoped (${CONTRIBUTION_COLUMNS}) SELECT ${CONTRIBUTION_COLUMNS} FROM contributions;
DROP TABLE contributions;
ALTER TABLE contributions_scoped RENAME TO contributions;
${CONTRIBUTION_INDEXES}`,
      postgres: 'ALTER TABLE contributions DROP CONSTRAINT IF EXISTS contributions_idempotency_key_key;',
    },
  },
  {
    version: 3,
    // Stores made before kept the counters logged; a table already unlogged is left as it is.
    name: 'rate-limit counters unlogged',
    sql: { sqlite: '', postgres: 'ALTER TABLE rate_counters SET UNLOGGED;' },
  },
  {
    version: 4,
    // The heartbeat of a running job pushes this on; another process reclaims the job only once it has passed.
    name: 'job leases',
    sql: 'ALTER TABLE jobs ADD COLUMN lease_expires_at BIGINT;',
  },
  {
    version: 5,
    // The corpus revision of the last manifest a pull accepted from a peer: the next pull asks the peer for what changed since ('' before any).
    name: 'federation peers remember the corpus revision',
    sql: "ALTER TABLE federation_peers ADD COLUMN last_corpus_rev TEXT NOT NULL DEFAULT '';",
  },
];

export const SCHEMA_MIGRATIONS_TABLE = 'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)';

/** The SQL of one migration for one driver. */
export function migrationSql(migration: Migration, dialect: Dialect): string {
  return typeof migration.sql === 'string' ? migration.sql : migration.sql[dialect];
}

/** The migrations a store at these applied versions still needs, in order. */
export function pendingMigrations(applied: ReadonlySet<number>): Migration[] {
  return MIGRATIONS.filter((migration) => !applied.has(migration.version));
}

/** The newest schema version the code knows. */
export const LATEST_VERSION = Math.max(...MIGRATIONS.map((migration) => migration.version));
