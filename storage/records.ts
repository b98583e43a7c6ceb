/** Atlas records persisted from live councils, and council results kept until they are persisted. */

export interface PersistedRecord {
  id: string;
  /** Divergence frontmatter (validated by the content schema) plus the synthesis body. */
  frontmatter: Record<string, unknown>;
  body: string;
  persisted_at: string;
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

export interface RecordsStore {
  saveRecord(record: PersistedRecord): Promise<void>;
  listRecords(): Promise<PersistedRecord[]>;
  /** Keeps a council result for ttlMs (and drops kept results that have expired). */
  keepCouncil(id: string, result: unknown, now: Date, ttlMs: number): Promise<void>;
  /** A kept council result that has not expired. */
  getCouncil(id: string, now: Date): Promise<KeptCouncil | undefined>;
  /** Sets persisted_id from `expected` to `recordId` (compare and set); false when it was not `expected`. */
  setCouncilPersisted(id: string, recordId: string | null, expected: string | null): Promise<boolean>;
}
