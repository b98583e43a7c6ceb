/**
 * Scale-out store on PostgreSQL: the same interface as the embedded SQLite driver, so
 * several API processes share jobs, sessions, spend, persisted records, pending
 * contributions and rate-limit counters. Atomic steps use single statements or
 * transactions with advisory locks; every acknowledged write is committed first. While the
 * database is down or restarting, every method rejects with StoreUnavailableError (the API
 * answers 503 STORE_UNAVAILABLE) and the pool reconnects once it is back.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { contributionPageStatement } from './contribution-query.ts';
import { decideReservation, type KeyRow } from './idempotency.ts';
import { CANCELLED, StoreUnavailableError, withinCeiling, type ContributionRecord, type Exchange, type JobRecord, type JobStage, type KeptCouncil, type PersistedRecord, type RateLimit, type Reservation, type SpendEntry, type SpendReservation, type Store, type SubmitOutcome } from './store.ts';
import { refusingIllFormedText } from './text-check.ts';
import { toSighting, type SightingRow } from './sighting-row.ts';
import { createPostgresFederation, FEDERATION_SCHEMA } from './postgres-federation.ts';

const SCHEMA = `
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
`;


const CONTRIBUTION_COLUMNS = 'id, kind, record_id, identity, justification, payload, content_hash, idempotency_key, client, status, created_at, reviewed_at, reviewer, reason, reviews';

interface JobRow {
  id: string;
  kind: string;
  status: string;
  input: unknown;
  result: unknown;
  error: JobRecord['error'];
  attempts: number;
  created_at: string;
  updated_at: string;
}

const toJob = (row: JobRow): JobRecord => ({
  id: row.id,
  kind: row.kind as JobRecord['kind'],
  status: row.status as JobRecord['status'],
  input: row.input,
  result: row.result ?? null,
  error: row.error ?? null,
  attempts: Number(row.attempts),
  created_at: row.created_at,
  updated_at: row.updated_at,
});

const toContribution = (row: Record<string, unknown>): ContributionRecord => ({
  id: row.id as string,
  kind: row.kind as ContributionRecord['kind'],
  record_id: (row.record_id as string | null) ?? null,
  identity: row.identity as string,
  justification: (row.justification as string | null) ?? null,
  payload: row.payload as Record<string, unknown>,
  content_hash: row.content_hash as string,
  idempotency_key: (row.idempotency_key as string | null) ?? null,
  client: row.client as string,
  status: row.status as ContributionRecord['status'],
  created_at: row.created_at as string,
  reviewed_at: (row.reviewed_at as string | null) ?? null,
  reviewer: (row.reviewer as string | null) ?? null,
  reason: (row.reason as string | null) ?? null,
  reviews: row.reviews as ContributionRecord['reviews'],
});

type Queryable = Pick<pg.PoolClient, 'query'>;

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
function reportingOutages(store: Store): Store {
  const wrapped: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(store) as [string, (...args: unknown[]) => Promise<unknown>][]) {
    wrapped[name] = (...args: unknown[]) =>
      method(...args).catch((error: unknown) => {
        throw isUnavailable(error) ? new StoreUnavailableError(error) : error;
      });
  }
  return wrapped as unknown as Store;
}

/** Counts one hit in a fixed window, in one statement: atomic across processes. */
async function countHit(db: Queryable, rateLimit: RateLimit, nowMs: number) {
  const { rows } = await db.query<{ window_start: string; count: number }>(
    `INSERT INTO rate_counters (key, window_start, count) VALUES ($1, $2, 1)
     ON CONFLICT (key) DO UPDATE SET
       window_start = CASE WHEN $2 - rate_counters.window_start >= $3 THEN $2 ELSE rate_counters.window_start END,
       count = CASE WHEN $2 - rate_counters.window_start >= $3 THEN 1 ELSE rate_counters.count + 1 END
     RETURNING window_start, count`,
    [rateLimit.key, nowMs, rateLimit.windowMs],
  );
  const row = rows[0]!;
  const resetMs = Number(row.window_start) + rateLimit.windowMs - nowMs;
  const count = Number(row.count);
  return { allowed: count <= rateLimit.limit, remaining: Math.max(0, rateLimit.limit - count), resetMs };
}

export async function createPostgresStore(connectionString: string, options: { max?: number } = {}): Promise<Store> {
  // An unreachable host fails a request after 10 s instead of holding it.
  const pool = new pg.Pool({ connectionString, max: options.max ?? 10, connectionTimeoutMillis: 10_000 });
  // An idle connection lost with the server (crash, restart) is dropped from the pool and
  // reported here; unhandled, the event would end the process. The next query reconnects.
  pool.on('error', () => {});
  // Serialise schema creation between processes starting together.
  const setup = await pool.connect();
  try {
    await setup.query('SELECT pg_advisory_lock(hashtext($1))', ['polyphony-schema']);
    await setup.query(SCHEMA);
    await setup.query(FEDERATION_SCHEMA);
    // Rate-limit counters are the hottest rows (every limited request writes two) and the
    // only state whose loss after a database crash harms nobody (the windows start again):
    // unlogged, they skip the write-ahead log and its flush. Stores made before were logged.
    const { rows } = await setup.query<{ relpersistence: string }>("SELECT relpersistence FROM pg_class WHERE oid = to_regclass('rate_counters')");
    if (rows[0]?.relpersistence === 'p') await setup.query('ALTER TABLE rate_counters SET UNLOGGED');
    // Keys are scoped per client and operation in idempotency_keys (the acknowledgement is
    // kept as text: JSONB would reorder its keys). Stores made before had a global UNIQUE here.
    await setup.query('ALTER TABLE contributions DROP CONSTRAINT IF EXISTS contributions_idempotency_key_key');
    await setup.query('SELECT pg_advisory_unlock(hashtext($1))', ['polyphony-schema']);
  } finally {
    setup.release();
  }

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

  const lock = (client: Queryable, key: string) => client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [key]);
  const jobColumns = 'id, kind, status, input, result, error, attempts, created_at, updated_at';

  return reportingOutages(refusingIllFormedText({
    ...createPostgresFederation(pool, transaction),
    async createJob(job, now) {
      const at = now.toISOString();
      const { rows } = await pool.query<JobRow>(`INSERT INTO jobs (id, kind, status, input, attempts, created_at, updated_at) VALUES ($1, $2, 'queued', $3, 0, $4, $4) RETURNING ${jobColumns}`, [job.id, job.kind, JSON.stringify(job.input ?? null), at]);
      return toJob(rows[0]!);
    },
    async getJob(id) {
      const { rows } = await pool.query<JobRow>(`SELECT ${jobColumns} FROM jobs WHERE id = $1`, [id]);
      return rows[0] ? toJob(rows[0]) : undefined;
    },
    async claimJob(id, now) {
      const { rowCount } = await pool.query("UPDATE jobs SET status = 'running', attempts = attempts + 1, updated_at = $1 WHERE id = $2 AND status = 'queued'", [now.toISOString(), id]);
      return rowCount === 1;
    },
    async finishJob(id, outcome, now) {
      if ('result' in outcome) await pool.query("UPDATE jobs SET status = 'done', result = $1, updated_at = $2 WHERE id = $3 AND status = 'running'", [JSON.stringify(outcome.result), now.toISOString(), id]);
      else await pool.query("UPDATE jobs SET status = 'failed', error = $1, updated_at = $2 WHERE id = $3 AND status = 'running'", [JSON.stringify(outcome.error), now.toISOString(), id]);
    },
    async cancelJob(id, now) {
      await pool.query("UPDATE jobs SET status = 'cancelled', error = $1, updated_at = $2 WHERE id = $3 AND status IN ('queued', 'running')", [JSON.stringify(CANCELLED), now.toISOString(), id]);
      const { rows } = await pool.query<JobRow>(`SELECT ${jobColumns} FROM jobs WHERE id = $1`, [id]);
      return rows[0] ? toJob(rows[0]) : undefined;
    },
    async unfinishedJobs() {
      const { rows } = await pool.query<JobRow>(`SELECT ${jobColumns} FROM jobs WHERE status IN ('queued', 'running') ORDER BY created_at`);
      return rows.map(toJob);
    },
    async requeueJob(id, now) {
      await pool.query("UPDATE jobs SET status = 'queued', updated_at = $1 WHERE id = $2", [now.toISOString(), id]);
    },
    async appendExchange(sessionId, exchange, keep, now) {
      await transaction(async (client) => {
        await lock(client, `session:${sessionId}`);
        const { rows } = await client.query<{ seq: number }>('SELECT COALESCE(MAX(seq), 0) AS seq FROM session_exchanges WHERE session_id = $1', [sessionId]);
        const seq = Number(rows[0]!.seq) + 1;
        await client.query('INSERT INTO session_exchanges (session_id, seq, exchange, at) VALUES ($1, $2, $3, $4)', [sessionId, seq, JSON.stringify(exchange), now.toISOString()]);
        await client.query('DELETE FROM session_exchanges WHERE session_id = $1 AND seq <= $2', [sessionId, seq - keep]);
      });
    },
    async getSession(sessionId, ttlMs, now) {
      const { rows } = await pool.query<{ exchange: Exchange; at: string }>('SELECT exchange, at FROM session_exchanges WHERE session_id = $1 ORDER BY seq', [sessionId]);
      const last = rows.at(-1);
      if (!last) return [];
      if (now.getTime() - Date.parse(last.at) > ttlMs) {
        await pool.query('DELETE FROM session_exchanges WHERE session_id = $1', [sessionId]);
        return [];
      }
      return rows.map((row) => row.exchange);
    },
    async createSession(sessionId, client, now) {
      await pool.query('INSERT INTO sessions (id, client, created_at) VALUES ($1, $2, $3)', [sessionId, client, now.toISOString()]);
    },
    async findSession(sessionId, ttlMs, now) {
      const issued = await pool.query<{ client: string; created_at: string }>('SELECT client, created_at FROM sessions WHERE id = $1', [sessionId]);
      if (!issued.rows[0]) return undefined;
      const { rows } = await pool.query<{ exchange: Exchange; at: string }>('SELECT exchange, at FROM session_exchanges WHERE session_id = $1 ORDER BY seq', [sessionId]);
      const lastActivity = Math.max(Date.parse(issued.rows[0].created_at), ...rows.map((row) => Date.parse(row.at)));
      if (now.getTime() - lastActivity > ttlMs) return undefined;
      return { client: issued.rows[0].client, exchanges: rows.map((row) => row.exchange) };
    },
    async addJobStage(jobId, stage) {
      // Stages are text, not JSONB: kept byte for byte, as the voices' answers they carry.
      await transaction(async (client) => {
        await lock(client, `stages:${jobId}`);
        await client.query('INSERT INTO job_stages (job_id, seq, stage) SELECT $1, COALESCE(MAX(seq), 0) + 1, $2 FROM job_stages WHERE job_id = $1', [jobId, JSON.stringify(stage)]);
      });
    },
    async jobStages(jobId) {
      const { rows } = await pool.query<{ stage: string }>('SELECT stage FROM job_stages WHERE job_id = $1 ORDER BY seq', [jobId]);
      return rows.map((row) => JSON.parse(row.stage) as JobStage);
    },
    async keepCouncil(id, result, now, ttlMs) {
      // Text, not JSONB: the verbatim answers come back exactly as they were shown.
      await pool.query('DELETE FROM kept_councils WHERE expires_at < $1', [now.toISOString()]);
      await pool.query('INSERT INTO kept_councils (id, result, created_at, expires_at) VALUES ($1, $2, $3, $4)', [id, JSON.stringify(result), now.toISOString(), new Date(now.getTime() + ttlMs).toISOString()]);
    },
    async getCouncil(id, now) {
      const { rows } = await pool.query<Omit<KeptCouncil, 'result'> & { result: string }>('SELECT id, result, created_at, expires_at, persisted_id FROM kept_councils WHERE id = $1 AND expires_at >= $2', [id, now.toISOString()]);
      const row = rows[0];
      return row ? { id: row.id, result: JSON.parse(row.result) as unknown, created_at: row.created_at, expires_at: row.expires_at, persisted_id: row.persisted_id } : undefined;
    },
    async setCouncilPersisted(id, recordId, expected) {
      const { rowCount } = await pool.query('UPDATE kept_councils SET persisted_id = $1 WHERE id = $2 AND persisted_id IS NOT DISTINCT FROM $3', [recordId, id, expected]);
      return rowCount === 1;
    },
    async addSpend(entry: SpendEntry) {
      await pool.query('INSERT INTO spend (at, purpose, model, prompt_tokens, completion_tokens, cost_usd) VALUES ($1, $2, $3, $4, $5, $6)', [entry.at, entry.purpose, entry.model, entry.prompt_tokens, entry.completion_tokens, entry.cost_usd]);
    },
    async totalSpendUsd() {
      const { rows } = await pool.query<{ total: number }>('SELECT COALESCE(SUM(cost_usd), 0) AS total FROM spend');
      return Number(rows[0]!.total);
    },
    async reserveSpend(reservation: SpendReservation, ceilingUsd: number, now: Date) {
      return transaction(async (client) => {
        // One lock for every reservation: processes take turns, so two cannot both fit the last dollar.
        await lock(client, 'spend-ceiling');
        await client.query('DELETE FROM spend_reservations WHERE expires_at <= $1', [now.getTime()]);
        const { rows } = await client.query<{ spent: number; reserved: number }>(
          'SELECT (SELECT COALESCE(SUM(cost_usd), 0) FROM spend) AS spent, (SELECT COALESCE(SUM(amount_usd), 0) FROM spend_reservations) AS reserved',
        );
        if (!withinCeiling(Number(rows[0]!.spent) + Number(rows[0]!.reserved) + reservation.amount_usd, ceilingUsd)) return false;
        await client.query('INSERT INTO spend_reservations (id, purpose, model, amount_usd, expires_at) VALUES ($1, $2, $3, $4, $5)', [
          reservation.id, reservation.purpose, reservation.model, reservation.amount_usd, reservation.expires_at.getTime(),
        ]);
        return true;
      });
    },
    async settleSpend(reservationId, entry) {
      await transaction(async (client) => {
        await lock(client, 'spend-ceiling');
        await client.query('DELETE FROM spend_reservations WHERE id = $1', [reservationId]);
        if (entry) {
          await client.query('INSERT INTO spend (at, purpose, model, prompt_tokens, completion_tokens, cost_usd) VALUES ($1, $2, $3, $4, $5, $6)', [
            entry.at, entry.purpose, entry.model, entry.prompt_tokens, entry.completion_tokens, entry.cost_usd,
          ]);
        }
      });
    },
    async spendStatus(now) {
      const { rows } = await pool.query<{ spent: number; reserved: number }>(
        'SELECT (SELECT COALESCE(SUM(cost_usd), 0) FROM spend) AS spent, (SELECT COALESCE(SUM(amount_usd), 0) FROM spend_reservations WHERE expires_at > $1) AS reserved',
        [now.getTime()],
      );
      return { spent_usd: Number(rows[0]!.spent), reserved_usd: Number(rows[0]!.reserved) };
    },
    async saveRecord(record: PersistedRecord) {
      await pool.query('INSERT INTO atlas_records (id, frontmatter, body, persisted_at) VALUES ($1, $2, $3, $4)', [record.id, JSON.stringify(record.frontmatter), record.body, record.persisted_at]);
    },
    async listRecords() {
      const { rows } = await pool.query<PersistedRecord>('SELECT id, frontmatter, body, persisted_at FROM atlas_records ORDER BY persisted_at, id');
      return rows.map((row) => ({ id: row.id, frontmatter: row.frontmatter, body: row.body, persisted_at: row.persisted_at }));
    },
    async submitContribution(item, rateLimit, now): Promise<SubmitOutcome> {
      return transaction(async (client) => {
        // Same order in every process (content, then client): no deadlocks.
        await lock(client, `content:${item.content_hash}`);
        await lock(client, rateLimit.key);
        const same = await client.query(`SELECT ${CONTRIBUTION_COLUMNS} FROM contributions WHERE content_hash = $1 AND status = 'pending' LIMIT 1`, [item.content_hash]);
        if (same.rows[0]) return { outcome: 'duplicate' as const, contribution: toContribution(same.rows[0]) };
        const verdict = await countHit(client, rateLimit, now.getTime());
        if (!verdict.allowed) return { outcome: 'limited' as const, retryAfterMs: verdict.resetMs, limit: rateLimit.limit };
        const { rows } = await client.query(
          `INSERT INTO contributions (${CONTRIBUTION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, NULL, NULL, NULL, '[]'::jsonb) RETURNING ${CONTRIBUTION_COLUMNS}`,
          [item.id, item.kind, item.record_id, item.identity, item.justification, JSON.stringify(item.payload), item.content_hash, item.idempotency_key, item.client, now.toISOString()],
        );
        return { outcome: 'created' as const, contribution: toContribution(rows[0]!), remaining: verdict.remaining, resetMs: verdict.resetMs };
      });
    },
    async getContribution(id) {
      const { rows } = await pool.query(`SELECT ${CONTRIBUTION_COLUMNS} FROM contributions WHERE id = $1`, [id]);
      return rows[0] ? toContribution(rows[0]) : undefined;
    },
    async listContributions(status) {
      const { rows } = status
        ? await pool.query(`SELECT ${CONTRIBUTION_COLUMNS} FROM contributions WHERE status = $1 ORDER BY created_at, id`, [status])
        : await pool.query(`SELECT ${CONTRIBUTION_COLUMNS} FROM contributions ORDER BY created_at, id`);
      return rows.map(toContribution);
    },
    async findContributions(query) {
      const { sql, params } = contributionPageStatement(CONTRIBUTION_COLUMNS, query, (index) => `$${index}`, null);
      const { rows } = await pool.query(sql, params);
      return { items: rows.filter((row) => row.id !== null).map(toContribution), total: Number(rows[0]?.total ?? 0) };
    },
    async reviewContribution(id, decision, now) {
      await pool.query("UPDATE contributions SET status = $1, reviewer = $2, reason = $3, reviewed_at = $4 WHERE id = $5 AND status = 'pending'", [decision.status, decision.reviewer, decision.reason, now.toISOString(), id]);
      const { rows } = await pool.query(`SELECT ${CONTRIBUTION_COLUMNS} FROM contributions WHERE id = $1`, [id]);
      return rows[0] ? toContribution(rows[0]) : undefined;
    },
    async addReview(id, review) {
      await pool.query('UPDATE contributions SET reviews = reviews || $1::jsonb WHERE id = $2', [JSON.stringify([review]), id]);
    },
    async reserveIdempotencyKey(scope, fingerprint, now, staleMs): Promise<Reservation> {
      return transaction(async (client) => {
        await lock(client, `idempotency:${scope.client}:${scope.operation}:${scope.key}`);
        const { rows } = await client.query<KeyRow>('SELECT fingerprint, acknowledgement, reserved_at FROM idempotency_keys WHERE client = $1 AND operation = $2 AND key = $3', [scope.client, scope.operation, scope.key]);
        const decided = rows[0] && decideReservation(rows[0], fingerprint, now.getTime(), staleMs);
        if (decided) return decided;
        await client.query(
          `INSERT INTO idempotency_keys (client, operation, key, fingerprint, acknowledgement, reserved_at) VALUES ($1, $2, $3, $4, NULL, $5)
           ON CONFLICT (client, operation, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, reserved_at = EXCLUDED.reserved_at`,
          [scope.client, scope.operation, scope.key, fingerprint, now.getTime()],
        );
        return { state: 'reserved' as const };
      });
    },
    async completeIdempotencyKey(scope, acknowledgement) {
      await pool.query('UPDATE idempotency_keys SET acknowledgement = $1 WHERE client = $2 AND operation = $3 AND key = $4 AND acknowledgement IS NULL', [JSON.stringify(acknowledgement), scope.client, scope.operation, scope.key]);
    },
    async releaseIdempotencyKey(scope) {
      await pool.query('DELETE FROM idempotency_keys WHERE client = $1 AND operation = $2 AND key = $3 AND acknowledgement IS NULL', [scope.client, scope.operation, scope.key]);
    },
    async hit(rateLimit, now) {
      return countHit(pool, rateLimit, now.getTime());
    },
    async recordPlay(slug, client, day) {
      const { rowCount } = await pool.query('INSERT INTO plays (slug, client, day) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [slug, client, day]);
      return rowCount === 1;
    },
    async playCounts() {
      const { rows } = await pool.query<{ slug: string; plays: string; listeners: string; returning_clients: string }>(
        `SELECT slug, COUNT(*) AS plays, COUNT(DISTINCT client) AS listeners,
           (SELECT COUNT(*) FROM (SELECT client FROM plays p2 WHERE p2.slug = plays.slug GROUP BY client HAVING COUNT(*) > 1) AS r) AS returning_clients
         FROM plays GROUP BY slug ORDER BY COUNT(*) DESC, slug`,
      );
      return rows.map((row) => ({ slug: row.slug, plays: Number(row.plays), listeners: Number(row.listeners), returning: Number(row.returning_clients) }));
    },
    async addTensionSightings(items) {
      if (items.length === 0) return;
      await transaction(async (client) => {
        for (const item of items) {
          await client.query('INSERT INTO tension_sightings (id, tension_key, data, seen_at, state) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING', [item.id, item.key, JSON.stringify(item), item.seen_at, 'pending']);
        }
      });
    },
    async listTensionSightings(state) {
      const { rows } = state
        ? await pool.query<SightingRow>('SELECT * FROM tension_sightings WHERE state = $1 ORDER BY seen_at, id', [state])
        : await pool.query<SightingRow>('SELECT * FROM tension_sightings ORDER BY seen_at, id');
      return rows.map(toSighting);
    },
    async reviewTensionSighting(id, decision, now) {
      const { rows } = await pool.query<SightingRow>(
        "UPDATE tension_sightings SET state = $1, reviewer = $2, reviewed_at = $3 WHERE id = $4 AND state = 'pending' RETURNING *",
        [decision.state, decision.reviewer, now.toISOString(), id],
      );
      return rows[0] ? toSighting(rows[0]) : undefined;
    },
    async secret(name) {
      await pool.query('INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT DO NOTHING', [name, randomBytes(32).toString('hex')]);
      const { rows } = await pool.query<{ value: string }>('SELECT value FROM secrets WHERE name = $1', [name]);
      return rows[0]!.value;
    },
    async close() {
      await pool.end();
    },
  }));
}
