/**
 * The state the API keeps between requests: jobs, sessions, spend and Atlas records
 * persisted from live councils. One small interface; the embedded driver is SQLite
 * (storage/sqlite-store.ts); a scale-out driver implements the same interface.
 */
import type { KeptSighting } from '../core/tension-identity.ts';
import type { ContributionKind, ContributionRecord, ContributionStatus } from '../core/contributions.ts';
export type { ContributionKind, ContributionRecord, ContributionStatus } from '../core/contributions.ts';

export type JobKind = 'deliberation' | 'trace' | 'council';
export type JobStatus = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';

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

/** One step of a live job as it happens (retrieval, each voice, the chair), for progress. */
export interface JobStage {
  stage: string;
  at: string;
  [field: string]: unknown;
}

/** A council result as it was shown, kept for a bounded time so it can be persisted as is. */
export interface KeptCouncil {
  id: string;
  result: unknown;
  created_at: string;
  expires_at: string;
  /** The Atlas record id it was persisted as, once persisted. */
  persisted_id: string | null;
}

export interface SpendEntry {
  at: string;
  purpose: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
}

/**
 * Money held for one live call while it runs: its maximum cost, counted against the ceiling
 * until the call settles. A reservation whose process died stops counting at `expires_at`
 * (after the call's own deadline), so a crash cannot hold the ceiling forever.
 */
export interface SpendReservation {
  id: string;
  purpose: string;
  model: string;
  amount_usd: number;
  expires_at: Date;
}

/** The error stored on a job cancelled by its caller. */
export const CANCELLED = { code: 'JOB_CANCELLED', message: 'the job was cancelled by its caller; its model calls were aborted' };

/** Sums of floating-point dollars: a hair of rounding is not a crossing. */
export function withinCeiling(total: number, ceilingUsd: number): boolean {
  return total <= ceilingUsd + 1e-9;
}

export interface PersistedRecord {
  id: string;
  /** Divergence frontmatter (validated by the content schema) plus the synthesis body. */
  frontmatter: Record<string, unknown>;
  body: string;
  persisted_at: string;
}


/** A tension named by a live deliberation (core/tension-identity.ts): pending until a curator keeps or dismisses it. */
export interface TensionSightingRecord extends KeptSighting {
  state: 'pending' | 'kept' | 'dismissed';
  reviewer: string | null;
  reviewed_at: string | null;
}
export type NewTensionSighting = Omit<TensionSightingRecord, 'state' | 'reviewer' | 'reviewed_at'>;


/** Which contributions to list: every given filter must match. */
export interface ContributionQuery {
  status?: ContributionStatus;
  kind?: ContributionKind;
  record_id?: string;
  /** The hashed client id a contribution came from. */
  client?: string;
  /** At most this many items; every match when omitted. */
  limit?: number;
  /** How many matching items to skip first; 0 when omitted. */
  offset?: number;
}

export interface ContributionPage {
  /** One page of matches, oldest first (created_at, then id). */
  items: ContributionRecord[];
  /** How many contributions match the filters, whatever the page. */
  total: number;
}

export interface RateLimit {
  /** Counter key, e.g. "contribute:<client hash>". */
  key: string;
  limit: number;
  windowMs: number;
}

export type SubmitOutcome =
  | { outcome: 'created'; contribution: ContributionRecord; remaining: number; resetMs: number }
  /** Identical content to a pending submission: it is returned, nothing is added. */
  | { outcome: 'duplicate'; contribution: ContributionRecord }
  | { outcome: 'limited'; retryAfterMs: number; limit: number };

/** An Idempotency-Key belongs to one client and one operation (e.g. "contribute", "store", "query"). */
export interface IdempotencyScope {
  client: string;
  operation: string;
  key: string;
}

/** What a keyed write answered: replayed verbatim for the same key and the same request. */
export interface Acknowledgement {
  status: number;
  headers: Record<string, string>;
  /** The JSON text of the body, byte for byte. */
  body: string;
}

export type Reservation =
  /** The key is now held for this request: complete it with the acknowledgement, or release it. */
  | { state: 'reserved' }
  /** The key answered this same request before: that acknowledgement. */
  | { state: 'replay'; acknowledgement: Acknowledgement }
  /** The key was used for a different request (another fingerprint). */
  | { state: 'mismatch' }
  /** The same request with this key is still being handled. */
  | { state: 'in_progress'; retryAfterMs: number };

/**
 * The store cannot be reached (its database server is down, restarting or unreachable). The
 * write may or may not have reached it: only an acknowledged write is known to be stored,
 * and a resend with the same Idempotency-Key is never stored twice. Retryable.
 */
export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`the store is unavailable: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'StoreUnavailableError';
  }
}

/**
 * A value the store refuses to keep: text with NUL or an unpaired surrogate, which the two
 * drivers could not keep alike. Permanent (the same value fails the same way); the HTTP edge
 * rejects such text first, so this is the drivers' own guarantee, not a path clients see.
 */
export class UnstorableTextError extends Error {
  constructor(
    readonly field: string,
    readonly problem: 'nul' | 'lone_surrogate',
  ) {
    super(`the store keeps only well-formed text without NUL: ${field} has ${problem === 'nul' ? 'a NUL character' : 'an unpaired surrogate'}`);
    this.name = 'UnstorableTextError';
  }
}

export interface Store extends FederationStore {
  createJob(job: Pick<JobRecord, 'id' | 'kind' | 'input'>, now: Date): Promise<JobRecord>;
  getJob(id: string): Promise<JobRecord | undefined>;
  /** Moves a job to running if it is queued (or re-queued); false when another worker has it. */
  claimJob(id: string, now: Date): Promise<boolean>;
  /** Ends a running job; a job cancelled meanwhile stays cancelled. */
  finishJob(id: string, outcome: { result: unknown } | { error: { code: string; message: string } }, now: Date): Promise<void>;
  /** Cancels a queued or running job; the job as it is afterwards (undefined when unknown). */
  cancelJob(id: string, now: Date): Promise<JobRecord | undefined>;
  /** Jobs left queued or running, e.g. by a crash: the runner resumes or fails them at start. */
  unfinishedJobs(): Promise<JobRecord[]>;
  requeueJob(id: string, now: Date): Promise<void>;
  /** Appends a progress stage to a job, in order. */
  addJobStage(jobId: string, stage: JobStage): Promise<void>;
  /** A job's stages, oldest first (empty for an unknown job). */
  jobStages(jobId: string): Promise<JobStage[]>;

  /** Appends an exchange and keeps only the newest `keep`; returns the exchanges before it. */
  appendExchange(sessionId: string, exchange: Exchange, keep: number, now: Date): Promise<void>;
  /** Exchanges of a session whose last activity is within ttlMs, oldest first. */
  getSession(sessionId: string, ttlMs: number, now: Date): Promise<Exchange[]>;
  /** Records a session id the server issued to a client (a hashed client id). */
  createSession(sessionId: string, client: string, now: Date): Promise<void>;
  /**
   * An issued session whose last activity (issue or exchange) is within ttlMs, with its
   * owner and exchanges; undefined for an id never issued or expired.
   */
  findSession(sessionId: string, ttlMs: number, now: Date): Promise<{ client: string; exchanges: Exchange[] } | undefined>;

  /** Keeps a council result for ttlMs (and drops kept results that have expired). */
  keepCouncil(id: string, result: unknown, now: Date, ttlMs: number): Promise<void>;
  /** A kept council result that has not expired. */
  getCouncil(id: string, now: Date): Promise<KeptCouncil | undefined>;
  /** Sets persisted_id from `expected` to `recordId` (compare and set); false when it was not `expected`. */
  setCouncilPersisted(id: string, recordId: string | null, expected: string | null): Promise<boolean>;

  addSpend(entry: SpendEntry): Promise<void>;
  totalSpendUsd(): Promise<number>;
  /**
   * Holds `reservation.amount_usd` if committed spend plus unexpired reservations plus it stay
   * within `ceilingUsd`; false (nothing held) otherwise. Atomic across processes sharing the
   * store. Expired reservations are dropped on the way.
   */
  reserveSpend(reservation: SpendReservation, ceilingUsd: number, now: Date): Promise<boolean>;
  /** Drops a reservation and, in the same step, records what the call really cost (if anything). */
  settleSpend(reservationId: string, entry: SpendEntry | undefined): Promise<void>;
  /** Committed spend and the unexpired reservations, in USD. */
  spendStatus(now: Date): Promise<{ spent_usd: number; reserved_usd: number }>;

  saveRecord(record: PersistedRecord): Promise<void>;
  listRecords(): Promise<PersistedRecord[]>;

  /**
   * Stores a contribution atomically: de-duplicate identical pending content, enforce the
   * client's rate limit, then insert (durably) — in that order. Idempotency-Keys are handled
   * around it, by reserveIdempotencyKey / completeIdempotencyKey.
   */
  submitContribution(
    item: Omit<ContributionRecord, 'status' | 'created_at' | 'reviewed_at' | 'reviewer' | 'reason' | 'reviews'>,
    rateLimit: RateLimit,
    now: Date,
  ): Promise<SubmitOutcome>;
  getContribution(id: string): Promise<ContributionRecord | undefined>;
  listContributions(status?: ContributionStatus): Promise<ContributionRecord[]>;
  /** Filters and pages in the database (one statement, so the page and total agree), for the curator's list. */
  findContributions(query: ContributionQuery): Promise<ContributionPage>;
  reviewContribution(id: string, decision: { status: 'approved' | 'rejected'; reviewer: string; reason: string }, now: Date): Promise<ContributionRecord | undefined>;
  addReview(id: string, review: ContributionRecord['reviews'][number]): Promise<void>;

  /**
   * Holds an Idempotency-Key for one request, atomically: a new key (or one whose holder
   * left it pending for staleMs, e.g. a crash) is reserved; a completed key with the same
   * fingerprint replays; another fingerprint is a mismatch; a live pending one is in progress.
   */
  reserveIdempotencyKey(scope: IdempotencyScope, fingerprint: string, now: Date, staleMs: number): Promise<Reservation>;
  /** Keeps the acknowledgement of a reserved key; from now on the key replays it. */
  completeIdempotencyKey(scope: IdempotencyScope, acknowledgement: Acknowledgement): Promise<void>;
  /** Frees a reserved key whose request failed before an acknowledgement (nothing is kept for it). */
  releaseIdempotencyKey(scope: IdempotencyScope): Promise<void>;

  /** Fixed-window counter: counts one hit and says whether it is within the limit. */
  hit(rateLimit: RateLimit, now: Date): Promise<{ allowed: boolean; remaining: number; resetMs: number }>;

  /** Stores sightings as pending (ids are unique; a repeated id is ignored). */
  addTensionSightings(items: readonly NewTensionSighting[]): Promise<void>;
  /** Sightings oldest first, all or in one state. */
  listTensionSightings(state?: TensionSightingRecord['state']): Promise<TensionSightingRecord[]>;
  /** Keeps or dismisses a pending sighting; undefined when there is no pending sighting with that id. */
  reviewTensionSighting(id: string, decision: { state: 'kept' | 'dismissed'; reviewer: string }, now: Date): Promise<TensionSightingRecord | undefined>;

  /** Records that a client played a track (once per client, track and day). */
  recordPlay(slug: string, client: string, day: string): Promise<boolean>;
  playCounts(): Promise<{ slug: string; plays: number; listeners: number; returning: number }[]>;

  /** A random per-deployment secret (created on first use), e.g. the salt for client hashes. */
  secret(name: string): Promise<string>;

  close(): Promise<void>;
}

/** A record pulled from a peer, verified, waiting for a curator (docs/FEDERATION.md). */
export type ImportStatus = 'pending' | 'approved' | 'rejected' | 'superseded';

export interface FederationImport {
  id: string;
  /** The origin node id (`pn1:<key id>`) and its origin URL. */
  origin_node: string;
  origin: string;
  /** The record id at the origin (namespaced by the origin's prefix). */
  record_id: string;
  /** sha256 of `markdown`'s UTF-8 bytes, as the origin's signed manifest lists it. */
  content_hash: string;
  /** The verified record twin, verbatim. */
  markdown: string;
  /** Signature, key, licence and attribution, as approval writes them into content/. */
  provenance: Record<string, unknown>;
  status: ImportStatus;
  staged_at: string;
  reviewed_at: string | null;
  reviewer: string | null;
  reason: string | null;
}

/** What a puller remembers of a peer: the key first seen for its origin, and its newest accepted manifest. */
export interface FederationPeer {
  origin: string;
  node_id: string;
  public_key: string;
  last_signed_at: string;
}

export type NewImport = Omit<FederationImport, 'status' | 'reviewed_at' | 'reviewer' | 'reason'>;

/** Pending imports and peers; part of every Store (both drivers). */
export interface FederationStore {
  getPeer(origin: string): Promise<FederationPeer | undefined>;
  /**
   * Stages the imports of one pull and moves the peer's last accepted manifest to `peer`, in one
   * transaction. An import already known by (origin node, record id, content hash) is skipped;
   * a new version supersedes a pending older one. Refused (false, nothing written) when the
   * store already holds a newer manifest of that origin, or a different key for it.
   */
  stageImports(peer: FederationPeer, imports: readonly NewImport[]): Promise<{ accepted: boolean; staged: FederationImport[] }>;
  /** Content hashes already known per record id of an origin node (any status). */
  knownImports(originNode: string): Promise<Map<string, Set<string>>>;
  getImport(id: string): Promise<FederationImport | undefined>;
  listImports(status?: ImportStatus): Promise<FederationImport[]>;
  reviewImport(id: string, decision: { status: 'approved' | 'rejected'; reviewer: string; reason: string }, now: Date): Promise<FederationImport | undefined>;
}
