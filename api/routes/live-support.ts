/**
 * What the paths that call live models share (council, trace, jobs, the deliberation forms of
 * /api/query): without a configured panel they answer 503 and point at what works; job
 * submission, sync answers (JSON or Server-Sent Events), the ingestion secret.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { FastQuery } from '../../core/query-params.ts';
import { apiError, type SuggestedCall } from '../../schemas/errors.ts';
import {
  AsyncJobAcceptedSchema,
  DeliberationResponseSchema,
  JobStateSchema,
  TraceResponseSchema,
  type AsyncJobAccepted,
  type JobState,
} from '../../schemas/api.ts';
import type { LiveService } from '../live/service.ts';
import type { JobKind, JobRecord, JobStage } from '../../storage/store.ts';
import { streamRun, wantsEventStream } from '../http/sse.ts';
import { answerOnce } from '../http/idempotency.ts';
import { assertWellFormedQuery } from '../http/text-guard.ts';
import { send, type RouteContext } from './types.ts';
import { encodeParam } from '../../core/url.ts';
import { sampleQuestion } from '../../core/examples.ts';

export function livePanelUnavailable(question: string | undefined) {
  return apiError(
    'LIVE_PANEL_UNAVAILABLE',
    'this deployment has no live model panel configured, so deliberation, trace and council are unavailable',
    'Use the fast path instead: GET /api/query?q=<question> (retrieval with a receipt, no model call), and GET /api/divergences/search?q=<question> for existing Atlas records. /api/health lists what is wired.',
    { retryable: false, suggestedNextCall: { method: 'GET', path: '/api/query', query: { q: question ?? '<your question>' } } },
  );
}

export function requireLive(context: RouteContext, question: string | undefined): LiveService {
  if (!context.live) throw livePanelUnavailable(question);
  return context.live;
}

/** Live paths are slow and cost money: limited per client and for the deployment. */
export async function limitLive(context: RouteContext, request: Request, response: Response, kind: 'council' | 'live'): Promise<void> {
  if (!context.limiter || !context.limits) return;
  if (kind === 'council') await context.limiter.check(request, response, 'council', context.limits.council, context.limits.councilGlobal);
  else await context.limiter.check(request, response, 'live', context.limits.live, context.limits.liveGlobal);
}

export const POLL_INTERVAL_SECONDS = 3;

/**
 * Aborted when the client goes away before its answer is sent: a live run that nobody
 * will read stops its model calls (and their spending) instead of paying for the panel.
 */
export function callerSignal(response: Response): AbortSignal {
  const controller = new AbortController();
  response.once('close', () => {
    if (!response.writableFinished) controller.abort(new Error('the client went away before the answer was sent'));
  });
  return controller.signal;
}

export const cancelPath = (id: string) => `/api/jobs/cancel?job=${encodeParam(id)}`;

const pollUrlOf = (job: JobRecord) => `/api/query?job=${encodeParam(job.id)}`;

function acceptedBody(job: JobRecord, extra: Record<string, unknown> = {}): AsyncJobAccepted {
  const pollUrl = pollUrlOf(job);
  return {
    job_id: job.id,
    ...extra,
    poll_url: pollUrl,
    cancel_url: cancelPath(job.id),
    status: job.status,
    kind: job.kind,
    poll_after_seconds: POLL_INTERVAL_SECONDS,
    note: `Poll GET ${pollUrl} about every ${POLL_INTERVAL_SECONDS} s; a deliberation takes about 25 s. The full result is returned once status is done. POST ${cancelPath(job.id)} cancels it and aborts its model calls.`,
  };
}

/**
 * Submits a background job (202 with the poll URL), once per Idempotency-Key of this client
 * and operation: the same submission again with the key gets the same job, not a second one.
 */
export async function submitJob(
  context: RouteContext,
  request: Request,
  response: Response,
  operation: { name: 'query' | 'trace' | 'council'; limit: 'live' | 'council' },
  kind: JobKind,
  input: unknown,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const live = context.live!;
  if (request.method !== 'POST') assertWellFormedQuery(request);
  const work = async () => {
    await limitLive(context, request, response, operation.limit);
    const job = await live.submit(kind, input);
    return { status: 202, headers: { Location: pollUrlOf(job) }, body: acceptedBody(job, extra) };
  };
  if (!context.store || !context.limiter) {
    const answer = await work();
    response.setHeader('Location', answer.headers.Location);
    send(response, AsyncJobAcceptedSchema, answer.body, answer.status);
    return;
  }
  // The Idempotency-Key fingerprint and the resend are the request as received, not a parameter check.
  // eslint-disable-next-line no-restricted-syntax
  const received = request.query as Record<string, string>;
  await answerOnce(request, response, {
    store: context.store,
    now: context.now(),
    client: await context.limiter.client(request),
    operation: operation.name,
    request: { method: request.method, query: received as unknown, body: request.method === 'POST' ? (request.body as unknown) : null },
    resend:
      request.method === 'POST'
        ? { method: 'POST', path: request.path, body: request.body as unknown }
        : { method: 'GET', path: request.path, query: received },
    work,
  });
}

/** The job as polled: its status, the stages so far (retrieval, each voice, the chair), and the result once done. */
export function jobState(job: JobRecord, stages: JobStage[]): JobState {
  const base = {
    job_id: job.id,
    kind: job.kind,
    status: job.status,
    created_at: job.created_at,
    updated_at: job.updated_at,
    poll_url: `/api/query?job=${encodeParam(job.id)}`,
    stages,
  };
  if (job.status === 'done') return { ...base, ...(job.result as Record<string, unknown>) };
  // The runner stores an error with every failed or cancelled job; the schema has no null error.
  if (job.status === 'failed' || job.status === 'cancelled') return job.error ? { ...base, error: { ...job.error } } : base;
  return { ...base, poll_after_seconds: POLL_INTERVAL_SECONDS };
}

function constantTimeEqual(a: string, b: string): boolean {
  // Hash first so the comparison does not leak the secret's length.
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

export function assertIngestSecret(request: Request, context: RouteContext, question: string): void {
  // Every refusal here points at the same council without persist, which needs no secret.
  const withoutPersist: SuggestedCall = { method: 'POST', path: '/api/council', body: { q: question } };
  if (!context.ingestSecret) {
    throw apiError(
      'PERSISTENCE_UNAVAILABLE',
      'persisting council records is not enabled on this deployment (no INGEST_SECRET configured)',
      'Run the council without persist; an operator can enable persistence by setting INGEST_SECRET.',
      { suggestedNextCall: withoutPersist },
    );
  }
  const header = request.get('authorization') ?? '';
  const match = header.match(/^Bearer\s+(.+)$/i);
  if (!match) {
    throw apiError(
      'AUTH_REQUIRED',
      'persisting needs Authorization: Bearer <INGEST_SECRET>',
      'Send the ingestion secret as a bearer token, or call without persist.',
      { headers: { 'WWW-Authenticate': 'Bearer realm="polyphony-ingest"' }, suggestedNextCall: withoutPersist },
    );
  }
  if (!constantTimeEqual(match[1]!.trim(), context.ingestSecret)) {
    throw apiError(
      'AUTH_INVALID',
      'the bearer token is not the ingestion secret',
      'Check the secret with the operator; the council can still be run without persist.',
      { suggestedNextCall: withoutPersist },
    );
  }
}

/**
 * Runs a sync live path: JSON once done, or Server-Sent Events (each stage, then the
 * result) when the caller accepts text/event-stream. The budget is checked before the
 * stream starts, so a refusal keeps its HTTP status.
 */
export async function answerNow<S extends z.ZodType>(
  context: RouteContext,
  request: Request,
  response: Response,
  live: LiveService,
  schema: S,
  run: (signal: AbortSignal, onStage?: (stage: JobStage) => void) => Promise<z.output<S>>,
): Promise<void> {
  response.vary('Accept');
  // The client going away (a closed stream too) aborts this run's own calls, nobody else's.
  const signal = callerSignal(response);
  if (!wantsEventStream(request)) {
    send(response, schema, await run(signal));
    return;
  }
  await live.assertBudget();
  await streamRun(response, context.log ?? (() => {}), (onStage) => run(signal, onStage));
}

/** The deliberation forms of GET /api/query: async, sync, job and mode=trace. */
export async function handleLiveQuery(context: RouteContext, query: FastQuery, request: Request, response: Response): Promise<boolean> {
  if (query.job !== undefined) {
    const live = requireLive(context, undefined);
    const job = await live.poll(query.job);
    if (!job) {
      throw apiError('JOB_NOT_FOUND', `no job has id "${query.job}"`, 'Submit the question again with async=1 and poll the job_id you receive.', {
        suggestedNextCall: { method: 'GET', path: '/api/query', query: { q: sampleQuestion(context.corpus), async: '1' } },
      });
    }
    send(response, JobStateSchema, jobState(job, await live.stages(job.id)));
    return true;
  }
  if (query.async) {
    requireLive(context, query.q);
    await submitJob(context, request, response, { name: 'query', limit: 'live' }, 'deliberation', { query });
    return true;
  }
  if (query.sync) {
    const live = requireLive(context, query.q);
    await limitLive(context, request, response, 'live');
    await answerNow(context, request, response, live, DeliberationResponseSchema, (signal, onStage) => live.deliberateNow({ query }, signal, onStage));
    return true;
  }
  if (query.mode === 'trace') {
    const live = requireLive(context, query.q);
    await limitLive(context, request, response, 'live');
    await answerNow(context, request, response, live, TraceResponseSchema, (signal, onStage) => live.traceNow(query, signal, onStage));
    return true;
  }
  return false;
}
