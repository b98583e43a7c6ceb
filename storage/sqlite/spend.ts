/** Spend and reservations on SQLite: reserve and settle are one write transaction each. */
import { withinCeiling, type SpendEntry, type SpendStore } from '../spend.ts';
import type { Database, Transaction } from './db.ts';

export function createSqliteSpend(db: Database, transaction: Transaction): SpendStore {
  const statements = {
    insertSpend: db.prepare('INSERT INTO spend (at, purpose, model, prompt_tokens, completion_tokens, cost_usd) VALUES (?, ?, ?, ?, ?, ?)'),
    total: db.prepare('SELECT COALESCE(SUM(cost_usd), 0) AS total FROM spend'),
    dropExpired: db.prepare('DELETE FROM spend_reservations WHERE expires_at <= ?'),
    reserved: db.prepare('SELECT COALESCE(SUM(amount_usd), 0) AS total FROM spend_reservations WHERE expires_at > ?'),
    insertReservation: db.prepare('INSERT INTO spend_reservations (id, purpose, model, amount_usd, expires_at) VALUES (?, ?, ?, ?, ?)'),
    dropReservation: db.prepare('DELETE FROM spend_reservations WHERE id = ?'),
  };
  const add = (entry: SpendEntry) =>
    statements.insertSpend.run(entry.at, entry.purpose, entry.model, entry.prompt_tokens, entry.completion_tokens, entry.cost_usd);
  const spent = () => Number((statements.total.get() as { total: number }).total);
  const reserved = (now: Date) => Number((statements.reserved.get(now.getTime()) as { total: number }).total);
  return {
    async addSpend(entry) {
      add(entry);
    },
    totalSpendUsd: async () => spent(),
    async reserveSpend(reservation, ceilingUsd, now) {
      return transaction(() => {
        statements.dropExpired.run(now.getTime());
        if (!withinCeiling(spent() + reserved(now) + reservation.amount_usd, ceilingUsd)) return false;
        statements.insertReservation.run(reservation.id, reservation.purpose, reservation.model, reservation.amount_usd, reservation.expires_at.getTime());
        return true;
      });
    },
    async settleSpend(reservationId, entry) {
      transaction(() => {
        statements.dropReservation.run(reservationId);
        if (entry) add(entry);
      });
    },
    spendStatus: async (now) => ({ spent_usd: spent(), reserved_usd: reserved(now) }),
  };
}
