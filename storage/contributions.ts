/** Pending contributions and proposals (api/routes/contribute.ts; the curator CLI reads them). */
import type { ContributionKind, ContributionRecord, ContributionStatus } from '../core/contributions.ts';
import type { RateLimit } from './limits.ts';
export type { ContributionKind, ContributionRecord, ContributionStatus } from '../core/contributions.ts';

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

export type SubmitOutcome =
  | { outcome: 'created'; contribution: ContributionRecord; remaining: number; resetMs: number }
  /** Identical content to a pending submission: it is returned, nothing is added. */
  | { outcome: 'duplicate'; contribution: ContributionRecord }
  | { outcome: 'limited'; retryAfterMs: number; limit: number };

export type NewContribution = Omit<ContributionRecord, 'status' | 'created_at' | 'reviewed_at' | 'reviewer' | 'reason' | 'reviews'>;

export interface ContributionsStore {
  /**
   * Stores a contribution atomically: de-duplicate identical pending content, enforce the
   * client's rate limit, then insert (durably) — in that order. Idempotency-Keys are handled
   * around it, by reserveIdempotencyKey / completeIdempotencyKey.
   */
  submitContribution(item: NewContribution, rateLimit: RateLimit, now: Date): Promise<SubmitOutcome>;
  getContribution(id: string): Promise<ContributionRecord | undefined>;
  listContributions(status?: ContributionStatus): Promise<ContributionRecord[]>;
  /** Filters and pages in the database (one statement, so the page and total agree), for the curator's list. */
  findContributions(query: ContributionQuery): Promise<ContributionPage>;
  reviewContribution(
    id: string,
    decision: { status: 'approved' | 'rejected'; reviewer: string; reason: string },
    now: Date,
  ): Promise<ContributionRecord | undefined>;
  addReview(id: string, review: ContributionRecord['reviews'][number]): Promise<void>;
}

export const CONTRIBUTION_COLUMNS =
  'id, kind, record_id, identity, justification, payload, content_hash, idempotency_key, client, status, created_at, reviewed_at, reviewer, reason, reviews';

/** A contribution row as both drivers return it; `json` parses a column the driver keeps as text. */
export function toContribution(row: Record<string, unknown>, json: (value: unknown) => unknown): ContributionRecord {
  const nullable = (name: string) => (row[name] as string | null | undefined) ?? null;
  return {
    id: row.id as string,
    kind: row.kind as ContributionKind,
    record_id: nullable('record_id'),
    identity: row.identity as string,
    justification: nullable('justification'),
    payload: json(row.payload) as Record<string, unknown>,
    content_hash: row.content_hash as string,
    idempotency_key: nullable('idempotency_key'),
    client: row.client as string,
    status: row.status as ContributionStatus,
    created_at: row.created_at as string,
    reviewed_at: nullable('reviewed_at'),
    reviewer: nullable('reviewer'),
    reason: nullable('reason'),
    reviews: json(row.reviews) as ContributionRecord['reviews'],
  };
}
