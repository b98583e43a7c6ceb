/** Tension sightings on SQLite. */
import { toSighting, type SightingRow, type SightingsStore } from '../sightings.ts';
import type { Database, Transaction } from './db.ts';

export function createSqliteSightings(db: Database, transaction: Transaction): SightingsStore {
  const statements = {
    insert: db.prepare('INSERT INTO tension_sightings (id, tension_key, data, seen_at, state) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING'),
    listAll: db.prepare('SELECT * FROM tension_sightings ORDER BY seen_at, id'),
    listState: db.prepare('SELECT * FROM tension_sightings WHERE state = ? ORDER BY seen_at, id'),
    review: db.prepare("UPDATE tension_sightings SET state = ?, reviewer = ?, reviewed_at = ? WHERE id = ? AND state = 'pending'"),
    byId: db.prepare('SELECT * FROM tension_sightings WHERE id = ?'),
  };
  return {
    async addTensionSightings(items) {
      transaction(() => {
        for (const item of items) statements.insert.run(item.id, item.key, JSON.stringify(item), item.seen_at, 'pending');
      });
    },
    async listTensionSightings(state) {
      return ((state ? statements.listState.all(state) : statements.listAll.all()) as SightingRow[]).map(toSighting);
    },
    async reviewTensionSighting(id, decision, now) {
      if (statements.review.run(decision.state, decision.reviewer, now.toISOString(), id).changes !== 1) return undefined;
      return toSighting(statements.byId.get(id) as SightingRow);
    },
  };
}
