/** Money spent on live model calls, and the reservations that keep a ceiling across processes. */

export interface SpendEntry {
  at: string;
  purpose: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
}

/**
 * Money held for one live call while it runs: its maximum cost, counted against the ceiling
 * until the call settles. A reservation whose process died stops counting at `expires_at`
 * (after the call's own deadline), so a crash cannot hold the ceiling forever.
 */
export interface SpendReservation {
  id: string;
  purpose: string;
  model: string;
  amount_usd: number;
  expires_at: Date;
}

/** Sums of floating-point dollars: a hair of rounding is not a crossing. */
export function withinCeiling(total: number, ceilingUsd: number): boolean {
  return total <= ceilingUsd + 1e-9;
}

export interface SpendStore {
  addSpend(entry: SpendEntry): Promise<void>;
  totalSpendUsd(): Promise<number>;
  /**
   * Holds `reservation.amount_usd` if committed spend plus unexpired reservations plus it stay
   * within `ceilingUsd`; false (nothing held) otherwise. Atomic across processes sharing the
   * store. Expired reservations are dropped on the way.
   */
  reserveSpend(reservation: SpendReservation, ceilingUsd: number, now: Date): Promise<boolean>;
  /** Drops a reservation and, in the same step, records what the call really cost (if anything). */
  settleSpend(reservationId: string, entry: SpendEntry | undefined): Promise<void>;
  /** Committed spend and the unexpired reservations, in USD. */
  spendStatus(now: Date): Promise<{ spent_usd: number; reserved_usd: number }>;
}
