/** Contributions on SQLite: submit is one transaction (de-duplicate → rate limit → insert). */
import { contributionPageStatement } from '../contributions-query.ts';
import { CONTRIBUTION_COLUMNS, toContribution, type ContributionsStore, type SubmitOutcome } from '../contributions.ts';
import { parseJson, type Database, type Transaction } from './db.ts';
import { createCounter } from './limits.ts';

export function createSqliteContributions(db: Database, transaction: Transaction): ContributionsStore {
  const countHit = createCounter(db);
  const statements = {
    byHash: db.prepare(`SELECT ${CONTRIBUTION_COLUMNS} FROM contributions WHERE content_hash = ? AND status = 'pending' LIMIT 1`),
    byId: db.prepare(`SELECT ${CONTRIBUTION_COLUMNS} FROM contributions WHERE id = ?`),
    listAll: db.prepare(`SELECT ${CONTRIBUTION_COLUMNS} FROM contributions ORDER BY created_at, id`),
    listStatus: db.prepare(`SELECT ${CONTRIBUTION_COLUMNS} FROM contributions WHERE status = ? ORDER BY created_at, id`),
    insert: db.prepare(`INSERT INTO contributions (${CONTRIBUTION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, NULL, NULL, NULL, '[]')`),
    review: db.prepare("UPDATE contributions SET status = ?, reviewer = ?, reason = ?, reviewed_at = ? WHERE id = ? AND status = 'pending'"),
    setReviews: db.prepare('UPDATE contributions SET reviews = ? WHERE id = ?'),
  };
  const read = (id: string) => {
    const row = statements.byId.get(id) as Record<string, unknown> | undefined;
    return row ? toContribution(row, parseJson) : undefined;
  };
  return {
    async submitContribution(item, rateLimit, now): Promise<SubmitOutcome> {
      return transaction(() => {
        const same = statements.byHash.get(item.content_hash) as Record<string, unknown> | undefined;
        if (same) return { outcome: 'duplicate' as const, contribution: toContribution(same, parseJson) };
        const verdict = countHit(rateLimit, now.getTime());
        if (!verdict.allowed) return { outcome: 'limited' as const, retryAfterMs: verdict.resetMs, limit: rateLimit.limit };
        statements.insert.run(
          item.id,
          item.kind,
          item.record_id,
          item.identity,
          item.justification,
          JSON.stringify(item.payload),
          item.content_hash,
          item.idempotency_key,
          item.client,
          now.toISOString(),
        );
        return { outcome: 'created' as const, contribution: read(item.id)!, remaining: verdict.remaining, resetMs: verdict.resetMs };
      });
    },
    getContribution: async (id) => read(id),
    async listContributions(status) {
      const rows = (status ? statements.listStatus.all(status) : statements.listAll.all()) as Record<string, unknown>[];
      return rows.map((row) => toContribution(row, parseJson));
    },
    async findContributions(query) {
      const { sql, params } = contributionPageStatement(CONTRIBUTION_COLUMNS, query, (index) => `?${index}`, -1);
      const rows = db.prepare(sql).all(...params) as Record<string, unknown>[];
      return { items: rows.filter((row) => row.id !== null).map((row) => toContribution(row, parseJson)), total: Number(rows[0]?.total ?? 0) };
    },
    async reviewContribution(id, decision, now) {
      statements.review.run(decision.status, decision.reviewer, decision.reason, now.toISOString(), id);
      return read(id);
    },
    async addReview(id, review) {
      transaction(() => {
        const row = statements.byId.get(id) as { reviews: string } | undefined;
        if (!row) return;
        statements.setReviews.run(JSON.stringify([...(JSON.parse(row.reviews) as unknown[]), review]), id);
      });
    },
  };
}
