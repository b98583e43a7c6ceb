/** Rate-limit windows (an unlogged table) and play counters on PostgreSQL. */
import type pg from 'pg';
import type { HitVerdict, LimitsStore, RateLimit } from '../limits.ts';
import type { Queryable } from './db.ts';

/** Counts one hit in a fixed window, in one statement: atomic across processes. */
export async function countHit(db: Queryable, rateLimit: RateLimit, nowMs: number): Promise<HitVerdict> {
  const { rows } = await db.query<{ window_start: string; count: number }>(
    `INSERT INTO rate_counters (key, window_start, count) VALUES ($1, $2, 1)
     ON CONFLICT (key) DO UPDATE SET
       window_start = CASE WHEN $2 - rate_counters.window_start >= $3 THEN $2 ELSE rate_counters.window_start END,
       count = CASE WHEN $2 - rate_counters.window_start >= $3 THEN 1 ELSE rate_counters.count + 1 END
     RETURNING window_start, count`,
    [rateLimit.key, nowMs, rateLimit.windowMs],
  );
  const row = rows[0]!;
  const resetMs = Number(row.window_start) + rateLimit.windowMs - nowMs;
  const count = Number(row.count);
  return { allowed: count <= rateLimit.limit, remaining: Math.max(0, rateLimit.limit - count), resetMs };
}

export function createPostgresLimits(pool: pg.Pool): LimitsStore {
  return {
    hit: (rateLimit, now) => countHit(pool, rateLimit, now.getTime()),
    async recordPlay(slug, client, day) {
      const { rowCount } = await pool.query('INSERT INTO plays (slug, client, day) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [slug, client, day]);
      return rowCount === 1;
    },
    async playCounts() {
      const { rows } = await pool.query<{ slug: string; plays: string; listeners: string; returning_clients: string }>(
        `SELECT slug, COUNT(*) AS plays, COUNT(DISTINCT client) AS listeners,
           (SELECT COUNT(*) FROM (SELECT client FROM plays p2 WHERE p2.slug = plays.slug GROUP BY client HAVING COUNT(*) > 1) AS r) AS returning_clients
         FROM plays GROUP BY slug ORDER BY COUNT(*) DESC, slug`,
      );
      return rows.map((row) => ({ slug: row.slug, plays: Number(row.plays), listeners: Number(row.listeners), returning: Number(row.returning_clients) }));
    },
  };
}
