/** Tension sightings on PostgreSQL. */
import type pg from 'pg';
import { toSighting, type SightingRow, type SightingsStore } from '../sightings.ts';
import type { Transaction } from './db.ts';

export function createPostgresSightings(pool: pg.Pool, transaction: Transaction): SightingsStore {
  return {
    async addTensionSightings(items) {
      if (items.length === 0) return;
      await transaction(async (client) => {
        for (const item of items) {
          await client.query('INSERT INTO tension_sightings (id, tension_key, data, seen_at, state) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING', [
            item.id,
            item.key,
            JSON.stringify(item),
            item.seen_at,
            'pending',
          ]);
        }
      });
    },
    async listTensionSightings(state) {
      const { rows } = state
        ? await pool.query<SightingRow>('SELECT * FROM tension_sightings WHERE state = $1 ORDER BY seen_at, id', [state])
        : await pool.query<SightingRow>('SELECT * FROM tension_sightings ORDER BY seen_at, id');
      return rows.map(toSighting);
    },
    async reviewTensionSighting(id, decision, now) {
      const { rows } = await pool.query<SightingRow>(
        "UPDATE tension_sightings SET state = $1, reviewer = $2, reviewed_at = $3 WHERE id = $4 AND state = 'pending' RETURNING *",
        [decision.state, decision.reviewer, now.toISOString(), id],
      );
      return rows[0] ? toSighting(rows[0]) : undefined;
    },
  };
}
