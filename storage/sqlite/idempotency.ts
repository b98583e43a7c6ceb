/** Idempotency-Keys on SQLite: reserving is one write transaction. */
import { decideReservation, type IdempotencyStore, type KeyRow, type Reservation } from '../idempotency.ts';
import type { Database, Transaction } from './db.ts';

export function createSqliteIdempotency(db: Database, transaction: Transaction): IdempotencyStore {
  const statements = {
    get: db.prepare('SELECT fingerprint, acknowledgement, reserved_at FROM idempotency_keys WHERE client = ? AND operation = ? AND key = ?'),
    reserve: db.prepare(
      'INSERT INTO idempotency_keys (client, operation, key, fingerprint, acknowledgement, reserved_at) VALUES (?, ?, ?, ?, NULL, ?) ON CONFLICT (client, operation, key) DO UPDATE SET fingerprint = excluded.fingerprint, reserved_at = excluded.reserved_at',
    ),
    complete: db.prepare('UPDATE idempotency_keys SET acknowledgement = ? WHERE client = ? AND operation = ? AND key = ? AND acknowledgement IS NULL'),
    release: db.prepare('DELETE FROM idempotency_keys WHERE client = ? AND operation = ? AND key = ? AND acknowledgement IS NULL'),
  };
  return {
    async reserveIdempotencyKey(scope, fingerprint, now, staleMs): Promise<Reservation> {
      return transaction(() => {
        const row = statements.get.get(scope.client, scope.operation, scope.key) as KeyRow | undefined;
        const decided = row && decideReservation(row, fingerprint, now.getTime(), staleMs);
        if (decided) return decided;
        statements.reserve.run(scope.client, scope.operation, scope.key, fingerprint, now.getTime());
        return { state: 'reserved' as const };
      });
    },
    async completeIdempotencyKey(scope, acknowledgement) {
      statements.complete.run(JSON.stringify(acknowledgement), scope.client, scope.operation, scope.key);
    },
    async releaseIdempotencyKey(scope) {
      statements.release.run(scope.client, scope.operation, scope.key);
    },
  };
}
