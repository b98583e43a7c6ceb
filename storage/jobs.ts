/** Background jobs and their progress stages (api/jobs/runner.ts, api/live/progress.ts). */

export type JobKind = 'deliberation' | 'trace' | 'council';
export type JobStatus = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';

export interface JobRecord {
  id: string;
  kind: JobKind;
  status: JobStatus;
  input: unknown;
  result: unknown | null;
  error: JobError | null;
  attempts: number;
  created_at: string;
  updated_at: string;
  /**
   * Until when the process running the job holds it (ISO time): set by the claim and pushed
   * on by that process's heartbeat; null for a job never claimed (or claimed by older code).
   */
  lease_expires_at: string | null;
}

/**
 * One step of a live job as it happens (retrieval, each voice, the chair), for progress: the
 * shape the API documents (JobState.stages), as api/live/progress.ts stamps and stores it.
 */
import type { JobStage } from '../schemas/api/live.ts';
export type { JobStage };

/** A failed or cancelled job's error; `retryable` and `agent_action` when the failure says (a ceiling refusal is not retryable). */
export interface JobError {
  code: string;
  message: string;
  retryable?: boolean;
  agent_action?: string;
}

/** The error stored on a job cancelled by its caller. */
export const CANCELLED = { code: 'JOB_CANCELLED', message: 'the job was cancelled by its caller; its model calls were aborted' };

export interface JobsStore {
  createJob(job: Pick<JobRecord, 'id' | 'kind' | 'input'>, now: Date): Promise<JobRecord>;
  getJob(id: string): Promise<JobRecord | undefined>;
  /**
   * Moves a job to running if it is queued (or re-queued), holding it until now + leaseMs
   * (0 when omitted); false when another worker has it.
   */
  claimJob(id: string, now: Date, leaseMs?: number): Promise<boolean>;
  /**
   * The heartbeat of a running job: holds it until now + leaseMs, if it is still running as
   * the given attempt (the claim that started it). False when it is not: finished, cancelled,
   * or re-queued and claimed again after its lease lapsed.
   */
  renewJobLease(id: string, attempt: number, now: Date, leaseMs: number): Promise<boolean>;
  /** Ends a running job; a job cancelled meanwhile stays cancelled. */
  finishJob(id: string, outcome: { result: unknown } | { error: JobError }, now: Date): Promise<void>;
  /** Cancels a queued or running job; the job as it is afterwards (undefined when unknown). */
  cancelJob(id: string, now: Date): Promise<JobRecord | undefined>;
  /** Jobs left queued or running, e.g. by a crash: the runner resumes or fails them at start. */
  unfinishedJobs(): Promise<JobRecord[]>;
  requeueJob(id: string, now: Date): Promise<void>;
  /** Appends a progress stage to a job, in order. */
  addJobStage(jobId: string, stage: JobStage): Promise<void>;
  /** A job's stages, oldest first (empty for an unknown job). */
  jobStages(jobId: string): Promise<JobStage[]>;
}

/** The columns every driver reads a job from (JSON as text on SQLite, JSONB on PostgreSQL). */
export const JOB_COLUMNS = 'id, kind, status, input, result, error, attempts, created_at, updated_at, lease_expires_at';

export interface JobRow {
  id: string;
  kind: string;
  status: string;
  input: unknown;
  result: unknown;
  error: unknown;
  attempts: number | string;
  created_at: string;
  updated_at: string;
  lease_expires_at: number | string | null;
}

/** A job row as both drivers return it; `json` parses a column the driver keeps as text. */
export function toJob(row: JobRow, json: (value: unknown) => unknown): JobRecord {
  const optional = (value: unknown) => (value === null || value === undefined ? null : json(value));
  return {
    id: row.id,
    kind: row.kind as JobKind,
    status: row.status as JobStatus,
    input: json(row.input),
    result: optional(row.result),
    error: optional(row.error) as JobRecord['error'],
    attempts: Number(row.attempts),
    created_at: row.created_at,
    updated_at: row.updated_at,
    lease_expires_at: row.lease_expires_at === null || row.lease_expires_at === undefined ? null : new Date(Number(row.lease_expires_at)).toISOString(),
  };
}
