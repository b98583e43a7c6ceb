/**
 * Every live call goes through here: its maximum cost is reserved against the spending
 * ceiling before it is made, settled with the real usage after (or released when the
 * provider reported none), and added to the run's ledger, so the cost a response reports
 * is the sum of every call it made: panel, chair, retries and second tries.
 */
import { ProviderError, type ChatModel, type ChatRequest, type ChatResult, type Usage } from '../ports/chat.ts';

export interface Reservation {
  id: string;
  amount_usd: number;
}

export interface Meter {
  /** Reserves `amountUsd` for one call; throws ProviderError('spending_ceiling') when it would cross the ceiling. */
  reserve(purpose: string, model: ChatModel, amountUsd: number): Promise<Reservation>;
  /** Replaces the reservation by what the call really cost (nothing when `spent` is undefined). */
  settle(reservation: Reservation, purpose: string, model: ChatModel, spent: { usage: Usage; cost_usd: number } | undefined): Promise<void>;
  /** Told of each call once it ended, refused ones included (metrics, provider-call logs). */
  observe?(call: CallReport): void;
}

/**
 * How a call ended: answered, answered but cut at max_tokens (truncated), failed (the
 * provider's error or an unusable answer), cut (the run's deadline or the caller's abort),
 * or refused_budget (not made: the spending ceiling).
 */
export type CallOutcome = 'answered' | 'truncated' | 'failed' | 'cut' | 'refused_budget';

export interface CallReport {
  role: CallRole;
  purpose: string;
  model: string;
  outcome: CallOutcome;
  latency_ms: number;
  cost_usd: number;
  /** The provider failure's kind, when it failed. */
  failure?: string;
}

function outcomeOf(error: unknown): { outcome: CallOutcome; failure?: string } {
  if (!(error instanceof ProviderError)) return { outcome: 'failed' };
  if (error.failure === 'spending_ceiling') return { outcome: 'refused_budget', failure: error.failure };
  if (error.failure === 'truncated') return { outcome: 'truncated', failure: error.failure };
  if (error.failure === 'deadline' || error.failure === 'aborted') return { outcome: 'cut', failure: error.failure };
  return { outcome: 'failed', failure: error.failure };
}

export type CallRole = 'panel' | 'chair';

export interface Ledger {
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
  panel_usd: number;
  chair_usd: number;
}

/** What one run (deliberation, council, trace) needs to make calls: the meter, its ledger, its signal. */
export interface CallScope {
  meter: Meter;
  ledger: Ledger;
  /** Aborted when the caller goes away, the job is cancelled or the run's deadline passes. */
  signal?: AbortSignal;
}

export function createLedger(): Ledger {
  return { calls: 0, prompt_tokens: 0, completion_tokens: 0, cost_usd: 0, panel_usd: 0, chair_usd: 0 };
}

/** The cost block of a response, from its ledger. */
export function costOf(ledger: Ledger) {
  return {
    total_usd: ledger.cost_usd,
    panel_usd: ledger.panel_usd,
    chair_usd: ledger.chair_usd,
    calls: ledger.calls,
    prompt_tokens: ledger.prompt_tokens,
    completion_tokens: ledger.completion_tokens,
  };
}

function record(ledger: Ledger, role: CallRole, spent: { usage: Usage; cost_usd: number }): void {
  ledger.calls += 1;
  ledger.prompt_tokens += spent.usage.prompt_tokens;
  ledger.completion_tokens += spent.usage.completion_tokens;
  ledger.cost_usd += spent.cost_usd;
  if (role === 'panel') ledger.panel_usd += spent.cost_usd;
  else ledger.chair_usd += spent.cost_usd;
}

export async function meteredCall(scope: CallScope, role: CallRole, purpose: string, model: ChatModel, request: ChatRequest): Promise<ChatResult> {
  if (scope.signal?.aborted) {
    const reason = scope.signal.reason as unknown;
    throw reason instanceof ProviderError ? reason : new ProviderError('aborted', 'the call was cancelled');
  }
  // Latency as measured here (reservation included), for metrics; the result's latency_ms is the provider's own.
  const started = performance.now();
  const report = (ended: { outcome: CallOutcome; failure?: string }, costUsd: number) =>
    scope.meter.observe?.({ role, purpose, model: model.modelId, latency_ms: Math.round(performance.now() - started), cost_usd: costUsd, ...ended });
  let reservation: Reservation;
  try {
    reservation = await scope.meter.reserve(purpose, model, model.maxCostUsd(request));
  } catch (error) {
    report(outcomeOf(error), 0);
    throw error;
  }
  let spent: { usage: Usage; cost_usd: number } | undefined;
  try {
    const result = await model.complete(request, scope.signal);
    spent = { usage: result.usage, cost_usd: result.cost_usd };
    report({ outcome: result.truncated ? 'truncated' : 'answered' }, result.cost_usd);
    return result;
  } catch (error) {
    spent = error instanceof ProviderError ? error.spent : undefined;
    report(outcomeOf(error), spent?.cost_usd ?? 0);
    throw error;
  } finally {
    if (spent) record(scope.ledger, role, spent);
    else scope.ledger.calls += 1;
    await scope.meter.settle(reservation, purpose, model, spent);
  }
}
