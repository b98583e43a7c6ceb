/**
 * How one model call spends its time: one deadline for the whole call, retries inside it.
 * The SDK's own retries are off (they restart the timeout on every attempt, so a hanging
 * model held a caller (retries + 1) × timeout); here only answers that say "try again"
 * (429, 5xx) and dropped connections are retried, never a timeout, and never a wait that
 * would end past the deadline.
 */
import type { ProviderFailure } from '../core/ports/chat.ts';

export const RETRYABLE: ReadonlySet<ProviderFailure> = new Set(['rate_limited', 'server_error', 'connection']);

const BASE_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 8_000;
/** A Retry-After longer than this is not honoured: the call fails instead of waiting. */
const MAX_RETRY_AFTER_MS = 60_000;

/** Milliseconds asked for by retry-after-ms or Retry-After (seconds or an HTTP date), if any. */
export function retryAfterMs(headers: { get(name: string): string | null } | undefined, now: number): number | undefined {
  const ms = Number(headers?.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

/** Exponential backoff with jitter, or the provider's Retry-After when it gives one. */
export function backoffMs(attempt: number, asked: number | undefined, random: () => number = Math.random): number {
  if (asked !== undefined) return asked <= MAX_RETRY_AFTER_MS ? asked : Number.POSITIVE_INFINITY;
  const base = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** attempt);
  return Math.round(base * (0.75 + random() * 0.5));
}

/** Resolves after ms, or rejects as soon as the signal aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Upper bound of a prompt's tokens: a token is at least one byte, plus each message's framing. */
export function maxPromptTokens(messages: readonly { content: string }[]): number {
  return messages.reduce((sum, message) => sum + Buffer.byteLength(message.content, 'utf8') + 8, 8);
}
