/**
 * Server-Sent Events for the sync live paths: a caller that sends Accept: text/event-stream
 * gets each stage as it happens (`event: stage`), then `event: result` with the full
 * response, or `event: error` with the error envelope. Checks that fail before the run
 * starts (bad input, no panel, rate limit, budget) still answer with their HTTP status.
 * A closed connection aborts the run's own model calls (the caller's signal, see
 * answerNow in api/routes/live.ts: nobody will read the answer, issue 14 item 5) and stops
 * the writing; what was already spent is recorded, and nobody else's work is aborted.
 */
import type { Request, Response } from 'express';
import type { JobStage } from '../../storage/store.ts';
import { toApiError } from './middleware.ts';

/** Comment lines keep proxies from closing a quiet stream while the panel thinks. */
export const HEARTBEAT_MS = 15_000;

export function wantsEventStream(request: Request): boolean {
  return /(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(request.get('accept') ?? '');
}

export async function streamRun(response: Response, log: (line: string) => void, run: (onStage: (stage: JobStage) => void) => Promise<unknown>): Promise<void> {
  response.status(200);
  response.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  // no-transform: compression and proxies must pass each event on as it is written.
  response.setHeader('Cache-Control', 'no-cache, no-transform');
  response.setHeader('X-Accel-Buffering', 'no');
  response.flushHeaders();
  const send = (event: string, data: unknown) => {
    if (response.writableEnded || response.destroyed) return;
    response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  const heartbeat = setInterval(() => {
    if (!response.writableEnded && !response.destroyed) response.write(': still working\n\n');
  }, HEARTBEAT_MS);
  heartbeat.unref();
  try {
    send('result', await run((stage) => send('stage', stage)));
  } catch (error) {
    const apiError = toApiError(error, log);
    send('error', { status: apiError.status, ...apiError.toBody() });
  } finally {
    clearInterval(heartbeat);
    if (!response.writableEnded && !response.destroyed) response.end();
  }
}
