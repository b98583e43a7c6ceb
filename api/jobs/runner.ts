/**
 * Background jobs: stored before they are acknowledged, run in-process with bounded
 * concurrency, and resumed at start-up. A job interrupted by a crash is re-run once; a job
 * interrupted twice ends as failed with the reason. No job stays "running" forever.
 * A job can be cancelled while queued or running: its handler's signal aborts, which aborts
 * its model calls; a job cancelled through another process is seen at the next sweep.
 * With several processes sharing a store, a running job holds a lease that its process's
 * heartbeat renews while it runs: another process takes it over only once the lease has
 * lapsed, i.e. once the process running it has died (or lost the store for a whole lease).
 */
import type { JobKind, JobRecord, JobsStore } from '../../storage/jobs.ts';

export const MAX_ATTEMPTS = 2;

/** `job` names the run, e.g. to record its progress stages on it; its `signal` aborts when the job is cancelled. */
export type JobHandler = (input: unknown, job: { id: string; attempt: number; signal: AbortSignal }) => Promise<unknown>;

export interface JobFailure {
  code: string;
  message: string;
  /** Whether submitting again can succeed (absent: it may); false for a ceiling refusal. */
  retryable?: boolean;
  agent_action?: string;
}

export interface JobRunnerOptions {
  store: JobsStore;
  handlers: Record<JobKind, JobHandler>;
  concurrency: number;
  now: () => Date;
  newId: () => string;
  log: (line: string) => void;
  /** Turns a thrown error into the failure stored on the job (no stack traces). */
  describeFailure: (error: unknown) => JobFailure;
  /**
   * How long a claim or a heartbeat holds a running job: a running job whose lease has lapsed
   * is taken as abandoned (its process died) and re-queued. With one process per store 0 is
   * right (no heartbeat): at start nothing else runs.
   */
  leaseMs?: number;
  /** How often a running job's lease is renewed; a third of leaseMs when omitted. */
  heartbeatMs?: number;
}

export interface JobRunner {
  submit(kind: JobKind, input: unknown): Promise<JobRecord>;
  get(id: string): Promise<JobRecord | undefined>;
  /** Cancels a queued or running job (aborting its calls here); the job afterwards, undefined when unknown. */
  cancel(id: string): Promise<JobRecord | undefined>;
  /**
   * Picks up unfinished jobs from the store: queued ones (submitted to any process sharing
   * the store) and running ones past their lease (their process died). Call at start and
   * periodically when several processes share a store. Also aborts the jobs running here
   * that another process cancelled.
   */
  resume(): Promise<{ resumed: number; failed: number }>;
  /**
   * Renews the lease of every job running here (the heartbeat calls it every heartbeatMs);
   * a job found no longer ours (re-queued and claimed elsewhere) is aborted and not finished here.
   */
  heartbeat(): Promise<void>;
  /** Resolves when no job is running or queued in this process. */
  idle(): Promise<void>;
  /**
   * For a SIGTERM: starts no job any more (queued ones stay queued in the store, for the other
   * processes' sweep), gives running ones up to `graceMs` to finish, then hands the rest back:
   * their lease is released (expired now) so another process sharing the store takes them at
   * its next sweep, and this process aborts them and writes nothing more about them.
   */
  drain(graceMs: number): Promise<{ finished: number; handedBack: number }>;
  inFlight(): number;
}

function cancelledReason(): Error {
  return Object.assign(new Error('the job was cancelled by its caller'), { name: 'JobCancelled' });
}

/** The abort reason of a job handed back at a drain. */
export function handedBackReason(): Error {
  return Object.assign(new Error('the job was handed back to the other processes: this one is shutting down'), { name: 'JobHandedBack' });
}

function leaseLostReason(): Error {
  return Object.assign(new Error('the job was taken over by another process after its lease lapsed'), { name: 'JobLeaseLost' });
}

/** Until when a running job is held: its lease, or for a job claimed by older code its last update plus this process's lease. */
function heldUntil(job: JobRecord, leaseMs: number): number {
  return job.lease_expires_at ? Date.parse(job.lease_expires_at) : Date.parse(job.updated_at) + leaseMs;
}

/**
 * One heartbeat of a job running here: its lease renewed, or found cancelled (through another
 * process), or lost (re-queued, and maybe claimed again, by another process after the lease
 * lapsed: then it is no longer ours to run or finish); undefined when the job is gone.
 */
async function renewLease(options: JobRunnerOptions, id: string, attempt: number, leaseMs: number): Promise<'renewed' | 'cancelled' | 'lost' | undefined> {
  if (await options.store.renewJobLease(id, attempt, options.now(), leaseMs)) return 'renewed';
  const job = await options.store.getJob(id);
  if (!job) return undefined;
  if (job.status === 'cancelled') return 'cancelled';
  if (job.status === 'queued' || (job.status === 'running' && job.attempts !== attempt)) return 'lost';
  return undefined;
}

/**
 * The sweep of unfinished jobs in the store: each queued job, or running one whose lease lapsed,
 * is taken (`take`) to run here, re-queued first if it was running; one that was interrupted
 * MAX_ATTEMPTS times fails instead. Jobs already this process's are left alone.
 */
async function sweepUnfinished(
  options: JobRunnerOptions,
  leaseMs: number,
  mine: ReadonlySet<string>,
  take: (id: string) => void,
): Promise<{ resumed: number; failed: number }> {
  let resumed = 0;
  let failed = 0;
  for (const job of await options.store.unfinishedJobs()) {
    if (mine.has(job.id)) continue;
    // A running job whose process still renews its lease is that process's.
    if (job.status === 'running' && options.now().getTime() < heldUntil(job, leaseMs)) continue;
    if (job.status === 'running' && job.attempts >= MAX_ATTEMPTS) {
      await options.store.finishJob(
        job.id,
        { error: { code: 'JOB_INTERRUPTED', message: `the server stopped while this job was running, ${job.attempts} times; it was not retried again` } },
        options.now(),
      );
      failed++;
      continue;
    }
    if (job.status === 'running') await options.store.requeueJob(job.id, options.now());
    take(job.id);
    resumed++;
  }
  return { resumed, failed };
}

/** Releases a job's lease at a drain, so any process's sweep runs it again; a store error is logged. */
async function handBack(options: JobRunnerOptions, id: string, attempt: number): Promise<void> {
  try {
    // Conditional on still running as this claim: a job that just finished is not re-run.
    await options.store.renewJobLease(id, attempt, options.now(), 0);
  } catch (error) {
    options.log(`job ${id}: hand back: ${(error as Error).message}`);
  }
}

/** Waits for `settled`, or `ms` at most. */
async function atMost(ms: number, settled: Promise<void>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([settled, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

export function createJobRunner(options: JobRunnerOptions): JobRunner {
  const queue: string[] = [];
  const mine = new Set<string>();
  /** The jobs running in this process, by id: aborting one aborts its model calls. */
  const controllers = new Map<string, AbortController>();
  /** The attempt (claim) each job running here holds, for its heartbeat. */
  const attempts = new Map<string, number>();
  /** Jobs running here whose lease another process took over: they must not be finished here. */
  const lost = new Set<string>();
  const leaseMs = options.leaseMs ?? 0;
  const heartbeatMs = options.heartbeatMs ?? Math.max(1, Math.floor(leaseMs / 3));
  let beating: ReturnType<typeof setInterval> | undefined;
  let running = 0;
  let idleWaiters: (() => void)[] = [];
  let draining = false;

  const pump = () => {
    while (!draining && running < options.concurrency && queue.length > 0) {
      const id = queue.shift()!;
      running++;
      void execute(id).finally(() => {
        mine.delete(id);
        running--;
        pump();
        if (running === 0 && queue.length === 0) {
          for (const resolve of idleWaiters) resolve();
          idleWaiters = [];
        }
      });
    }
  };

  async function heartbeat(): Promise<void> {
    await Promise.all(
      // A job handed back at a drain keeps its released lease.
      [...attempts]
        .filter(([id]) => !lost.has(id))
        .map(async ([id, attempt]) => {
          try {
            const lease = await renewLease(options, id, attempt, leaseMs);
            if (!attempts.has(id)) return;
            if (lease === 'cancelled') {
              controllers.get(id)?.abort(cancelledReason());
            } else if (lease === 'lost') {
              lost.add(id);
              controllers.get(id)?.abort(leaseLostReason());
            }
          } catch (error) {
            options.log(`job ${id}: heartbeat: ${(error as Error).message}`);
          }
        }),
    );
  }

  const startHeartbeat = () => {
    if (leaseMs <= 0 || beating) return;
    beating = setInterval(() => void heartbeat(), heartbeatMs);
    beating.unref?.();
  };
  const stopHeartbeat = () => {
    if (attempts.size > 0 || !beating) return;
    clearInterval(beating);
    beating = undefined;
  };

  async function finish(id: string, outcome: Parameters<JobsStore['finishJob']>[1]): Promise<void> {
    // A job taken over by another process is that process's to finish.
    if (!lost.has(id)) await options.store.finishJob(id, outcome, options.now());
  }

  async function execute(id: string): Promise<void> {
    try {
      if (!(await options.store.claimJob(id, options.now(), leaseMs))) return;
      const job = await options.store.getJob(id);
      if (!job) return;
      const controller = new AbortController();
      controllers.set(id, controller);
      attempts.set(id, job.attempts);
      startHeartbeat();
      try {
        const result = await options.handlers[job.kind](job.input, { id, attempt: job.attempts, signal: controller.signal });
        // A job cancelled meanwhile stays cancelled (finishJob only ends running jobs).
        await finish(id, { result });
      } catch (error) {
        await finish(id, { error: options.describeFailure(error) });
      } finally {
        controllers.delete(id);
        attempts.delete(id);
        lost.delete(id);
        stopHeartbeat();
      }
    } catch (error) {
      options.log(`job ${id}: store error: ${(error as Error).message}`);
    }
  }

  return {
    async submit(kind, input) {
      const job = await options.store.createJob({ id: options.newId(), kind, input }, options.now());
      mine.add(job.id);
      queue.push(job.id);
      pump();
      return job;
    },
    get: (id) => options.store.getJob(id),
    async cancel(id) {
      const job = await options.store.cancelJob(id, options.now());
      if (job?.status === 'cancelled') controllers.get(id)?.abort(cancelledReason());
      return job;
    },
    async resume() {
      for (const [id, controller] of controllers) {
        if ((await options.store.getJob(id))?.status === 'cancelled') controller.abort(cancelledReason());
      }
      const swept = await sweepUnfinished(options, leaseMs, mine, (id) => {
        mine.add(id);
        queue.push(id);
      });
      pump();
      return swept;
    },
    heartbeat,
    idle() {
      if (running === 0 && queue.length === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    inFlight: () => running + queue.length,
    async drain(graceMs) {
      draining = true;
      // Not started here: left queued in the store, where any process's sweep finds them.
      for (const id of queue.splice(0)) mine.delete(id);
      const before = attempts.size;
      if (running > 0) await atMost(graceMs, new Promise<void>((resolve) => idleWaiters.push(resolve)));
      const left = [...attempts];
      for (const [id, attempt] of left) {
        lost.add(id);
        await handBack(options, id, attempt);
        controllers.get(id)?.abort(handedBackReason());
      }
      return { finished: before - left.length, handedBack: left.length };
    },
  };
}
