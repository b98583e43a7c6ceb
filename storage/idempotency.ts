/** The rule both drivers apply to an Idempotency-Key row that already exists (see Store.reserveIdempotencyKey). */
import type { Acknowledgement, Reservation } from './store.ts';

export interface KeyRow {
  fingerprint: string;
  /** JSON of the Acknowledgement once completed, null while reserved. */
  acknowledgement: string | null;
  reserved_at: number | string;
}

/** What an existing row means for a new request; undefined when the request may take the key (a stale reservation). */
export function decideReservation(row: KeyRow, fingerprint: string, nowMs: number, staleMs: number): Exclude<Reservation, { state: 'reserved' }> | undefined {
  if (row.acknowledgement !== null) {
    if (row.fingerprint !== fingerprint) return { state: 'mismatch' };
    return { state: 'replay', acknowledgement: JSON.parse(row.acknowledgement) as Acknowledgement };
  }
  const age = nowMs - Number(row.reserved_at);
  // A reservation left behind (its request crashed or lost the store) is taken over.
  if (age >= staleMs) return undefined;
  if (row.fingerprint !== fingerprint) return { state: 'mismatch' };
  return { state: 'in_progress', retryAfterMs: Math.min(staleMs, staleMs - age) };
}
