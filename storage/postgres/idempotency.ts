/** Idempotency-Keys on PostgreSQL: reserving is one transaction under the key's advisory lock. */
import type pg from 'pg';
import { decideReservation, type IdempotencyStore, type KeyRow, type Reservation } from '../idempotency.ts';
import { lock, type Transaction } from './db.ts';

export function createPostgresIdempotency(pool: pg.Pool, transaction: Transaction): IdempotencyStore {
  return {
    async reserveIdempotencyKey(scope, fingerprint, now, staleMs): Promise<Reservation> {
      return transaction(async (client) => {
        await lock(client, `idempotency:${scope.client}:${scope.operation}:${scope.key}`);
        const { rows } = await client.query<KeyRow>(
          'SELECT fingerprint, acknowledgement, reserved_at FROM idempotency_keys WHERE client = $1 AND operation = $2 AND key = $3',
          [scope.client, scope.operation, scope.key],
        );
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
      // Kept as text: JSONB would reorder the acknowledgement's keys.
      await pool.query('UPDATE idempotency_keys SET acknowledgement = $1 WHERE client = $2 AND operation = $3 AND key = $4 AND acknowledgement IS NULL', [
        JSON.stringify(acknowledgement),
        scope.client,
        scope.operation,
        scope.key,
      ]);
    },
    async releaseIdempotencyKey(scope) {
      await pool.query('DELETE FROM idempotency_keys WHERE client = $1 AND operation = $2 AND key = $3 AND acknowledgement IS NULL', [
        scope.client,
        scope.operation,
        scope.key,
      ]);
    },
  };
}
