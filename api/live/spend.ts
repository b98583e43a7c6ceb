/**
 * The hard spending ceiling: before a live call is made, its maximum cost (every prompt byte
 * a token, plus max_tokens, at the model's prices) is reserved in the store; the call is
 * refused if committed spend plus the reservations in flight plus it would cross the ceiling.
 * After the call, the reservation is replaced by the real usage × prices. The check is one
 * transaction in the store, so it holds across processes sharing a PostgreSQL store.
 *
 * A crash leaves reservations behind: each expires after the longest call deadline plus a
 * grace period, after which it no longer counts, so a dead process cannot wedge the ceiling.
 */
import { randomUUID } from 'node:crypto';
import type { CallReport, Meter } from '../../core/live/metered-call.ts';
import { ProviderError, type Panel } from '../../providers/chat.ts';
import type { SpendStore } from '../../storage/spend.ts';

/** How long a reservation outlives the longest possible call before it stops counting. */
export const RESERVATION_GRACE_MS = 60_000;

/** The longest a single call can run: the largest per-model deadline of the panel. */
export function longestCallMs(panel: Panel): number {
  const { config } = panel;
  return Math.max(config.defaults.timeout_ms, ...[...config.panel, ...config.extra].map((model) => model.timeout_ms ?? 0));
}

export function createReservingMeter(store: SpendStore, panel: Panel, now: () => Date, observe?: (call: CallReport) => void): Meter {
  const ceiling = panel.config.spending_ceiling_usd;
  const ttlMs = longestCallMs(panel) + RESERVATION_GRACE_MS;
  return {
    ...(observe ? { observe } : {}),
    async reserve(purpose, model, amountUsd) {
      const at = now();
      const reservation = { id: `rsv_${randomUUID()}`, purpose, model: model.modelId, amount_usd: amountUsd, expires_at: new Date(at.getTime() + ttlMs) };
      if (!(await store.reserveSpend(reservation, ceiling, at))) {
        throw new ProviderError(
          'spending_ceiling',
          `not called: its worst-case cost of $${amountUsd.toFixed(4)} would cross the spending ceiling of $${ceiling.toFixed(2)} (spend plus calls in flight)`,
        );
      }
      return { id: reservation.id, amount_usd: amountUsd };
    },
    async settle(reservation, purpose, model, spent) {
      const entry = spent
        ? {
            at: now().toISOString(),
            purpose,
            model: model.modelId,
            prompt_tokens: spent.usage.prompt_tokens,
            completion_tokens: spent.usage.completion_tokens,
            cost_usd: spent.cost_usd,
          }
        : undefined;
      await store.settleSpend(reservation.id, entry);
    },
  };
}

/**
 * One signal for one run (deliberation, council, trace): aborted when the caller goes away or
 * cancels (`caller`), or when the run's own deadline passes. Its reason names which, so a
 * voice cut off is reported as `deadline` or `aborted`. Call `done()` when the run ends.
 */
export function runSignal(deadlineMs: number, caller?: AbortSignal): { signal: AbortSignal; done: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new ProviderError('deadline', `the run's deadline of ${deadlineMs} ms passed before this model answered`)),
    deadlineMs,
  );
  const onAbort = () => {
    const reason = caller?.reason as unknown;
    controller.abort(
      reason instanceof ProviderError
        ? reason
        : new ProviderError('aborted', `the call was aborted: ${reason instanceof Error ? reason.message : 'the caller went away'}`),
    );
  };
  if (caller?.aborted) onAbort();
  else caller?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    done() {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onAbort);
    },
  };
}
