/**
 * Embedded store on SQLite (libsql ships a prebuilt binary in its npm package).
 * WAL with synchronous=FULL: an acknowledged write survives kill -9.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { Exchange, JobRecord, PersistedRecord, SpendEntry, Store } from './store.ts';

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
CREATE TABLE IF NOT EXISTS atlas_records (
  id TEXT PRIMARY KEY, frontmatter TEXT NOT NULL, body TEXT NOT NULL, persisted_at TEXT NOT NULL
);
`;

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

/** `file` is a path, or ':memory:' for a store that lives as long as the process. */
export function createSqliteStore(file: string): Store {
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const require = createRequire(import.meta.url);
  const Libsql = require('libsql') as new (file: string) => Database;
  const db = new Libsql(file);
  db.exec('PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA busy_timeout=5000;');
  db.exec(SCHEMA);

  const statements = {
    insertJob: db.prepare('INSERT INTO jobs (id, kind, status, input, attempts, created_at, updated_at) VALUES (?, ?, ?, ?, 0, ?, ?)'),
    getJob: db.prepare('SELECT id, kind, status, input, result, error, attempts, created_at, updated_at FROM jobs WHERE id = ?'),
    claimJob: db.prepare("UPDATE jobs SET status = 'running', attempts = attempts + 1, updated_at = ? WHERE id = ? AND status = 'queued'"),
    finishJob: db.prepare('UPDATE jobs SET status = ?, result = ?, error = ?, updated_at = ? WHERE id = ?'),
    unfinished: db.prepare("SELECT id, kind, status, input, result, error, attempts, created_at, updated_at FROM jobs WHERE status IN ('queued', 'running') ORDER BY created_at"),
    requeue: db.prepare("UPDATE jobs SET status = 'queued', updated_at = ? WHERE id = ?"),
    maxSeq: db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM session_exchanges WHERE session_id = ?'),
    insertExchange: db.prepare('INSERT INTO session_exchanges (session_id, seq, exchange, at) VALUES (?, ?, ?, ?)'),
    trimSession: db.prepare('DELETE FROM session_exchanges WHERE session_id = ? AND seq <= ?'),
    session: db.prepare('SELECT exchange, at FROM session_exchanges WHERE session_id = ? ORDER BY seq'),
    dropSession: db.prepare('DELETE FROM session_exchanges WHERE session_id = ?'),
    insertSpend: db.prepare('INSERT INTO spend (at, purpose, model, prompt_tokens, completion_tokens, cost_usd) VALUES (?, ?, ?, ?, ?, ?)'),
    totalSpend: db.prepare('SELECT COALESCE(SUM(cost_usd), 0) AS total FROM spend'),
    saveRecord: db.prepare('INSERT INTO atlas_records (id, frontmatter, body, persisted_at) VALUES (?, ?, ?, ?)'),
    listRecords: db.prepare('SELECT id, frontmatter, body, persisted_at FROM atlas_records ORDER BY persisted_at, id'),
  };

  return {
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
    async addSpend(entry: SpendEntry) {
      statements.insertSpend.run(entry.at, entry.purpose, entry.model, entry.prompt_tokens, entry.completion_tokens, entry.cost_usd);
    },
    async totalSpendUsd() {
      return Number((statements.totalSpend.get() as { total: number }).total);
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
    async close() {
      db.close();
    },
  };
}
