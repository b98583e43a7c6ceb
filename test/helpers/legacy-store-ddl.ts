/**
 * The table definitions the store had before versioned migrations (main at e6ae60c:
 * storage/sqlite-store.ts, sqlite-federation.ts, postgres-store.ts, postgres-federation.ts),
 * copied verbatim as a fixture: a store laid out by them has every table and no
 * schema_migrations. Never edit to match the current schema; that is the point.
 */
export const LEGACY_DDL = {
  sqlite: `
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL, input TEXT NOT NULL,
  result TEXT, error TEXT, attempts INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_status ON jobs(status);
CREATE TABLE IF NOT EXISTS session_exchanges (
  session_id TEXT NOT NULL, seq INTEGER NOT NULL, exchange TEXT NOT NULL, at TEXT NOT NULL,
  PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS spend (
  at TEXT NOT NULL, purpose TEXT NOT NULL, model TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, cost_usd REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS spend_reservations (
  id TEXT PRIMARY KEY, purpose TEXT NOT NULL, model TEXT NOT NULL, amount_usd REAL NOT NULL, expires_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS atlas_records (
  id TEXT PRIMARY KEY, frontmatter TEXT NOT NULL, body TEXT NOT NULL, persisted_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS contributions (
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, record_id TEXT, identity TEXT NOT NULL, justification TEXT,
  payload TEXT NOT NULL, content_hash TEXT NOT NULL, idempotency_key TEXT, client TEXT NOT NULL,
  status TEXT NOT NULL, created_at TEXT NOT NULL, reviewed_at TEXT, reviewer TEXT, reason TEXT,
  reviews TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX IF NOT EXISTS contributions_status ON contributions(status, created_at);
CREATE INDEX IF NOT EXISTS contributions_hash ON contributions(content_hash, status);
CREATE TABLE IF NOT EXISTS idempotency_keys (
  client TEXT NOT NULL, operation TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL,
  acknowledgement TEXT, reserved_at INTEGER NOT NULL, PRIMARY KEY (client, operation, key)
);
CREATE TABLE IF NOT EXISTS rate_counters (
  key TEXT PRIMARY KEY, window_start INTEGER NOT NULL, count INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS plays (
  slug TEXT NOT NULL, client TEXT NOT NULL, day TEXT NOT NULL, PRIMARY KEY (slug, client, day)
);
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
);
CREATE TABLE IF NOT EXISTS federation_imports (
  id TEXT PRIMARY KEY, origin_node TEXT NOT NULL, origin TEXT NOT NULL, record_id TEXT NOT NULL,
  content_hash TEXT NOT NULL, markdown TEXT NOT NULL, provenance TEXT NOT NULL, status TEXT NOT NULL,
  staged_at TEXT NOT NULL, reviewed_at TEXT, reviewer TEXT, reason TEXT,
  UNIQUE (origin_node, record_id, content_hash)
);
`,
  postgres: `
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL, input JSONB NOT NULL,
  result JSONB, error JSONB, attempts INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_status ON jobs(status);
CREATE TABLE IF NOT EXISTS session_exchanges (
  session_id TEXT NOT NULL, seq INTEGER NOT NULL, exchange JSONB NOT NULL, at TEXT NOT NULL,
  PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS spend (
  at TEXT NOT NULL, purpose TEXT NOT NULL, model TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, cost_usd DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS spend_reservations (
  id TEXT PRIMARY KEY, purpose TEXT NOT NULL, model TEXT NOT NULL, amount_usd DOUBLE PRECISION NOT NULL, expires_at BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS atlas_records (
  id TEXT PRIMARY KEY, frontmatter JSONB NOT NULL, body TEXT NOT NULL, persisted_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS contributions (
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, record_id TEXT, identity TEXT NOT NULL, justification TEXT,
  payload JSONB NOT NULL, content_hash TEXT NOT NULL, idempotency_key TEXT, client TEXT NOT NULL,
  status TEXT NOT NULL, created_at TEXT NOT NULL, reviewed_at TEXT, reviewer TEXT, reason TEXT,
  reviews JSONB NOT NULL DEFAULT '[]'::jsonb
);
CREATE INDEX IF NOT EXISTS contributions_status ON contributions(status, created_at);
CREATE INDEX IF NOT EXISTS contributions_hash ON contributions(content_hash, status);
CREATE TABLE IF NOT EXISTS idempotency_keys (
  client TEXT NOT NULL, operation TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL,
  acknowledgement TEXT, reserved_at BIGINT NOT NULL, PRIMARY KEY (client, operation, key)
);
CREATE UNLOGGED TABLE IF NOT EXISTS rate_counters (key TEXT PRIMARY KEY, window_start BIGINT NOT NULL, count INTEGER NOT NULL);
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
);
CREATE TABLE IF NOT EXISTS federation_imports (
  id TEXT PRIMARY KEY, origin_node TEXT NOT NULL, origin TEXT NOT NULL, record_id TEXT NOT NULL,
  content_hash TEXT NOT NULL, markdown TEXT NOT NULL, provenance JSONB NOT NULL, status TEXT NOT NULL,
  staged_at TEXT NOT NULL, reviewed_at TEXT, reviewer TEXT, reason TEXT,
  UNIQUE (origin_node, record_id, content_hash)
);
`,
};
