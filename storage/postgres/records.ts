/** Persisted Atlas records and kept council results on PostgreSQL. */
import type pg from 'pg';
import type { KeptCouncil, PersistedRecord, RecordsStore } from '../records.ts';

export function createPostgresRecords(pool: pg.Pool): RecordsStore {
  return {
    async saveRecord(record) {
      await pool.query('INSERT INTO atlas_records (id, frontmatter, body, persisted_at) VALUES ($1, $2, $3, $4)', [
        record.id,
        JSON.stringify(record.frontmatter),
        record.body,
        record.persisted_at,
      ]);
    },
    async listRecords() {
      const { rows } = await pool.query<PersistedRecord>('SELECT id, frontmatter, body, persisted_at FROM atlas_records ORDER BY persisted_at, id');
      return rows.map((row) => ({ id: row.id, frontmatter: row.frontmatter, body: row.body, persisted_at: row.persisted_at }));
    },
    async keepCouncil(id, result, now, ttlMs) {
      // Text, not JSONB: the verbatim answers come back exactly as they were shown.
      await pool.query('DELETE FROM kept_councils WHERE expires_at < $1', [now.toISOString()]);
      await pool.query('INSERT INTO kept_councils (id, result, created_at, expires_at) VALUES ($1, $2, $3, $4)', [
        id,
        JSON.stringify(result),
        now.toISOString(),
        new Date(now.getTime() + ttlMs).toISOString(),
      ]);
    },
    async getCouncil(id, now) {
      const { rows } = await pool.query<Omit<KeptCouncil, 'result'> & { result: string }>(
        'SELECT id, result, created_at, expires_at, persisted_id FROM kept_councils WHERE id = $1 AND expires_at >= $2',
        [id, now.toISOString()],
      );
      const row = rows[0];
      return row
        ? { id: row.id, result: JSON.parse(row.result) as unknown, created_at: row.created_at, expires_at: row.expires_at, persisted_id: row.persisted_id }
        : undefined;
    },
    async setCouncilPersisted(id, recordId, expected) {
      const { rowCount } = await pool.query('UPDATE kept_councils SET persisted_id = $1 WHERE id = $2 AND persisted_id IS NOT DISTINCT FROM $3', [
        recordId,
        id,
        expected,
      ]);
      return rowCount === 1;
    },
  };
}
