/**
 * Embedded store on SQLite (libsql ships a prebuilt binary in its npm package).
 * WAL with synchronous=FULL: an acknowledged write survives kill -9.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { contributionPageStatement } from './contribution-query.ts';
import { decideReservation } from './idempotency.ts';
import { CANCELLED, StoreUnavailableError, withinCeiling, type ContributionRecord, type Exchange, type JobRecord, type JobStage, type KeptCouncil, type PersistedRecord, type RateLimit, type Reservation, type SpendEntry, type SpendReservation, type Store, type SubmitOutcome } from './store.ts';
import { refusingIllFormedText } from './text-check.ts';
import { toSighting, type SightingRow } from './sighting-row.ts';
import { createSqliteFederation } from './sqlite-federation.ts';

interface Statement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}
interface Database {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  close(): void;
}

// idempotency_key is the key a contribution was sent with, for the record; keys are scoped
// (per client and operation) in idempotency_keys. Stores made before had it UNIQUE, i.e. global.
const CONTRIBUTIONS_TABLE = `
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, record_id TEXT, identity TEXT NOT NULL, justification TEXT,
  payload TEXT NOT NULL, content_hash TEXT NOT NULL, idempotency_key TEXT, client TEXT NOT NULL,
  status TEXT NOT NULL, created_at TEXT NOT NULL, reviewed_at TEXT, reviewer TEXT, reason TEXT,
  reviews TEXT NOT NULL DEFAULT '[]'
`;

const SCHEMA = `
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
CREATE TABLE IF NOT EXISTS contributions (${CONTRIBUTIONS_TABLE});
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
`;


const CONTRIBUTION_COLUMNS = 'id, kind, record_id, identity, justification, payload, content_hash, idempotency_key, client, status, created_at, reviewed_at, reviewer, reason, reviews';

interface ContributionRow {
  id: string;
  kind: string;
  record_id: string | null;
  identity: string;
  justification: string | null;
  payload: string;
  content_hash: string;
  idempotency_key: string | null;
  client: string;
  status: string;
  created_at: string;
  reviewed_at: string | null;
  reviewer: string | null;
  reason: string | null;
  reviews: string;
}

function toContribution(row: ContributionRow): ContributionRecord {
  return {
    id: row.id,
    kind: row.kind as ContributionRecord['kind'],
    record_id: row.record_id,
    identity: row.identity,
    justification: row.justification,
    payload: JSON.parse(row.payload) as Record<string, unknown>,
    content_hash: row.content_hash,
    idempotency_key: row.idempotency_key,
    client: row.client,
    status: row.status as ContributionRecord['status'],
    created_at: row.created_at,
    reviewed_at: row.reviewed_at,
    reviewer: row.reviewer,
    reason: row.reason,
    reviews: JSON.parse(row.reviews) as ContributionRecord['reviews'],
  };
}

interface JobRow {
  id: string;
  kind: string;
  status: string;
  input: string;
  result: string | null;
  error: string | null;
  attempts: number;
  created_at: string;
  updated_at: string;
}

function toJob(row: JobRow): JobRecord {
  return {
    id: row.id,
    kind: row.kind as JobRecord['kind'],
    status: row.status as JobRecord['status'],
    input: JSON.parse(row.input) as unknown,
    result: row.result === null ? null : (JSON.parse(row.result) as unknown),
    error: row.error === null ? null : (JSON.parse(row.error) as JobRecord['error']),
    attempts: Number(row.attempts),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/**
 * A store made before keys were scoped has a global UNIQUE on contributions.idempotency_key,
 * which would refuse a second client's use of the same key: the table is rebuilt without it
 * (SQLite cannot drop a column constraint), rows and indexes kept, in one transaction.
 */
function migrateGlobalIdempotencyKeys(db: Database): void {
  const definition = () => (db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'contributions'").get() as { sql: string }).sql;
  if (!/idempotency_key\s+TEXT\s+UNIQUE/i.test(definition())) return;
  db.exec('BEGIN IMMEDIATE');
  try {
    if (/idempotency_key\s+TEXT\s+UNIQUE/i.test(definition())) {
      db.exec(`CREATE TABLE contributions_scoped (${CONTRIBUTIONS_TABLE});
        INSERT INTO contributions_scoped (${CONTRIBUTION_COLUMNS}) SELECT ${CONTRIBUTION_COLUMNS} FROM contributions;
        DROP TABLE contributions;
        ALTER TABLE contributions_scoped RENAME TO contributions;
        CREATE INDEX IF NOT EXISTS contributions_status ON contributions(status, created_at);
        CREATE INDEX IF NOT EXISTS contributions_hash ON contributions(content_hash, status);`);
    }
    db.exec('COMMIT');
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}

/** `file` is a path, or ':memory:' for a store that lives as long as the process. */
export function createSqliteStore(file: string): Store {
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const require = createRequire(import.meta.url);
  const Libsql = require('libsql') as new (file: string) => Database;
  const db = new Libsql(file);
  db.exec('PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA busy_timeout=5000;');
  db.exec(SCHEMA);
  migrateGlobalIdempotencyKeys(db);

  const statements = {
    insertJob: db.prepare('INSERT INTO jobs (id, kind, status, input, attempts, created_at, updated_at) VALUES (?, ?, ?, ?, 0, ?, ?)'),
    getJob: db.prepare('SELECT id, kind, status, input, result, error, attempts, created_at, updated_at FROM jobs WHERE id = ?'),
    claimJob: db.prepare("UPDATE jobs SET status = 'running', attempts = attempts + 1, updated_at = ? WHERE id = ? AND status = 'queued'"),
    finishJob: db.prepare("UPDATE jobs SET status = ?, result = ?, error = ?, updated_at = ? WHERE id = ? AND status = 'running'"),
    cancelJob: db.prepare("UPDATE jobs SET status = 'cancelled', error = ?, updated_at = ? WHERE id = ? AND status IN ('queued', 'running')"),
    unfinished: db.prepare("SELECT id, kind, status, input, result, error, attempts, created_at, updated_at FROM jobs WHERE status IN ('queued', 'running') ORDER BY created_at"),
    requeue: db.prepare("UPDATE jobs SET status = 'queued', updated_at = ? WHERE id = ?"),
    maxSeq: db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM session_exchanges WHERE session_id = ?'),
    insertExchange: db.prepare('INSERT INTO session_exchanges (session_id, seq, exchange, at) VALUES (?, ?, ?, ?)'),
    trimSession: db.prepare('DELETE FROM session_exchanges WHERE session_id = ? AND seq <= ?'),
    session: db.prepare('SELECT exchange, at FROM session_exchanges WHERE session_id = ? ORDER BY seq'),
    dropSession: db.prepare('DELETE FROM session_exchanges WHERE session_id = ?'),
    addStage: db.prepare('INSERT INTO job_stages (job_id, seq, stage) SELECT ?, COALESCE(MAX(seq), 0) + 1, ? FROM job_stages WHERE job_id = ?'),
    stages: db.prepare('SELECT stage FROM job_stages WHERE job_id = ? ORDER BY seq'),
    insertSession: db.prepare('INSERT INTO sessions (id, client, created_at) VALUES (?, ?, ?)'),
    issuedSession: db.prepare('SELECT client, created_at FROM sessions WHERE id = ?'),
    purgeCouncils: db.prepare('DELETE FROM kept_councils WHERE expires_at < ?'),
    keepCouncil: db.prepare('INSERT INTO kept_councils (id, result, created_at, expires_at) VALUES (?, ?, ?, ?)'),
    getCouncil: db.prepare('SELECT id, result, created_at, expires_at, persisted_id FROM kept_councils WHERE id = ? AND expires_at >= ?'),
    setCouncilPersisted: db.prepare('UPDATE kept_councils SET persisted_id = ? WHERE id = ? AND persisted_id IS ?'),
    insertSpend: db.prepare('INSERT INTO spend (at, purpose, model, prompt_tokens, completion_tokens, cost_usd) VALUES (?, ?, ?, ?, ?, ?)'),
    totalSpend: db.prepare('SELECT COALESCE(SUM(cost_usd), 0) AS total FROM spend'),
    dropExpired: db.prepare('DELETE FROM spend_reservations WHERE expires_at <= ?'),
    reserved: db.prepare('SELECT COALESCE(SUM(amount_usd), 0) AS total FROM spend_reservations WHERE expires_at > ?'),
    insertReservation: db.prepare('INSERT INTO spend_reservations (id, purpose, model, amount_usd, expires_at) VALUES (?, ?, ?, ?, ?)'),
    dropReservation: db.prepare('DELETE FROM spend_reservations WHERE id = ?'),
    saveRecord: db.prepare('INSERT INTO atlas_records (id, frontmatter, body, persisted_at) VALUES (?, ?, ?, ?)'),
    listRecords: db.prepare('SELECT id, frontmatter, body, persisted_at FROM atlas_records ORDER BY persisted_at, id'),
    getKey: db.prepare('SELECT fingerprint, acknowledgement, reserved_at FROM idempotency_keys WHERE client = ? AND operation = ? AND key = ?'),
    reserveKey: db.prepare('INSERT INTO idempotency_keys (client, operation, key, fingerprint, acknowledgement, reserved_at) VALUES (?, ?, ?, ?, NULL, ?) ON CONFLICT (client, operation, key) DO UPDATE SET fingerprint = excluded.fingerprint, reserved_at = excluded.reserved_at'),
    completeKey: db.prepare('UPDATE idempotency_keys SET acknowledgement = ? WHERE client = ? AND operation = ? AND key = ? AND acknowledgement IS NULL'),
    releaseKey: db.prepare('DELETE FROM idempotency_keys WHERE client = ? AND operation = ? AND key = ? AND acknowledgement IS NULL'),
    byHash: db.prepare(`SELECT ${CONTRIBUTION_COLUMNS} FROM contributions WHERE content_hash = ? AND status = 'pending' LIMIT 1`),
    byId: db.prepare(`SELECT ${CONTRIBUTION_COLUMNS} FROM contributions WHERE id = ?`),
    listAll: db.prepare(`SELECT ${CONTRIBUTION_COLUMNS} FROM contributions ORDER BY created_at, id`),
    listStatus: db.prepare(`SELECT ${CONTRIBUTION_COLUMNS} FROM contributions WHERE status = ? ORDER BY created_at, id`),
    insertContribution: db.prepare(`INSERT INTO contributions (${CONTRIBUTION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, NULL, NULL, NULL, '[]')`),
    review: db.prepare("UPDATE contributions SET status = ?, reviewer = ?, reason = ?, reviewed_at = ? WHERE id = ? AND status = 'pending'"),
    setReviews: db.prepare('UPDATE contributions SET reviews = ? WHERE id = ?'),
    getCounter: db.prepare('SELECT window_start, count FROM rate_counters WHERE key = ?'),
    putCounter: db.prepare('INSERT INTO rate_counters (key, window_start, count) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET window_start = excluded.window_start, count = excluded.count'),
    insertPlay: db.prepare('INSERT OR IGNORE INTO plays (slug, client, day) VALUES (?, ?, ?)'),
    playCounts: db.prepare(`SELECT slug, COUNT(*) AS plays, COUNT(DISTINCT client) AS listeners,
      (SELECT COUNT(*) FROM (SELECT client FROM plays p2 WHERE p2.slug = plays.slug GROUP BY client HAVING COUNT(*) > 1)) AS returning_clients
      FROM plays GROUP BY slug ORDER BY plays DESC, slug`),
    getSecret: db.prepare('SELECT value FROM secrets WHERE name = ?'),
    putSecret: db.prepare('INSERT OR IGNORE INTO secrets (name, value) VALUES (?, ?)'),
    begin: db.prepare('BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
    rollback: db.prepare('ROLLBACK'),
  };

  /** Fixed window: the counter resets when its window has passed. Synchronous, so atomic in-process. */
  function countHit(rateLimit: RateLimit, nowMs: number): { allowed: boolean; remaining: number; resetMs: number } {
    const row = statements.getCounter.get(rateLimit.key) as { window_start: number; count: number } | undefined;
    const fresh = !row || nowMs - Number(row.window_start) >= rateLimit.windowMs;
    const windowStart = fresh ? nowMs : Number(row!.window_start);
    const count = fresh ? 0 : Number(row!.count);
    const resetMs = windowStart + rateLimit.windowMs - nowMs;
    if (count >= rateLimit.limit) return { allowed: false, remaining: 0, resetMs };
    statements.putCounter.run(rateLimit.key, windowStart, count + 1);
    return { allowed: true, remaining: rateLimit.limit - count - 1, resetMs };
  }

  function transaction<T>(work: () => T): T {
    statements.begin.run();
    try {
      const result = work();
      statements.commit.run();
      return result;
    } catch (error) {
      statements.rollback.run();
      throw error;
    }
  }

  return reportingBusy(refusingIllFormedText({
    ...createSqliteFederation(db, transaction),
    async createJob(job, now) {
      const at = now.toISOString();
      statements.insertJob.run(job.id, job.kind, 'queued', JSON.stringify(job.input ?? null), at, at);
      return toJob(statements.getJob.get(job.id) as JobRow);
    },
    async getJob(id) {
      const row = statements.getJob.get(id) as JobRow | undefined;
      return row ? toJob(row) : undefined;
    },
    async claimJob(id, now) {
      return statements.claimJob.run(now.toISOString(), id).changes === 1;
    },
    async finishJob(id, outcome, now) {
      if ('result' in outcome) statements.finishJob.run('done', JSON.stringify(outcome.result), null, now.toISOString(), id);
      else statements.finishJob.run('failed', null, JSON.stringify(outcome.error), now.toISOString(), id);
    },
    async unfinishedJobs() {
      return (statements.unfinished.all() as JobRow[]).map(toJob);
    },
    async cancelJob(id, now) {
      statements.cancelJob.run(JSON.stringify(CANCELLED), now.toISOString(), id);
      const row = statements.getJob.get(id) as JobRow | undefined;
      return row ? toJob(row) : undefined;
    },
    async requeueJob(id, now) {
      statements.requeue.run(now.toISOString(), id);
    },
    async appendExchange(sessionId, exchange, keep, now) {
      const seq = Number((statements.maxSeq.get(sessionId) as { seq: number }).seq) + 1;
      statements.insertExchange.run(sessionId, seq, JSON.stringify(exchange), now.toISOString());
      statements.trimSession.run(sessionId, seq - keep);
    },
    async getSession(sessionId, ttlMs, now) {
      const rows = statements.session.all(sessionId) as { exchange: string; at: string }[];
      const last = rows.at(-1);
      if (!last) return [];
      if (now.getTime() - Date.parse(last.at) > ttlMs) {
        statements.dropSession.run(sessionId);
        return [];
      }
      return rows.map((row) => JSON.parse(row.exchange) as Exchange);
    },
    async createSession(sessionId, client, now) {
      statements.insertSession.run(sessionId, client, now.toISOString());
    },
    async findSession(sessionId, ttlMs, now) {
      const issued = statements.issuedSession.get(sessionId) as { client: string; created_at: string } | undefined;
      if (!issued) return undefined;
      const rows = statements.session.all(sessionId) as { exchange: string; at: string }[];
      const lastActivity = Math.max(Date.parse(issued.created_at), ...rows.map((row) => Date.parse(row.at)));
      if (now.getTime() - lastActivity > ttlMs) return undefined;
      return { client: issued.client, exchanges: rows.map((row) => JSON.parse(row.exchange) as Exchange) };
    },
    async addJobStage(jobId, stage) {
      statements.addStage.run(jobId, JSON.stringify(stage), jobId);
    },
    async jobStages(jobId) {
      return (statements.stages.all(jobId) as { stage: string }[]).map((row) => JSON.parse(row.stage) as JobStage);
    },
    async keepCouncil(id, result, now, ttlMs) {
      statements.purgeCouncils.run(now.toISOString());
      statements.keepCouncil.run(id, JSON.stringify(result), now.toISOString(), new Date(now.getTime() + ttlMs).toISOString());
    },
    async getCouncil(id, now) {
      const row = statements.getCouncil.get(id, now.toISOString()) as (Omit<KeptCouncil, 'result'> & { result: string }) | undefined;
      return row ? { id: row.id, result: JSON.parse(row.result) as unknown, created_at: row.created_at, expires_at: row.expires_at, persisted_id: row.persisted_id } : undefined;
    },
    async setCouncilPersisted(id, recordId, expected) {
      return statements.setCouncilPersisted.run(recordId, id, expected).changes === 1;
    },
    async addSpend(entry: SpendEntry) {
      statements.insertSpend.run(entry.at, entry.purpose, entry.model, entry.prompt_tokens, entry.completion_tokens, entry.cost_usd);
    },
    async totalSpendUsd() {
      return Number((statements.totalSpend.get() as { total: number }).total);
    },
    async reserveSpend(reservation: SpendReservation, ceilingUsd: number, now: Date) {
      return transaction(() => {
        statements.dropExpired.run(now.getTime());
        const spent = Number((statements.totalSpend.get() as { total: number }).total);
        const reserved = Number((statements.reserved.get(now.getTime()) as { total: number }).total);
        if (!withinCeiling(spent + reserved + reservation.amount_usd, ceilingUsd)) return false;
        statements.insertReservation.run(reservation.id, reservation.purpose, reservation.model, reservation.amount_usd, reservation.expires_at.getTime());
        return true;
      });
    },
    async settleSpend(reservationId, entry) {
      transaction(() => {
        statements.dropReservation.run(reservationId);
        if (entry) statements.insertSpend.run(entry.at, entry.purpose, entry.model, entry.prompt_tokens, entry.completion_tokens, entry.cost_usd);
      });
    },
    async spendStatus(now) {
      return {
        spent_usd: Number((statements.totalSpend.get() as { total: number }).total),
        reserved_usd: Number((statements.reserved.get(now.getTime()) as { total: number }).total),
      };
    },
    async saveRecord(record: PersistedRecord) {
      statements.saveRecord.run(record.id, JSON.stringify(record.frontmatter), record.body, record.persisted_at);
    },
    async listRecords() {
      return (statements.listRecords.all() as { id: string; frontmatter: string; body: string; persisted_at: string }[]).map((row) => ({
        id: row.id,
        frontmatter: JSON.parse(row.frontmatter) as Record<string, unknown>,
        body: row.body,
        persisted_at: row.persisted_at,
      }));
    },
    async submitContribution(item, rateLimit, now): Promise<SubmitOutcome> {
      return transaction(() => {
        const same = statements.byHash.get(item.content_hash) as ContributionRow | undefined;
        if (same) return { outcome: 'duplicate' as const, contribution: toContribution(same) };
        const verdict = countHit(rateLimit, now.getTime());
        if (!verdict.allowed) return { outcome: 'limited' as const, retryAfterMs: verdict.resetMs, limit: rateLimit.limit };
        statements.insertContribution.run(
          item.id, item.kind, item.record_id, item.identity, item.justification, JSON.stringify(item.payload),
          item.content_hash, item.idempotency_key, item.client, now.toISOString(),
        );
        return { outcome: 'created' as const, contribution: toContribution(statements.byId.get(item.id) as ContributionRow), remaining: verdict.remaining, resetMs: verdict.resetMs };
      });
    },
    async getContribution(id) {
      const row = statements.byId.get(id) as ContributionRow | undefined;
      return row ? toContribution(row) : undefined;
    },
    async listContributions(status) {
      const rows = (status ? statements.listStatus.all(status) : statements.listAll.all()) as ContributionRow[];
      return rows.map(toContribution);
    },
    async findContributions(query) {
      const { sql, params } = contributionPageStatement(CONTRIBUTION_COLUMNS, query, (index) => `?${index}`, -1);
      const rows = db.prepare(sql).all(...params) as (ContributionRow & { total: number })[];
      return { items: rows.filter((row) => row.id !== null).map(toContribution), total: Number(rows[0]?.total ?? 0) };
    },
    async reviewContribution(id, decision, now) {
      statements.review.run(decision.status, decision.reviewer, decision.reason, now.toISOString(), id);
      const row = statements.byId.get(id) as ContributionRow | undefined;
      return row ? toContribution(row) : undefined;
    },
    async addReview(id, review) {
      transaction(() => {
        const row = statements.byId.get(id) as ContributionRow | undefined;
        if (!row) return;
        statements.setReviews.run(JSON.stringify([...(JSON.parse(row.reviews) as unknown[]), review]), id);
      });
    },
    async reserveIdempotencyKey(scope, fingerprint, now, staleMs): Promise<Reservation> {
      return transaction(() => {
        const row = statements.getKey.get(scope.client, scope.operation, scope.key) as { fingerprint: string; acknowledgement: string | null; reserved_at: number } | undefined;
        const decided = row && decideReservation(row, fingerprint, now.getTime(), staleMs);
        if (decided) return decided;
        statements.reserveKey.run(scope.client, scope.operation, scope.key, fingerprint, now.getTime());
        return { state: 'reserved' as const };
      });
    },
    async completeIdempotencyKey(scope, acknowledgement) {
      statements.completeKey.run(JSON.stringify(acknowledgement), scope.client, scope.operation, scope.key);
    },
    async releaseIdempotencyKey(scope) {
      statements.releaseKey.run(scope.client, scope.operation, scope.key);
    },
    async hit(rateLimit, now) {
      return transaction(() => countHit(rateLimit, now.getTime()));
    },
    async recordPlay(slug, client, day) {
      return statements.insertPlay.run(slug, client, day).changes === 1;
    },
    async playCounts() {
      return (statements.playCounts.all() as { slug: string; plays: number; listeners: number; returning_clients: number }[]).map((row) => ({
        slug: row.slug,
        plays: Number(row.plays),
        listeners: Number(row.listeners),
        returning: Number(row.returning_clients),
      }));
    },
    async addTensionSightings(items) {
      const insert = db.prepare('INSERT INTO tension_sightings (id, tension_key, data, seen_at, state) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING');
      transaction(() => {
        for (const item of items) insert.run(item.id, item.key, JSON.stringify(item), item.seen_at, 'pending');
      });
    },
    async listTensionSightings(state) {
      const rows = (state
        ? db.prepare('SELECT * FROM tension_sightings WHERE state = ? ORDER BY seen_at, id').all(state)
        : db.prepare('SELECT * FROM tension_sightings ORDER BY seen_at, id').all()) as SightingRow[];
      return rows.map(toSighting);
    },
    async reviewTensionSighting(id, decision, now) {
      const changed = db.prepare("UPDATE tension_sightings SET state = ?, reviewer = ?, reviewed_at = ? WHERE id = ? AND state = 'pending'").run(decision.state, decision.reviewer, now.toISOString(), id);
      if (changed.changes !== 1) return undefined;
      return toSighting(db.prepare('SELECT * FROM tension_sightings WHERE id = ?').get(id) as SightingRow);
    },
    async secret(name) {
      statements.putSecret.run(name, randomBytes(32).toString('hex'));
      return (statements.getSecret.get(name) as { value: string }).value;
    },
    async close() {
      db.close();
    },
  }));
}

/**
 * A database another process holds locked past busy_timeout (SQLITE_BUSY, SQLITE_LOCKED) is
 * transient, like PostgreSQL's outages: StoreUnavailableError (503, retryable). Other SQLite
 * errors are permanent and stay as they are.
 */
function reportingBusy(store: Store): Store {
  const wrapped: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(store) as [string, (...args: unknown[]) => Promise<unknown>][]) {
    wrapped[name] = (...args: unknown[]) =>
      method(...args).catch((error: unknown) => {
        throw /^SQLITE_(BUSY|LOCKED)/.test(String((error as { code?: unknown })?.code ?? '')) ? new StoreUnavailableError(error) : error;
      });
  }
  return wrapped as unknown as Store;
}
