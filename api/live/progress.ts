/**
 * Stages of a job, stored on it as they happen (in order, one write at a time), so that
 * GET /api/query?job=<id> shows progress. A failed write is logged and never fails the run.
 */
import type { Stage } from '../../core/live/stages.ts';
import type { JobsStore, JobStage } from '../../storage/jobs.ts';

export interface StageRecorder {
  onStage(stage: Stage): void;
  /** Resolves once every stage told so far is stored (or its failure logged). */
  flushed(): Promise<void>;
}

export function createStageRecorder(
  store: Pick<JobsStore, 'addJobStage'>,
  job: { id: string; attempt: number },
  now: () => Date,
  log: (line: string) => void,
): StageRecorder {
  let chain = Promise.resolve();
  return {
    onStage(stage) {
      const entry: JobStage = { ...stage, at: now().toISOString(), attempt: job.attempt };
      chain = chain.then(() => store.addJobStage(job.id, entry)).catch((error: unknown) => log(`job ${job.id}: stage not stored: ${(error as Error).message}`));
    },
    flushed: () => chain,
  };
}

/** A stage as streamed to a caller: the same fields as stored, with the time it happened. */
export function stampStage(stage: Stage, now: () => Date): JobStage {
  return { ...stage, at: now().toISOString() };
}
