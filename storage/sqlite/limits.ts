/** Rate-limit windows and play counters on SQLite. */
import type { HitVerdict, LimitsStore, RateLimit } from '../limits.ts';
import type { Database, Transaction } from './db.ts';

/** Fixed window: the counter resets when its window has passed. Synchronous, so atomic inside a transaction. */
export function createCounter(db: Database): (rateLimit: RateLimit, nowMs: number) => HitVerdict {
  const get = db.prepare('SELECT window_start, count FROM rate_counters WHERE key = ?');
  const put = db.prepare(
    'INSERT INTO rate_counters (key, window_start, count) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET window_start = excluded.window_start, count = excluded.count',
  );
  return (rateLimit, nowMs) => {
    const row = get.get(rateLimit.key) as { window_start: number; count: number } | undefined;
    const fresh = !row || nowMs - Number(row.window_start) >= rateLimit.windowMs;
    const windowStart = fresh ? nowMs : Number(row!.window_start);
    const count = fresh ? 0 : Number(row!.count);
    const resetMs = windowStart + rateLimit.windowMs - nowMs;
    if (count >= rateLimit.limit) return { allowed: false, remaining: 0, resetMs };
    put.run(rateLimit.key, windowStart, count + 1);
    return { allowed: true, remaining: rateLimit.limit - count - 1, resetMs };
  };
}

export function createSqliteLimits(db: Database, transaction: Transaction): LimitsStore {
  const countHit = createCounter(db);
  const insertPlay = db.prepare('INSERT OR IGNORE INTO plays (slug, client, day) VALUES (?, ?, ?)');
  const playCounts = db.prepare(`SELECT slug, COUNT(*) AS plays, COUNT(DISTINCT client) AS listeners,
      (SELECT COUNT(*) FROM (SELECT client FROM plays p2 WHERE p2.slug = plays.slug GROUP BY client HAVING COUNT(*) > 1)) AS returning_clients
      FROM plays GROUP BY slug ORDER BY plays DESC, slug`);
  return {
    async hit(rateLimit, now) {
      return transaction(() => countHit(rateLimit, now.getTime()));
    },
    async recordPlay(slug, client, day) {
      return insertPlay.run(slug, client, day).changes === 1;
    },
    async playCounts() {
      return (playCounts.all() as { slug: string; plays: number; listeners: number; returning_clients: number }[]).map((row) => ({
        slug: row.slug,
        plays: Number(row.plays),
        listeners: Number(row.listeners),
        returning: Number(row.returning_clients),
      }));
    },
  };
}
