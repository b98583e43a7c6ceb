/** Sessions and their rolling exchanges on SQLite. */
import type { Exchange, SessionsStore } from '../sessions.ts';
import type { Database } from './db.ts';

export function createSqliteSessions(db: Database): SessionsStore {
  const statements = {
    maxSeq: db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM session_exchanges WHERE session_id = ?'),
    insertExchange: db.prepare('INSERT INTO session_exchanges (session_id, seq, exchange, at) VALUES (?, ?, ?, ?)'),
    trim: db.prepare('DELETE FROM session_exchanges WHERE session_id = ? AND seq <= ?'),
    exchanges: db.prepare('SELECT exchange, at FROM session_exchanges WHERE session_id = ? ORDER BY seq'),
    drop: db.prepare('DELETE FROM session_exchanges WHERE session_id = ?'),
    insertSession: db.prepare('INSERT INTO sessions (id, client, created_at) VALUES (?, ?, ?)'),
    issued: db.prepare('SELECT client, created_at FROM sessions WHERE id = ?'),
  };
  const exchanges = (sessionId: string) => statements.exchanges.all(sessionId) as { exchange: string; at: string }[];
  return {
    async appendExchange(sessionId, exchange, keep, now) {
      const seq = Number((statements.maxSeq.get(sessionId) as { seq: number }).seq) + 1;
      statements.insertExchange.run(sessionId, seq, JSON.stringify(exchange), now.toISOString());
      statements.trim.run(sessionId, seq - keep);
    },
    async getSession(sessionId, ttlMs, now) {
      const rows = exchanges(sessionId);
      const last = rows.at(-1);
      if (!last) return [];
      if (now.getTime() - Date.parse(last.at) > ttlMs) {
        statements.drop.run(sessionId);
        return [];
      }
      return rows.map((row) => JSON.parse(row.exchange) as Exchange);
    },
    async createSession(sessionId, client, now) {
      statements.insertSession.run(sessionId, client, now.toISOString());
    },
    async findSession(sessionId, ttlMs, now) {
      const issued = statements.issued.get(sessionId) as { client: string; created_at: string } | undefined;
      if (!issued) return undefined;
      const rows = exchanges(sessionId);
      const lastActivity = Math.max(Date.parse(issued.created_at), ...rows.map((row) => Date.parse(row.at)));
      if (now.getTime() - lastActivity > ttlMs) return undefined;
      return { client: issued.client, exchanges: rows.map((row) => JSON.parse(row.exchange) as Exchange) };
    },
  };
}
