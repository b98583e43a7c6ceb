/**
 * The certification's spend through the store's reservations (api/live/spend.ts does the
 * same for the live paths): each call's worst case is held in the store against the panel's
 * spending_ceiling_usd, one transaction shared by every process on the same store, and
 * settled at usage × prices. So certification, re-elicitation and live calls count against
 * one ceiling. The invocation's own `--budget` is kept by a local guard in front.
 */
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../../api/config.ts';
import { RESERVATION_GRACE_MS } from '../../../api/live/spend.ts';
import type { PanelConfig } from '../../../providers/panel-config.ts';
import { openStore } from '../../../storage/open-store.ts';
import type { Store } from '../../../storage/store.ts';
import { createLocalSpendGuard, SpendCeilingError, type SpendGuard } from './spend-guard.ts';

export interface StoreGuardOptions {
  store: Store;
  /** The panel's spending_ceiling_usd: committed spend + reservations may not cross it. */
  ceilingUsd: number;
  /** This invocation's budget (--budget), at most the ceiling. */
  budgetUsd: number;
  /** The longest one call can run; a reservation left by a crash stops counting after it plus a grace period. */
  callTimeoutMs: number;
  purpose: string;
  now?: () => Date;
}

export function createStoreSpendGuard(options: StoreGuardOptions): SpendGuard {
  const local = createLocalSpendGuard(Math.min(options.budgetUsd, options.ceilingUsd));
  const now = options.now ?? (() => new Date());
  return {
    async reserve(ceilingUsd, model = 'unknown') {
      const held = local.reserve(ceilingUsd);
      const at = now();
      const id = `rsv_${randomUUID()}`;
      const expires_at = new Date(at.getTime() + options.callTimeoutMs + RESERVATION_GRACE_MS);
      let granted: boolean;
      try {
        granted = await options.store.reserveSpend({ id, purpose: options.purpose, model, amount_usd: ceilingUsd, expires_at }, options.ceilingUsd, at);
      } catch (error) {
        held.release();
        throw error;
      }
      if (!granted) {
        held.release();
        throw new SpendCeilingError(
          `the next call could cost up to $${ceilingUsd.toFixed(4)}, which would cross the shared spending ceiling of $${options.ceilingUsd.toFixed(2)} (spend recorded in the store plus calls in flight)`,
        );
      }
      return {
        async settle(actualUsd, usage) {
          held.settle(actualUsd);
          await options.store.settleSpend(id, {
            at: now().toISOString(),
            purpose: options.purpose,
            model,
            prompt_tokens: usage?.prompt_tokens ?? 0,
            completion_tokens: usage?.completion_tokens ?? 0,
            cost_usd: actualUsd,
          });
        },
        async release() {
          held.release();
          await options.store.settleSpend(id, undefined);
        },
      };
    },
    spentUsd: () => local.spentUsd(),
  };
}

/** The guard a command line uses: the configured store (STORE_PATH, as the API uses it) and the panel's ceiling. */
export async function openStoreSpendGuard(
  config: PanelConfig,
  env: NodeJS.ProcessEnv,
  purpose: string,
  budgetUsd = Infinity,
): Promise<{ guard: SpendGuard; close: () => Promise<void> }> {
  const store = await openStore(loadConfig(env).storePath);
  const callTimeoutMs = Math.max(config.defaults.timeout_ms, ...[...config.panel, ...config.extra].map((model) => model.timeout_ms ?? 0));
  return {
    guard: createStoreSpendGuard({ store, ceilingUsd: config.spending_ceiling_usd, budgetUsd, callTimeoutMs, purpose }),
    close: () => store.close(),
  };
}
