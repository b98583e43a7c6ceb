/**
 * Paths that call live models: council, trace, and the deliberation forms of /api/query.
 * Without a configured panel they answer 503 and point at what works.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { CancelJobRequestSchema } from '../../schemas/api.ts';
import { GLYPHS } from '../../schemas/vocab.ts';
import { parseQueryParameters, rejectUnknownParameters, single, MAX_QUERY_CHARS, type FastQuery, type RawQuery } from '../../core/query-params.ts';
import { apiError, type SuggestedCall } from '../../schemas/errors.ts';
import type { LiveService } from '../live/service.ts';
import type { JobKind, JobRecord, JobStage } from '../../storage/store.ts';
import { streamRun, wantsEventStream } from '../http/sse.ts';
import { answerOnce, idempotencyKey } from '../http/idempotency.ts';
import { assertWellFormedQuery } from '../http/text-guard.ts';
import type { RouteContext, RouteDefinition } from './types.ts';
import { encodeParam } from '../../core/url.ts';
import { mendBody, sampleQuestion } from '../../core/examples.ts';
import { parseOrSuggest, truncate, without, withValue } from '../../core/next-call.ts';

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

function acceptedBody(job: JobRecord, extra: Record<string, unknown> = {}) {
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
    response.status(answer.status).setHeader('Location', answer.headers.Location).json(answer.body);
    return;
  }
  await answerOnce(request, response, {
    store: context.store,
    now: context.now(),
    client: await context.limiter.client(request),
    operation: operation.name,
    request: { method: request.method, query: request.query as unknown, body: request.method === 'POST' ? (request.body as unknown) : null },
    resend: request.method === 'POST' ? { method: 'POST', path: request.path, body: request.body as unknown } : { method: 'GET', path: request.path, query: request.query as Record<string, string> },
    work,
  });
}

/** The job as polled: its status, the stages so far (retrieval, each voice, the chair), and the result once done. */
export function jobState(job: JobRecord, stages: JobStage[]) {
  const base = { job_id: job.id, kind: job.kind, status: job.status, created_at: job.created_at, updated_at: job.updated_at, poll_url: `/api/query?job=${encodeParam(job.id)}`, stages };
  if (job.status === 'done') return { ...base, ...(job.result as Record<string, unknown>) };
  if (job.status === 'failed' || job.status === 'cancelled') return { ...base, error: job.error };
  return { ...base, poll_after_seconds: POLL_INTERVAL_SECONDS };
}

function questionOf(raw: RawQuery, path: string, sample: string): string {
  const q = single(raw, 'q');
  if (q === undefined || q.trim() === '') {
    throw apiError('PARAM_MISSING', 'q is missing or empty', `Resend with q set to your question, e.g. GET ${path}?q=...`, { extra: { param_missing: true }, repair: withValue('q', sample) });
  }
  if (q.length > MAX_QUERY_CHARS) throw apiError('QUERY_TOO_LONG', `q is ${q.length} characters; the limit is ${MAX_QUERY_CHARS}`, 'Shorten the question.', { repair: withValue('q', truncate(q, MAX_QUERY_CHARS)) });
  return q;
}

/** The q and async parameters of GET /api/council and GET /api/trace. */
function liveParameters(context: RouteContext, path: string, query: unknown, allowed: readonly string[] = ['q', 'async']): { question: string; wantsAsync: boolean; secondRound: boolean | undefined } {
  return parseOrSuggest(path, query as RawQuery, (raw) => {
    rejectUnknownParameters(raw, allowed, path);
    return { question: questionOf(raw, path, sampleQuestion(context.corpus)), wantsAsync: flag(raw, 'async') ?? false, secondRound: flag(raw, 'second_round') };
  });
}

/** A flag: 1|true, 0|false, or absent (undefined); anything else is rejected. */
export function flag(raw: RawQuery, name: string): boolean | undefined {
  const value = single(raw, name)?.toLowerCase();
  if (value === undefined) return undefined;
  if (value === '0' || value === 'false') return false;
  if (value === '1' || value === 'true') return true;
  throw apiError('INVALID_PARAMETER', `"${name}" must be 1 or true (or 0/false), got "${value}"`, `Send ${name}=1 or leave it out.`, { repair: without(name) });
}

function constantTimeEqual(a: string, b: string): boolean {
  // Hash first so the comparison does not leak the secret's length.
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

function assertIngestSecret(request: Request, context: RouteContext, question: string): void {
  // Every refusal here points at the same council without persist, which needs no secret.
  const withoutPersist: SuggestedCall = { method: 'POST', path: '/api/council', body: { q: question } };
  if (!context.ingestSecret) {
    throw apiError('PERSISTENCE_UNAVAILABLE', 'persisting council records is not enabled on this deployment (no INGEST_SECRET configured)', 'Run the council without persist; an operator can enable persistence by setting INGEST_SECRET.', { suggestedNextCall: withoutPersist });
  }
  const header = request.get('authorization') ?? '';
  const match = header.match(/^Bearer\s+(.+)$/i);
  if (!match) {
    throw apiError('AUTH_REQUIRED', 'persisting needs Authorization: Bearer <INGEST_SECRET>', 'Send the ingestion secret as a bearer token, or call without persist.', { headers: { 'WWW-Authenticate': 'Bearer realm="polyphony-ingest"' }, suggestedNextCall: withoutPersist });
  }
  if (!constantTimeEqual(match[1]!.trim(), context.ingestSecret)) {
    throw apiError('AUTH_INVALID', 'the bearer token is not the ingestion secret', 'Check the secret with the operator; the council can still be run without persist.', { suggestedNextCall: withoutPersist });
  }
}

const CouncilBodySchema = z.strictObject({
  q: z.string().trim().min(1).max(MAX_QUERY_CHARS).optional().describe('A new question for the panel (runs a council).'),
  question: z.string().trim().min(1).max(MAX_QUERY_CHARS).optional().describe('Alias of q.'),
  council_id: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/).optional().describe('The council_id of a council result already shown (kept 24 h): with persist true, stores exactly that result; no model is called.'),
  persist: z.boolean().optional().describe('Commit the council as a divergence record (needs Authorization: Bearer <INGEST_SECRET>).'),
  second_round: z.boolean().optional().describe("Run the second round: each voice reads the other answers, anonymised, and keeps or revises its position with a reason (round 1 stays verbatim; tensions say who moved). Absent: the panel's defaults.second_round (false unless configured). Each round-2 call is metered like any other."),
});

export const QueryBodySchema = z.strictObject({
  query: z.string().max(MAX_QUERY_CHARS).describe('The question.'),
  async: z.boolean().optional().describe('Submit as a background job (202 with job_id, poll_url).'),
  glyph: z.enum(GLYPHS).optional().describe('Retrieval and decoding mode operator.'),
  session_id: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/).optional().describe('Continues a session the server issued to you (session.session_id of an earlier response): a rolling buffer of 5 exchanges, 24 h after its last use. Ids the server did not issue to this client answer 404 SESSION_NOT_FOUND.'),
  new_session: z.boolean().optional().describe('Start a session: the response carries session.session_id (and the 202 form session_id) to send on later calls.'),
  syntheticIdentity: z.string().max(200).optional().describe("Caller's model identity for peer personalization."),
  second_round: z.boolean().optional().describe("Run the second round: each voice reads the other answers, anonymised, and keeps or revises its position with a reason (round 1 stays verbatim; tensions say who moved). Absent: the panel's defaults.second_round (false unless configured)."),
});

/** suggestion: the same POST mended (see core/examples.ts). */
export function invalidBody(error: z.ZodError, suggestion?: SuggestedCall) {
  const issues = error.issues.map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`);
  return apiError('INVALID_BODY', `the request body is invalid: ${issues.join('; ')}`, 'Fix the named fields; see /openapi.json for the body schema.', { details: { issues }, ...(suggestion ? { suggestedNextCall: suggestion } : {}) });
}

/**
 * Runs a sync live path: JSON once done, or Server-Sent Events (each stage, then the
 * result) when the caller accepts text/event-stream. The budget is checked before the
 * stream starts, so a refusal keeps its HTTP status.
 */
export async function answerNow(
  context: RouteContext,
  request: Request,
  response: Response,
  live: LiveService,
  run: (signal: AbortSignal, onStage?: (stage: JobStage) => void) => Promise<unknown>,
): Promise<void> {
  response.vary('Accept');
  // The client going away (a closed stream too) aborts this run's own calls, nobody else's.
  const signal = callerSignal(response);
  if (!wantsEventStream(request)) {
    response.json(await run(signal));
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
      throw apiError('JOB_NOT_FOUND', `no job has id "${query.job}"`, 'Submit the question again with async=1 and poll the job_id you receive.', { suggestedNextCall: { method: 'GET', path: '/api/query', query: { q: sampleQuestion(context.corpus), async: '1' } } });
    }
    response.json(jobState(job, await live.stages(job.id)));
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
    await answerNow(context, request, response, live, (signal, onStage) => live.deliberateNow({ query }, signal, onStage));
    return true;
  }
  if (query.mode === 'trace') {
    const live = requireLive(context, query.q);
    await limitLive(context, request, response, 'live');
    await answerNow(context, request, response, live, (signal, onStage) => live.traceNow(query, signal, onStage));
    return true;
  }
  return false;
}

export function liveRoutes(context: RouteContext): RouteDefinition[] {
  return [
    {
      path: '/api/council',
      methods: {
        GET: async (request, response) => {
          const { question, wantsAsync, secondRound } = liveParameters(context, '/api/council', request.query, ['q', 'async', 'second_round']);
          idempotencyKey(request);
          const live = requireLive(context, question);
          const input = { question, ...(secondRound !== undefined ? { second_round: secondRound } : {}) };
          if (wantsAsync) {
            await submitJob(context, request, response, { name: 'council', limit: 'council' }, 'council', input);
            return;
          }
          await limitLive(context, request, response, 'council');
          await answerNow(context, request, response, live, (signal, onStage) => live.councilNow(input, signal, onStage));
        },
        POST: async (request, response) => {
          const parsed = CouncilBodySchema.safeParse(request.body ?? {});
          // Mended without persist: a suggestion cannot carry the bearer secret.
          const { persist: _persist, council_id: _councilId, ...mended } = mendBody(CouncilBodySchema, request.body, { q: sampleQuestion(context.corpus) });
          if (!parsed.success) throw invalidBody(parsed.error, { method: 'POST', path: '/api/council', body: mended });
          const { council_id: councilId, persist } = parsed.data;
          const question = parsed.data.q ?? parsed.data.question;
          if (councilId !== undefined) {
            const keep: SuggestedCall = { method: 'POST', path: '/api/council', body: { council_id: councilId, persist: true } };
            if (question !== undefined) throw apiError('CONFLICTING_PARAMETERS', 'council_id names a council already run; q asks for a new one: send one of them', 'To keep a council you have read, send {"council_id": "...", "persist": true} alone.', { suggestedNextCall: keep });
            if (persist !== true) throw apiError('INVALID_BODY', 'council_id is only used with persist true', 'Send {"council_id": "...", "persist": true} with Authorization: Bearer <INGEST_SECRET>.', { suggestedNextCall: keep });
            assertIngestSecret(request, context, sampleQuestion(context.corpus));
            const outcome = await requireLive(context, undefined).persistKeptCouncil(councilId);
            response.status(outcome.created ? 201 : 200).setHeader('Location', outcome.persisted.href).json({ ...outcome.shown, persisted: outcome.persisted });
            return;
          }
          if (!question) throw apiError('PARAM_MISSING', 'the body needs q (or question), or council_id with persist', 'Send {"q": "<question>"} to run a council; to keep one you have read, send {"council_id": "...", "persist": true}.', { extra: { param_missing: true }, suggestedNextCall: { method: 'POST', path: '/api/council', body: mended } });
          if (persist) assertIngestSecret(request, context, question);
          const live = requireLive(context, question);
          await limitLive(context, request, response, 'council');
          const result = await live.councilNow({ question, ...(parsed.data.second_round !== undefined ? { second_round: parsed.data.second_round } : {}) }, callerSignal(response));
          if (!persist) {
            response.json(result);
            return;
          }
          // Run and persist in one call: the response shows exactly what was stored.
          if (result.council_id === null) {
            response.status(201).json({ ...result, persisted: await live.persistCouncil(result) });
            return;
          }
          const outcome = await live.persistKeptCouncil(result.council_id);
          response.status(201).setHeader('Location', outcome.persisted.href).json({ ...outcome.shown, persisted: outcome.persisted });
        },
      },
    },
    {
      path: '/api/trace',
      methods: {
        GET: async (request, response) => {
          const { question: q, wantsAsync } = liveParameters(context, '/api/trace', request.query);
          idempotencyKey(request);
          const query = parseQueryParameters({ q });
          const live = requireLive(context, q);
          if (wantsAsync) {
            await submitJob(context, request, response, { name: 'trace', limit: 'live' }, 'trace', { query });
            return;
          }
          await limitLive(context, request, response, 'live');
          await answerNow(context, request, response, live, (signal, onStage) => live.traceNow(query, signal, onStage));
        },
      },
    },
    {
      path: '/api/jobs/cancel',
      methods: {
        POST: async (request, response) => {
          const raw = request.query as RawQuery;
          rejectUnknownParameters(raw, ['job'], '/api/jobs/cancel');
          const fromQuery = single(raw, 'job');
          // Without a job to name, the next call that succeeds starts one (its 202 names its cancel_url).
          const submit: SuggestedCall = { method: 'GET', path: '/api/query', query: { q: sampleQuestion(context.corpus), async: '1' } };
          const poll = (id: string): SuggestedCall => ({ method: 'GET', path: '/api/query', query: { job: id } });
          const parsed = CancelJobRequestSchema.safeParse(request.body ?? {});
          if (!parsed.success) throw invalidBody(parsed.error, fromQuery ? poll(fromQuery) : submit);
          const fromBody = parsed.data.job;
          if (fromQuery !== undefined && fromBody !== undefined && fromQuery !== fromBody) {
            throw apiError('CONFLICTING_PARAMETERS', `the query names job "${fromQuery}" and the body job "${fromBody}"`, 'Name the job once: POST /api/jobs/cancel?job=<job_id>, or the body {"job": "<job_id>"}.', { suggestedNextCall: poll(fromQuery) });
          }
          const id = fromQuery ?? fromBody;
          if (id === undefined || id.trim() === '') {
            throw apiError('PARAM_MISSING', 'job is missing or empty', 'Send the job_id you received: POST /api/jobs/cancel?job=<job_id>.', { extra: { param_missing: true }, suggestedNextCall: submit });
          }
          const live = requireLive(context, undefined);
          const job = await live.cancel(id);
          if (!job) {
            throw apiError('JOB_NOT_FOUND', `no job has id "${id}"`, 'Check the job_id; nothing was cancelled.', { suggestedNextCall: submit });
          }
          if (job.status !== 'cancelled') {
            throw apiError('JOB_ALREADY_FINISHED', `job "${id}" already ended with status ${job.status}; there is nothing to cancel`, 'Poll the job for its result.', {
              suggestedNextCall: poll(id),
            });
          }
          response.json(jobState(job, await live.stages(job.id)));
        },
      },
    },
  ];
}
