/** Spend and reservations on PostgreSQL: one advisory lock for every reservation and settlement. */
import type pg from 'pg';
import { withinCeiling, type SpendEntry, type SpendStore } from '../spend.ts';
import { lock, type Queryable, type Transaction } from './db.ts';

const insertSpend = (db: Queryable, entry: SpendEntry) =>
  db.query('INSERT INTO spend (at, purpose, model, prompt_tokens, completion_tokens, cost_usd) VALUES ($1, $2, $3, $4, $5, $6)', [
    entry.at,
    entry.purpose,
    entry.model,
    entry.prompt_tokens,
    entry.completion_tokens,
    entry.cost_usd,
  ]);

export function createPostgresSpend(pool: pg.Pool, transaction: Transaction): SpendStore {
  return {
    async addSpend(entry) {
      await insertSpend(pool, entry);
    },
    async totalSpendUsd() {
      const { rows } = await pool.query<{ total: number }>('SELECT COALESCE(SUM(cost_usd), 0) AS total FROM spend');
      return Number(rows[0]!.total);
    },
    async reserveSpend(reservation, ceilingUsd, now) {
      return transaction(async (client) => {
        // One lock for every reservation: processes take turns, so two cannot both fit the last dollar.
        await lock(client, 'spend-ceiling');
        await client.query('DELETE FROM spend_reservations WHERE expires_at <= $1', [now.getTime()]);
        const { rows } = await client.query<{ spent: number; reserved: number }>(
          'SELECT (SELECT COALESCE(SUM(cost_usd), 0) FROM spend) AS spent, (SELECT COALESCE(SUM(amount_usd), 0) FROM spend_reservations) AS reserved',
        );
        if (!withinCeiling(Number(rows[0]!.spent) + Number(rows[0]!.reserved) + reservation.amount_usd, ceilingUsd)) return false;
        await client.query('INSERT INTO spend_reservations (id, purpose, model, amount_usd, expires_at) VALUES ($1, $2, $3, $4, $5)', [
          reservation.id,
          reservation.purpose,
          reservation.model,
          reservation.amount_usd,
          reservation.expires_at.getTime(),
        ]);
        return true;
      });
    },
    async settleSpend(reservationId, entry) {
      await transaction(async (client) => {
        await lock(client, 'spend-ceiling');
        await client.query('DELETE FROM spend_reservations WHERE id = $1', [reservationId]);
        if (entry) await insertSpend(client, entry);
      });
    },
    async spendStatus(now) {
      const { rows } = await pool.query<{ spent: number; reserved: number }>(
        'SELECT (SELECT COALESCE(SUM(cost_usd), 0) FROM spend) AS spent, (SELECT COALESCE(SUM(amount_usd), 0) FROM spend_reservations WHERE expires_at > $1) AS reserved',
        [now.getTime()],
      );
      return { spent_usd: Number(rows[0]!.spent), reserved_usd: Number(rows[0]!.reserved) };
    },
  };
}
