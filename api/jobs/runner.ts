/**
 * Background jobs: stored before they are acknowledged, run in-process with bounded
 * concurrency, and resumed at start-up. A job interrupted by a crash is re-run once; a job
 * interrupted twice ends as failed with the reason. No job stays "running" forever.
 * A job can be cancelled while queued or running: its handler's signal aborts, which aborts
 * its model calls; a job cancelled through another process is seen at the next sweep.
 */
import type { JobKind, JobRecord, Store } from '../../storage/store.ts';

export const MAX_ATTEMPTS = 2;

/** `job` names the run, e.g. to record its progress stages on it; its `signal` aborts when the job is cancelled. */
export type JobHandler = (input: unknown, job: { id: string; attempt: number; signal: AbortSignal }) => Promise<unknown>;

export interface JobFailure {
  code: string;
  message: string;
}

export interface JobRunnerOptions {
  store: Store;
  handlers: Record<JobKind, JobHandler>;
  concurrency: number;
  now: () => Date;
  newId: () => string;
  log: (line: string) => void;
  /** Turns a thrown error into the failure stored on the job (no stack traces). */
  describeFailure: (error: unknown) => JobFailure;
  /**
   * A running job whose last update is older than this is taken as abandoned (its process
   * died) and re-queued. With one process per store 0 is right: at start nothing else runs.
   */
  leaseMs?: number;
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
  /** Resolves when no job is running or queued in this process. */
  idle(): Promise<void>;
  inFlight(): number;
}

function cancelledReason(): Error {
  return Object.assign(new Error('the job was cancelled by its caller'), { name: 'JobCancelled' });
}

export function createJobRunner(options: JobRunnerOptions): JobRunner {
  const queue: string[] = [];
  const mine = new Set<string>();
  /** The jobs running in this process, by id: aborting one aborts its model calls. */
  const controllers = new Map<string, AbortController>();
  let running = 0;
  let idleWaiters: (() => void)[] = [];

  const pump = () => {
    while (running < options.concurrency && queue.length > 0) {
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

  async function execute(id: string): Promise<void> {
    try {
      if (!(await options.store.claimJob(id, options.now()))) return;
      const job = await options.store.getJob(id);
      if (!job) return;
      const controller = new AbortController();
      controllers.set(id, controller);
      try {
        const result = await options.handlers[job.kind](job.input, { id, attempt: job.attempts, signal: controller.signal });
        // A job cancelled meanwhile stays cancelled (finishJob only ends running jobs).
        await options.store.finishJob(id, { result }, options.now());
      } catch (error) {
        await options.store.finishJob(id, { error: options.describeFailure(error) }, options.now());
      } finally {
        controllers.delete(id);
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
      let resumed = 0;
      let failed = 0;
      for (const [id, controller] of controllers) {
        if ((await options.store.getJob(id))?.status === 'cancelled') controller.abort(cancelledReason());
      }
      const lease = options.leaseMs ?? 0;
      for (const job of await options.store.unfinishedJobs()) {
        if (mine.has(job.id)) continue;
        if (job.status === 'running' && options.now().getTime() - Date.parse(job.updated_at) < lease) continue;
        if (job.status === 'running' && job.attempts >= MAX_ATTEMPTS) {
          await options.store.finishJob(job.id, { error: { code: 'JOB_INTERRUPTED', message: `the server stopped while this job was running, ${job.attempts} times; it was not retried again` } }, options.now());
          failed++;
          continue;
        }
        if (job.status === 'running') await options.store.requeueJob(job.id, options.now());
        mine.add(job.id);
        queue.push(job.id);
        resumed++;
      }
      pump();
      return { resumed, failed };
    },
    idle() {
      if (running === 0 && queue.length === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    inFlight: () => running + queue.length,
  };
}
