/**
 * The state the API keeps between requests: jobs, sessions, spend and Atlas records
 * persisted from live councils. One small interface; the embedded driver is SQLite
 * (api/storage/sqlite-store.ts); a scale-out driver implements the same interface.
 */

export type JobKind = 'deliberation' | 'trace' | 'council';
export type JobStatus = 'queued' | 'running' | 'done' | 'failed';

export interface JobRecord {
  id: string;
  kind: JobKind;
  status: JobStatus;
  input: unknown;
  result: unknown | null;
  error: { code: string; message: string } | null;
  attempts: number;
  created_at: string;
  updated_at: string;
}

export interface Exchange {
  question: string;
  answer: string;
  sources: string[];
  at: string;
}

export interface SpendEntry {
  at: string;
  purpose: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
}

export interface PersistedRecord {
  id: string;
  /** Divergence frontmatter (validated by the content schema) plus the synthesis body. */
  frontmatter: Record<string, unknown>;
  body: string;
  persisted_at: string;
}

export interface Store {
  createJob(job: Pick<JobRecord, 'id' | 'kind' | 'input'>, now: Date): Promise<JobRecord>;
  getJob(id: string): Promise<JobRecord | undefined>;
  /** Moves a job to running if it is queued (or re-queued); false when another worker has it. */
  claimJob(id: string, now: Date): Promise<boolean>;
  finishJob(id: string, outcome: { result: unknown } | { error: { code: string; message: string } }, now: Date): Promise<void>;
  /** Jobs left queued or running, e.g. by a crash: the runner resumes or fails them at start. */
  unfinishedJobs(): Promise<JobRecord[]>;
  requeueJob(id: string, now: Date): Promise<void>;

  /** Appends an exchange and keeps only the newest `keep`; returns the exchanges before it. */
  appendExchange(sessionId: string, exchange: Exchange, keep: number, now: Date): Promise<void>;
  /** Exchanges of a session whose last activity is within ttlMs, oldest first. */
  getSession(sessionId: string, ttlMs: number, now: Date): Promise<Exchange[]>;

  addSpend(entry: SpendEntry): Promise<void>;
  totalSpendUsd(): Promise<number>;

  saveRecord(record: PersistedRecord): Promise<void>;
  listRecords(): Promise<PersistedRecord[]>;

  close(): Promise<void>;
}
