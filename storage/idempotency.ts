/** Idempotency-Keys: held per client and operation, and the rule both drivers apply to an existing key. */

/** An Idempotency-Key belongs to one client and one operation (e.g. "contribute", "store", "query"). */
export interface IdempotencyScope {
  client: string;
  operation: string;
  key: string;
}

/** What a keyed write answered: replayed verbatim for the same key and the same request. */
export interface Acknowledgement {
  status: number;
  headers: Record<string, string>;
  /** The JSON text of the body, byte for byte. */
  body: string;
}

export type Reservation =
  /** The key is now held for this request: complete it with the acknowledgement, or release it. */
  | { state: 'reserved' }
  /** The key answered this same request before: that acknowledgement. */
  | { state: 'replay'; acknowledgement: Acknowledgement }
  /** The key was used for a different request (another fingerprint). */
  | { state: 'mismatch' }
  /** The same request with this key is still being handled. */
  | { state: 'in_progress'; retryAfterMs: number };

export interface IdempotencyStore {
  /**
   * Holds an Idempotency-Key for one request, atomically: a new key (or one whose holder
   * left it pending for staleMs, e.g. a crash) is reserved; a completed key with the same
   * fingerprint replays; another fingerprint is a mismatch; a live pending one is in progress.
   */
  reserveIdempotencyKey(scope: IdempotencyScope, fingerprint: string, now: Date, staleMs: number): Promise<Reservation>;
  /** Keeps the acknowledgement of a reserved key; from now on the key replays it. */
  completeIdempotencyKey(scope: IdempotencyScope, acknowledgement: Acknowledgement): Promise<void>;
  /** Frees a reserved key whose request failed before an acknowledgement (nothing is kept for it). */
  releaseIdempotencyKey(scope: IdempotencyScope): Promise<void>;
}

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
