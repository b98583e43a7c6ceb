/**
 * The state the API keeps between requests, by concern: each concern is a small interface in
 * its own file (storage/<concern>.ts), implemented once per driver (storage/sqlite/,
 * storage/postgres/). `Store` is their composition, what `openStore` returns; a consumer that
 * needs one concern takes that concern's interface.
 */
import type { ContributionsStore } from './contributions.ts';
import type { FederationStore } from './federation.ts';
import type { IdempotencyStore } from './idempotency.ts';
import type { JobsStore } from './jobs.ts';
import type { LimitsStore } from './limits.ts';
import type { RecordsStore } from './records.ts';
import type { SecretsStore } from './secrets.ts';
import type { SessionsStore } from './sessions.ts';
import type { SightingsStore } from './sightings.ts';
import type { SpendStore } from './spend.ts';

export * from './contributions.ts';
export type * from './federation.ts';
export type { Acknowledgement, IdempotencyScope, IdempotencyStore, Reservation } from './idempotency.ts';
export * from './jobs.ts';
export type * from './limits.ts';
export type * from './records.ts';
export type * from './secrets.ts';
export type * from './sessions.ts';
export type { NewTensionSighting, SightingsStore, TensionSightingRecord } from './sightings.ts';
export * from './spend.ts';

/** Every concern of the store, as both drivers implement it. */
export interface Store
  extends JobsStore, ContributionsStore, SessionsStore, LimitsStore, SpendStore, RecordsStore, IdempotencyStore, FederationStore, SightingsStore, SecretsStore {
  close(): Promise<void>;
}

/**
 * The store cannot be reached (its database server is down, restarting or unreachable). The
 * write may or may not have reached it: only an acknowledged write is known to be stored,
 * and a resend with the same Idempotency-Key is never stored twice. Retryable.
 */
export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`the store is unavailable: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'StoreUnavailableError';
  }
}

/**
 * A value the store refuses to keep: text with NUL or an unpaired surrogate, which the two
 * drivers could not keep alike. Permanent (the same value fails the same way); the HTTP edge
 * rejects such text first, so this is the drivers' own guarantee, not a path clients see.
 */
export class UnstorableTextError extends Error {
  constructor(
    readonly field: string,
    readonly problem: 'nul' | 'lone_surrogate',
  ) {
    super(`the store keeps only well-formed text without NUL: ${field} has ${problem === 'nul' ? 'a NUL character' : 'an unpaired surrogate'}`);
    this.name = 'UnstorableTextError';
  }
}
