/** Sessions and their rolling exchanges on PostgreSQL (one session's appends take turns on an advisory lock). */
import type pg from 'pg';
import type { Exchange, SessionsStore } from '../sessions.ts';
import { lock, type Transaction } from './db.ts';

export function createPostgresSessions(pool: pg.Pool, transaction: Transaction): SessionsStore {
  const exchanges = async (sessionId: string) =>
    (await pool.query<{ exchange: Exchange; at: string }>('SELECT exchange, at FROM session_exchanges WHERE session_id = $1 ORDER BY seq', [sessionId])).rows;
  return {
    async appendExchange(sessionId, exchange, keep, now) {
      await transaction(async (client) => {
        await lock(client, `session:${sessionId}`);
        const { rows } = await client.query<{ seq: number }>('SELECT COALESCE(MAX(seq), 0) AS seq FROM session_exchanges WHERE session_id = $1', [sessionId]);
        const seq = Number(rows[0]!.seq) + 1;
        await client.query('INSERT INTO session_exchanges (session_id, seq, exchange, at) VALUES ($1, $2, $3, $4)', [
          sessionId,
          seq,
          JSON.stringify(exchange),
          now.toISOString(),
        ]);
        await client.query('DELETE FROM session_exchanges WHERE session_id = $1 AND seq <= $2', [sessionId, seq - keep]);
      });
    },
    async getSession(sessionId, ttlMs, now) {
      const rows = await exchanges(sessionId);
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
      const issued = (await pool.query<{ client: string; created_at: string }>('SELECT client, created_at FROM sessions WHERE id = $1', [sessionId])).rows[0];
      if (!issued) return undefined;
      const rows = await exchanges(sessionId);
      const lastActivity = Math.max(Date.parse(issued.created_at), ...rows.map((row) => Date.parse(row.at)));
      if (now.getTime() - lastActivity > ttlMs) return undefined;
      return { client: issued.client, exchanges: rows.map((row) => row.exchange) };
    },
  };
}
