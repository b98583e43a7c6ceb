/** Fixed-window rate limits and play counters, keyed by hashed client ids. */

export interface RateLimit {
  /** Counter key, e.g. "contribute:<client hash>". */
  key: string;
  limit: number;
  windowMs: number;
}

export interface HitVerdict {
  allowed: boolean;
  remaining: number;
  resetMs: number;
}

export interface LimitsStore {
  /** Fixed-window counter: counts one hit and says whether it is within the limit. */
  hit(rateLimit: RateLimit, now: Date): Promise<HitVerdict>;
  /** Records that a client played a track (once per client, track and day). */
  recordPlay(slug: string, client: string, day: string): Promise<boolean>;
  playCounts(): Promise<{ slug: string; plays: number; listeners: number; returning: number }[]>;
}
