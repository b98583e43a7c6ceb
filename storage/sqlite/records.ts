/** Persisted Atlas records and kept council results on SQLite. */
import type { KeptCouncil, RecordsStore } from '../records.ts';
import type { Database } from './db.ts';

export function createSqliteRecords(db: Database): RecordsStore {
  const statements = {
    save: db.prepare('INSERT INTO atlas_records (id, frontmatter, body, persisted_at) VALUES (?, ?, ?, ?)'),
    list: db.prepare('SELECT id, frontmatter, body, persisted_at FROM atlas_records ORDER BY persisted_at, id'),
    purgeCouncils: db.prepare('DELETE FROM kept_councils WHERE expires_at < ?'),
    keepCouncil: db.prepare('INSERT INTO kept_councils (id, result, created_at, expires_at) VALUES (?, ?, ?, ?)'),
    getCouncil: db.prepare('SELECT id, result, created_at, expires_at, persisted_id FROM kept_councils WHERE id = ? AND expires_at >= ?'),
    setPersisted: db.prepare('UPDATE kept_councils SET persisted_id = ? WHERE id = ? AND persisted_id IS ?'),
  };
  return {
    async saveRecord(record) {
      statements.save.run(record.id, JSON.stringify(record.frontmatter), record.body, record.persisted_at);
    },
    async listRecords() {
      return (statements.list.all() as { id: string; frontmatter: string; body: string; persisted_at: string }[]).map((row) => ({
        id: row.id,
        frontmatter: JSON.parse(row.frontmatter) as Record<string, unknown>,
        body: row.body,
        persisted_at: row.persisted_at,
      }));
    },
    async keepCouncil(id, result, now, ttlMs) {
      statements.purgeCouncils.run(now.toISOString());
      statements.keepCouncil.run(id, JSON.stringify(result), now.toISOString(), new Date(now.getTime() + ttlMs).toISOString());
    },
    async getCouncil(id, now) {
      const row = statements.getCouncil.get(id, now.toISOString()) as (Omit<KeptCouncil, 'result'> & { result: string }) | undefined;
      return row
        ? { id: row.id, result: JSON.parse(row.result) as unknown, created_at: row.created_at, expires_at: row.expires_at, persisted_id: row.persisted_id }
        : undefined;
    },
    async setCouncilPersisted(id, recordId, expected) {
      return statements.setPersisted.run(recordId, id, expected).changes === 1;
    },
  };
}
