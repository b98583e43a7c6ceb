/**
 * Keeps a certification under its spending ceiling by reservation: before a call, its
 * worst case (prompt estimate + the whole completion budget) is reserved; when it returns,
 * the reservation is settled at its real cost. A call that could cross the ceiling is not
 * made. The runner sees only this interface, so it can later be pointed at the store's
 * shared reservations (the live paths' ceiling).
 */
export interface Reservation {
  /** Replaces the hold by the real cost (and, for the store, the usage it was computed from). */
  settle(actualUsd: number, usage?: { prompt_tokens: number; completion_tokens: number }): void | Promise<void>;
  release(): void | Promise<void>;
}

export interface SpendGuard {
  /** Reserves `ceilingUsd` for a call to `model`, or throws SpendCeilingError when that could cross the ceiling. */
  reserve(ceilingUsd: number, model?: string): Reservation | Promise<Reservation>;
  /** What this invocation spent. */
  spentUsd(): number;
}

export class SpendCeilingError extends Error {}

/** The in-process guard: reserves synchronously. */
export interface LocalSpendGuard extends SpendGuard {
  reserve(ceilingUsd: number, model?: string): Reservation;
}

export function createLocalSpendGuard(limitUsd: number): LocalSpendGuard {
  let spent = 0;
  let reserved = 0;
  return {
    reserve(ceilingUsd) {
      if (spent + reserved + ceilingUsd > limitUsd) {
        throw new SpendCeilingError(
          `the next call could cost up to $${ceilingUsd.toFixed(4)}, which would cross the ceiling of $${limitUsd.toFixed(2)} ($${spent.toFixed(4)} spent)`,
        );
      }
      reserved += ceilingUsd;
      let open = true;
      const close = () => {
        if (!open) return false;
        open = false;
        reserved -= ceilingUsd;
        return true;
      };
      return {
        settle(actualUsd) {
          if (close()) spent += actualUsd;
        },
        release() {
          close();
        },
      };
    },
    spentUsd: () => spent,
  };
}

/** At most `limit` tasks at once; waiting tasks start in arrival order (a finishing task hands its slot on). */
export function createLimiter(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    else active++;
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}
