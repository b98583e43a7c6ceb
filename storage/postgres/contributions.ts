/**
 * Contributions on PostgreSQL: submit is one transaction holding advisory locks in a fixed
 * order (content hash, then client), so de-duplicate → limit → insert is atomic across processes.
 */
import type pg from 'pg';
import { contributionPageStatement } from '../contributions-query.ts';
import { CONTRIBUTION_COLUMNS, toContribution, type ContributionsStore, type SubmitOutcome } from '../contributions.ts';
import { asIs, lock, type Transaction } from './db.ts';
import { countHit } from './limits.ts';

export function createPostgresContributions(pool: pg.Pool, transaction: Transaction): ContributionsStore {
  const read = async (id: string) => {
    const { rows } = await pool.query(`SELECT ${CONTRIBUTION_COLUMNS} FROM contributions WHERE id = $1`, [id]);
    return rows[0] ? toContribution(rows[0], asIs) : undefined;
  };
  return {
    async submitContribution(item, rateLimit, now): Promise<SubmitOutcome> {
      return transaction(async (client) => {
        // Same order in every process (content, then client): no deadlocks.
        await lock(client, `content:${item.content_hash}`);
        await lock(client, rateLimit.key);
        const same = await client.query(`SELECT ${CONTRIBUTION_COLUMNS} FROM contributions WHERE content_hash = $1 AND status = 'pending' LIMIT 1`, [
          item.content_hash,
        ]);
        if (same.rows[0]) return { outcome: 'duplicate' as const, contribution: toContribution(same.rows[0], asIs) };
        const verdict = await countHit(client, rateLimit, now.getTime());
        if (!verdict.allowed) return { outcome: 'limited' as const, retryAfterMs: verdict.resetMs, limit: rateLimit.limit };
        const { rows } = await client.query(
          `INSERT INTO contributions (${CONTRIBUTION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, NULL, NULL, NULL, '[]'::jsonb) RETURNING ${CONTRIBUTION_COLUMNS}`,
          [
            item.id,
            item.kind,
            item.record_id,
            item.identity,
            item.justification,
            JSON.stringify(item.payload),
            item.content_hash,
            item.idempotency_key,
            item.client,
            now.toISOString(),
          ],
        );
        return { outcome: 'created' as const, contribution: toContribution(rows[0]!, asIs), remaining: verdict.remaining, resetMs: verdict.resetMs };
      });
    },
    getContribution: read,
    async listContributions(status) {
      const { rows } = status
        ? await pool.query(`SELECT ${CONTRIBUTION_COLUMNS} FROM contributions WHERE status = $1 ORDER BY created_at, id`, [status])
        : await pool.query(`SELECT ${CONTRIBUTION_COLUMNS} FROM contributions ORDER BY created_at, id`);
      return rows.map((row) => toContribution(row, asIs));
    },
    async findContributions(query) {
      const { sql, params } = contributionPageStatement(CONTRIBUTION_COLUMNS, query, (index) => `$${index}`, null);
      const { rows } = await pool.query(sql, params);
      return { items: rows.filter((row) => row.id !== null).map((row) => toContribution(row, asIs)), total: Number(rows[0]?.total ?? 0) };
    },
    async reviewContribution(id, decision, now) {
      await pool.query("UPDATE contributions SET status = $1, reviewer = $2, reason = $3, reviewed_at = $4 WHERE id = $5 AND status = 'pending'", [
        decision.status,
        decision.reviewer,
        decision.reason,
        now.toISOString(),
        id,
      ]);
      return read(id);
    },
    async addReview(id, review) {
      await pool.query('UPDATE contributions SET reviews = reviews || $1::jsonb WHERE id = $2', [JSON.stringify([review]), id]);
    },
  };
}
