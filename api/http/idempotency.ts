/**
 * Idempotency-Key on writes (after the IETF httpapi Idempotency-Key draft): a key belongs to
 * one client and one operation; the first request with it is handled and its acknowledgement
 * (status, headers, body text) kept; the same request again with the key gets that
 * acknowledgement byte for byte (plus Idempotent-Replayed: true); a different request with the
 * key is 422 IDEMPOTENCY_KEY_REUSED; while the first is still being handled, 409.
 */
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { canonicalJson } from '../../core/canonical-json.ts';
import { apiError, type SuggestedCall } from '../../schemas/errors.ts';
import type { Acknowledgement, IdempotencyStore } from '../../storage/idempotency.ts';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

/** A reservation older than this is taken over: its request crashed or lost the store. */
export const RESERVATION_STALE_MS = 60_000;

export function idempotencyKey(request: Request): string | null {
  const key = request.get('idempotency-key');
  if (key === undefined) return null;
  if (!IDEMPOTENCY_KEY.test(key)) {
    const resend: SuggestedCall =
      request.method === 'POST'
        ? { method: 'POST', path: request.path, body: request.body as unknown }
        : { method: request.method, path: request.path, query: request.query as Record<string, string> };
    throw apiError(
      'INVALID_PARAMETER',
      'Idempotency-Key must be 1-200 visible ASCII characters',
      'Send a unique key such as a UUID, or leave the header out.',
      { suggestedNextCall: resend },
    );
  }
  return key;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

export interface KeyedWrite {
  store: IdempotencyStore;
  now: Date;
  /** The hashed client id: keys of different clients never meet. */
  client: string;
  /** e.g. "contribute", "store", "query": keys of different operations never meet. */
  operation: string;
  /** What makes two requests the same request (e.g. the body as sent); hashed canonically. */
  request: unknown;
  /** How to send the same request again, for the 422's suggested_next_call. */
  resend: SuggestedCall;
  /** Handles the request; throwing releases the key, so nothing is acknowledged that was not stored. */
  work: () => Promise<Answer>;
}

function send(response: Response, acknowledgement: Acknowledgement): void {
  for (const [name, value] of Object.entries(acknowledgement.headers)) response.setHeader(name, value);
  response.status(acknowledgement.status).type('application/json').send(acknowledgement.body);
}

const toAcknowledgement = (answer: Answer): Acknowledgement => ({ status: answer.status, headers: answer.headers ?? {}, body: JSON.stringify(answer.body) });

/** Answers a write once per Idempotency-Key (or simply answers it when the request has none). */
export async function answerOnce(request: Request, response: Response, write: KeyedWrite): Promise<void> {
  const key = idempotencyKey(request);
  if (key === null) {
    send(response, toAcknowledgement(await write.work()));
    return;
  }
  const scope = { client: write.client, operation: write.operation, key };
  const fingerprint = createHash('sha256')
    .update(canonicalJson(write.request ?? null))
    .digest('hex');
  const reservation = await write.store.reserveIdempotencyKey(scope, fingerprint, write.now, RESERVATION_STALE_MS);
  if (reservation.state === 'replay') {
    response.setHeader('Idempotent-Replayed', 'true');
    send(response, reservation.acknowledgement);
    return;
  }
  if (reservation.state === 'mismatch') throw keyReused(key, write);
  if (reservation.state === 'in_progress') throw keyInUse(key, reservation.retryAfterMs, write);
  let answer: Answer;
  try {
    answer = await write.work();
  } catch (error) {
    // The key is freed for a resend; if the store is gone too, the reservation goes stale.
    await write.store.releaseIdempotencyKey(scope).catch(() => {});
    throw error;
  }
  const acknowledgement = toAcknowledgement(answer);
  await write.store.completeIdempotencyKey(scope, acknowledgement);
  send(response, acknowledgement);
}

function keyReused(key: string, write: KeyedWrite) {
  return apiError(
    'IDEMPOTENCY_KEY_REUSED',
    `this client already used Idempotency-Key "${key}" for a different ${write.resend.method} ${write.resend.path} request; a key names exactly one request`,
    'To send this new request, use a fresh Idempotency-Key (e.g. a new UUID). To get the answer to the earlier request, resend that request unchanged with this key. Nothing was stored for this one.',
    { suggestedNextCall: write.resend, details: { idempotency_key: key, operation: write.operation } },
  );
}

function keyInUse(key: string, retryAfterMs: number, write: KeyedWrite) {
  const seconds = Math.max(1, Math.ceil(Math.min(retryAfterMs, 5_000) / 1000));
  return apiError(
    'IDEMPOTENCY_KEY_IN_USE',
    `a request with Idempotency-Key "${key}" is still being handled`,
    `Wait ${seconds} s (Retry-After) and resend the same request with the same key: you will get its answer.`,
    {
      retryable: true,
      headers: { 'Retry-After': String(seconds) },
      suggestedNextCall: { ...write.resend, headers: { 'Idempotency-Key': key } },
      details: { idempotency_key: key, retry_after_seconds: seconds },
    },
  );
}
