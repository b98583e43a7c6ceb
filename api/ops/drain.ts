/**
 * Drain on SIGTERM: the process stops being ready (the load balancer stops sending), stops
 * accepting connections, lets the requests in flight finish (each answered with
 * `Connection: close`) and its running jobs finish, both for up to the grace period; then
 * closes what is left, hands unfinished jobs back to the other processes (their lease
 * released), closes the store and exits 0. Nothing acknowledged is lost: a job is in the
 * store before its 202, and a handed-back job is run again elsewhere from its stored input.
 */
import type http from 'node:http';
import type { ServerResponse } from 'node:http';
import type { JobRunner } from '../jobs/runner.ts';
import type { Readiness } from './readiness.ts';

export interface DrainOptions {
  server: http.Server;
  graceMs: number;
  readiness?: Readiness;
  runner?: Pick<JobRunner, 'drain'>;
  /** Closed last (the store). */
  close: () => Promise<void>;
  log: (line: string) => void;
}

export interface Drain {
  /** Runs once; later calls get the same promise. Resolves when everything is closed. */
  drain(): Promise<void>;
  /** Requests being answered now. */
  inFlight(): number;
}

/** Tracks the server's requests from now on; call before it listens. */
export function createDrain(options: DrainOptions): Drain {
  const active = new Set<ServerResponse>();
  let draining: Promise<void> | undefined;
  let emptied: (() => void) | undefined;

  options.server.on('request', (_request: http.IncomingMessage, response: ServerResponse) => {
    active.add(response);
    // A connection kept alive would carry the client's next request to a process about to go.
    if (draining) response.shouldKeepAlive = false;
    response.once('close', () => {
      active.delete(response);
      if (active.size === 0) emptied?.();
    });
  });

  async function run(): Promise<void> {
    const started = Date.now();
    options.readiness?.drain();
    options.log(`draining: ${active.size} request(s) in flight, up to ${options.graceMs} ms to finish`);
    const closed = new Promise<void>((resolve) => options.server.close(() => resolve()));
    for (const response of active) if (!response.headersSent) response.shouldKeepAlive = false;
    options.server.closeIdleConnections();
    const requestsDone = active.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => (emptied = resolve));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const grace = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), options.graceMs)));
    const [requests, jobs] = await Promise.all([Promise.race([requestsDone.then(() => 'done' as const), grace]), options.runner?.drain(options.graceMs)]);
    clearTimeout(timer);
    if (requests === 'late') {
      options.log(`drain: ${active.size} request(s) still running after ${options.graceMs} ms; closing their connections`);
      options.server.closeAllConnections();
    }
    if (jobs && jobs.handedBack > 0) options.log(`drain: ${jobs.handedBack} running job(s) handed back to the other processes`);
    await closed;
    await options.close();
    options.log(`drained in ${Date.now() - started} ms`);
  }

  return {
    drain() {
      draining ??= run();
      return draining;
    },
    inFlight: () => active.size,
  };
}
