/** Conversation sessions issued to clients (§8: a few exchanges, a time-to-live). */

export interface Exchange {
  question: string;
  answer: string;
  sources: string[];
  at: string;
}

export interface SessionsStore {
  /** Appends an exchange and keeps only the newest `keep`. */
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
}
