/**
 * Paths that call live models: council, trace, and the deliberation forms of /api/query.
 * Without a configured panel they answer 503 and point at what works.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { CancelJobRequestSchema } from '../../schemas/api.ts';
import { GLYPHS } from '../../schemas/vocab.ts';
import { parseQueryParameters, rejectUnknownParameters, single, MAX_QUERY_CHARS, type FastQuery, type RawQuery } from '../core/query-params.ts';
import { apiError } from '../errors.ts';
import type { LiveService } from '../live/service.ts';
import type { JobRecord } from '../storage/store.ts';
import type { RouteContext, RouteDefinition } from './types.ts';
import { encodeParam } from '../core/url.ts';

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

export function accepted(response: Response, job: JobRecord): void {
  const pollUrl = `/api/query?job=${encodeParam(job.id)}`;
  response.status(202).setHeader('Location', pollUrl).json({
    job_id: job.id,
    poll_url: pollUrl,
    cancel_url: cancelPath(job.id),
    status: job.status,
    kind: job.kind,
    poll_after_seconds: POLL_INTERVAL_SECONDS,
    note: `Poll GET ${pollUrl} about every ${POLL_INTERVAL_SECONDS} s; a deliberation takes about 25 s. The full result is returned once status is done. POST ${cancelPath(job.id)} cancels it and aborts its model calls.`,
  });
}

export function jobState(job: JobRecord) {
  const base = { job_id: job.id, kind: job.kind, status: job.status, created_at: job.created_at, updated_at: job.updated_at, poll_url: `/api/query?job=${encodeParam(job.id)}` };
  if (job.status === 'done') return { ...base, ...(job.result as Record<string, unknown>) };
  if (job.status === 'failed' || job.status === 'cancelled') return { ...base, error: job.error };
  return { ...base, poll_after_seconds: POLL_INTERVAL_SECONDS };
}

function questionOf(raw: RawQuery, path: string): string {
  const q = single(raw, 'q');
  if (q === undefined || q.trim() === '') {
    throw apiError('PARAM_MISSING', 'q is missing or empty', `Resend with q set to your question, e.g. GET ${path}?q=...`, { extra: { param_missing: true }, suggestedNextCall: { method: 'GET', path, query: { q: '<your question>' } } });
  }
  if (q.length > MAX_QUERY_CHARS) throw apiError('QUERY_TOO_LONG', `q is ${q.length} characters; the limit is ${MAX_QUERY_CHARS}`, 'Shorten the question.');
  return q;
}

/** async=1|true submits a job, 0|false or absent runs now; anything else is rejected. */
function asyncRequested(raw: RawQuery): boolean {
  const value = single(raw, 'async')?.toLowerCase();
  if (value === undefined || value === '0' || value === 'false') return false;
  if (value === '1' || value === 'true') return true;
  throw apiError('INVALID_PARAMETER', `"async" must be 1 or true (or 0/false), got "${value}"`, 'Send async=1 or leave it out.');
}

function constantTimeEqual(a: string, b: string): boolean {
  // Hash first so the comparison does not leak the secret's length.
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

function assertIngestSecret(request: Request, context: RouteContext): void {
  if (!context.ingestSecret) {
    throw apiError('PERSISTENCE_UNAVAILABLE', 'persisting council records is not enabled on this deployment (no INGEST_SECRET configured)', 'Run the council without persist; an operator can enable persistence by setting INGEST_SECRET.');
  }
  const header = request.get('authorization') ?? '';
  const match = header.match(/^Bearer\s+(.+)$/i);
  if (!match) {
    throw apiError('AUTH_REQUIRED', 'persisting needs Authorization: Bearer <INGEST_SECRET>', 'Send the ingestion secret as a bearer token, or call without persist.', { headers: { 'WWW-Authenticate': 'Bearer realm="polyphony-ingest"' } });
  }
  if (!constantTimeEqual(match[1]!.trim(), context.ingestSecret)) {
    throw apiError('AUTH_INVALID', 'the bearer token is not the ingestion secret', 'Check the secret with the operator; the council can still be run without persist.');
  }
}

const CouncilBodySchema = z.strictObject({
  q: z.string().trim().min(1).max(MAX_QUERY_CHARS).optional(),
  question: z.string().trim().min(1).max(MAX_QUERY_CHARS).optional(),
  persist: z.boolean().optional(),
});

export const QueryBodySchema = z.strictObject({
  query: z.string().max(MAX_QUERY_CHARS).describe('The question.'),
  async: z.boolean().optional().describe('Submit as a background job (202 with job_id, poll_url).'),
  glyph: z.enum(GLYPHS).optional().describe('Retrieval and decoding mode operator.'),
  session_id: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/).optional().describe('Threads prior exchanges: a rolling buffer of 5 exchanges with a 24 h TTL.'),
  syntheticIdentity: z.string().max(200).optional().describe("Caller's model identity for peer personalization."),
});

export function invalidBody(error: z.ZodError) {
  const issues = error.issues.map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`);
  return apiError('INVALID_BODY', `the request body is invalid: ${issues.join('; ')}`, 'Fix the named fields; see /openapi.json for the body schema.', { details: { issues } });
}

/** The deliberation forms of GET /api/query: async, sync, job and mode=trace. */
export async function handleLiveQuery(context: RouteContext, query: FastQuery, request: Request, response: Response): Promise<boolean> {
  if (query.job !== undefined) {
    const live = requireLive(context, undefined);
    const job = await live.poll(query.job);
    if (!job) {
      throw apiError('JOB_NOT_FOUND', `no job has id "${query.job}"`, 'Submit the question again with async=1 and poll the job_id you receive.', { suggestedNextCall: { method: 'GET', path: '/api/query', query: { q: '<your question>', async: '1' } } });
    }
    response.json(jobState(job));
    return true;
  }
  if (query.async) {
    const live = requireLive(context, query.q);
    await limitLive(context, request, response, 'live');
    accepted(response, await live.submit('deliberation', { query }));
    return true;
  }
  if (query.sync) {
    const live = requireLive(context, query.q);
    await limitLive(context, request, response, 'live');
    response.json(await live.deliberateNow({ query }, callerSignal(response)));
    return true;
  }
  if (query.mode === 'trace') {
    const live = requireLive(context, query.q);
    await limitLive(context, request, response, 'live');
    response.json(await live.traceNow(query, callerSignal(response)));
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
          const raw = request.query as RawQuery;
          rejectUnknownParameters(raw, ['q', 'async'], '/api/council');
          const question = questionOf(raw, '/api/council');
          const wantsAsync = asyncRequested(raw);
          const live = requireLive(context, question);
          await limitLive(context, request, response, 'council');
          if (wantsAsync) {
            accepted(response, await live.submit('council', { question }));
            return;
          }
          response.json(await live.councilNow(question, callerSignal(response)));
        },
        POST: async (request, response) => {
          const parsed = CouncilBodySchema.safeParse(request.body ?? {});
          if (!parsed.success) throw invalidBody(parsed.error);
          const question = parsed.data.q ?? parsed.data.question;
          if (!question) throw apiError('PARAM_MISSING', 'the body needs q (or question)', 'Send {"q": "<question>", "persist": true}.', { extra: { param_missing: true } });
          if (parsed.data.persist) assertIngestSecret(request, context);
          const live = requireLive(context, question);
          await limitLive(context, request, response, 'council');
          const result = await live.councilNow(question, callerSignal(response));
          if (!parsed.data.persist) {
            response.json(result);
            return;
          }
          const persisted = await live.persistCouncil(result);
          response.status(201).setHeader('Location', persisted.href).json({ ...result, persisted });
        },
      },
    },
    {
      path: '/api/trace',
      methods: {
        GET: async (request, response) => {
          const raw = request.query as RawQuery;
          rejectUnknownParameters(raw, ['q', 'async'], '/api/trace');
          const q = questionOf(raw, '/api/trace');
          const wantsAsync = asyncRequested(raw);
          const query = parseQueryParameters({ q });
          const live = requireLive(context, q);
          await limitLive(context, request, response, 'live');
          if (wantsAsync) {
            accepted(response, await live.submit('trace', { query }));
            return;
          }
          response.json(await live.traceNow(query, callerSignal(response)));
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
          const parsed = CancelJobRequestSchema.safeParse(request.body ?? {});
          if (!parsed.success) throw invalidBody(parsed.error);
          const fromBody = parsed.data.job;
          if (fromQuery !== undefined && fromBody !== undefined && fromQuery !== fromBody) {
            throw apiError('CONFLICTING_PARAMETERS', `the query names job "${fromQuery}" and the body job "${fromBody}"`, 'Name the job once: POST /api/jobs/cancel?job=<job_id>, or the body {"job": "<job_id>"}.');
          }
          const id = fromQuery ?? fromBody;
          if (id === undefined || id.trim() === '') {
            throw apiError('PARAM_MISSING', 'job is missing or empty', 'Send the job_id you received: POST /api/jobs/cancel?job=<job_id>.', { extra: { param_missing: true } });
          }
          const live = requireLive(context, undefined);
          const job = await live.cancel(id);
          if (!job) {
            throw apiError('JOB_NOT_FOUND', `no job has id "${id}"`, 'Check the job_id; nothing was cancelled.', { suggestedNextCall: { method: 'GET', path: '/api/query', query: { q: '<your question>', async: '1' } } });
          }
          if (job.status !== 'cancelled') {
            throw apiError('JOB_ALREADY_FINISHED', `job "${id}" already ended with status ${job.status}; there is nothing to cancel`, 'Poll the job for its result.', {
              suggestedNextCall: { method: 'GET', path: '/api/query', query: { job: id } },
            });
          }
          response.json(jobState(job));
        },
      },
    },
  ];
}
