/**
 * The shared shape of the three live tools (deliberate, trace, council): submit the
 * question as a background job (the spec's advice: full deliberation can outlast a
 * client's timeout), optionally wait a bounded time, and poll by job_id on later calls.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { MAX_QUERY_CHARS } from '../../core/query-params.ts';
import { errorFromResponse, errorResult, fromResponse, isObject, successResult, type JsonObject } from './results.ts';
import { summarizeJobResult } from './summaries.ts';
import type { AppRequest, ToolDeps } from './types.ts';
import type { JobProgress } from './progress.ts';

/** Above this, MCP clients' default request timeouts (often 60 s) start to bite. */
export const MAX_WAIT_SECONDS = 50;
export const POLL_EVERY_MS = 1000;

export const liveJobShape = {
  q: z.string().max(MAX_QUERY_CHARS).optional().describe('The question to submit. Give q to start a new job, or job_id to check on one; not both.'),
  job_id: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('A job_id returned by an earlier call of this tool; returns its state, and the full result once status is done.'),
  wait_seconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_WAIT_SECONDS)
    .optional()
    .describe(
      `Seconds to wait for the job to finish before returning (0 to ${MAX_WAIT_SECONDS}, default 0: return the job_id at once). A deliberation takes about 25 s.`,
    ),
};

/** second_round of the tools whose HTTP routes take it (deliberate, council): the same switch as the HTTP field. */
export const secondRoundInput = z
  .boolean()
  .optional()
  .describe(
    "Run the second round: each voice reads the other answers, anonymised and only as data, and keeps or revises its position with a reason (panel[].round2, tensions[].moved). Absent: the panel's defaults.second_round. Each round-2 call is metered. Same as second_round on the HTTP route (with q only).",
  );

export interface LiveJobInput {
  q?: string | undefined;
  job_id?: string | undefined;
  wait_seconds?: number | undefined;
}

/** A poll (job_id) carrying options that only apply when submitting: refused, naming them, rather than silently ignored. */
export function submitOnlyConflict(tool: string, input: Record<string, unknown>, names: readonly string[]): CallToolResult | undefined {
  const given = names.filter((name) => input[name] !== undefined);
  if (typeof input.job_id !== 'string' || given.length === 0) return undefined;
  return errorResult({
    status: 400,
    code: 'CONFLICTING_PARAMETERS',
    message: `${given.join(', ')} only apply when submitting with q, not when polling a job_id`,
    agent_action: 'Poll with {"job_id": "..."} alone.',
    retryable: false,
    suggested_next_call: null,
    suggested_tool: { name: tool, arguments: { job_id: input.job_id } },
  });
}

export function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

export async function runLiveJob(
  deps: ToolDeps,
  tool: string,
  input: LiveJobInput,
  submit: (question: string) => AppRequest,
  signal: AbortSignal | undefined,
  /** Reports the job's stages as they appear (MCP progress notifications). */
  progress?: JobProgress,
): Promise<CallToolResult> {
  const hasQuestion = input.q !== undefined;
  if (hasQuestion === (input.job_id !== undefined)) {
    return errorResult({
      status: 400,
      code: hasQuestion ? 'CONFLICTING_PARAMETERS' : 'PARAM_MISSING',
      message: hasQuestion ? 'q and job_id cannot be combined' : 'give q (a new question) or job_id (a job to check on)',
      agent_action: `Call ${tool} with {"q": "<your question>"} to submit, then with {"job_id": "<job_id>"} to poll.`,
      retryable: false,
      suggested_next_call: null,
      suggested_tool: null,
    });
  }

  let jobId = input.job_id;
  let sessionId: string | undefined;
  if (jobId === undefined) {
    const submitted = await deps.call(submit(input.q!), signal);
    if (submitted.status !== 202) return fromResponse(submitted, summarizeJobResult);
    if (!isObject(submitted.body) || typeof submitted.body.job_id !== 'string') return errorFromResponse({ ...submitted, status: 502 });
    jobId = submitted.body.job_id;
    // A session started with the job is named at once, before the job is done.
    if (typeof submitted.body.session_id === 'string') sessionId = submitted.body.session_id;
  }

  const sleep = deps.sleep ?? defaultSleep;
  const deadline = Date.now() + (input.wait_seconds ?? 0) * 1000;
  for (;;) {
    const polled = await deps.call({ method: 'GET', path: '/api/query', query: { job: jobId } }, signal);
    if (polled.status !== 200 || !isObject(polled.body)) return fromResponse(polled, summarizeJobResult);
    const job = polled.body;
    await progress?.(job);
    if (job.status === 'done') return successResult(summarizeJobResult(job), job);
    if (job.status === 'failed' || job.status === 'cancelled') return failedJob(tool, job);
    if (Date.now() >= deadline || signal?.aborted) return pendingJob(tool, sessionId ? { ...job, session_id: sessionId } : job);
    await sleep(Math.min(POLL_EVERY_MS, Math.max(0, deadline - Date.now())), signal);
  }
}

function pendingJob(tool: string, job: JsonObject): CallToolResult {
  const next = { tool, arguments: { job_id: job.job_id, wait_seconds: 20 } };
  return successResult(
    `Job ${String(job.job_id)} (${String(job.kind)}) is ${String(job.status)}.${typeof job.session_id === 'string' ? ` Session ${job.session_id} started: pass it as session_id on later calls.` : ''} Call ${tool} again with ${JSON.stringify(next.arguments)} to wait for the result (a deliberation takes about 25 s; poll about every 3 s without wait_seconds).`,
    { ...job, next_call: next },
  );
}

function failedJob(tool: string, job: JsonObject): CallToolResult {
  const error = isObject(job.error) ? job.error : {};
  return errorResult(
    {
      status: 200,
      code: typeof error.code === 'string' ? error.code : 'JOB_FAILED',
      message: `job ${String(job.job_id)} ${job.status === 'cancelled' ? 'was cancelled' : 'failed'}: ${typeof error.message === 'string' ? error.message : 'no reason recorded'}`,
      // The job's own word when it has one: a ceiling refusal is not mended by submitting again.
      agent_action:
        typeof error.agent_action === 'string'
          ? error.agent_action
          : `Submit the question again with ${tool} {"q": ...}, or use fast_context for retrieval without a model call.`,
      retryable: typeof error.retryable === 'boolean' ? error.retryable : true,
      suggested_next_call: null,
      suggested_tool: null,
    },
    { job },
  );
}
