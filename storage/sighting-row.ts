/** A tension sighting as both drivers keep it: the sighting as JSON text, its review state in columns. */
import type { TensionSightingRecord } from './store.ts';

export interface SightingRow {
  data: string;
  state: TensionSightingRecord['state'];
  reviewer: string | null;
  reviewed_at: string | null;
}

export function toSighting(row: SightingRow): TensionSightingRecord {
  return { ...(JSON.parse(row.data) as TensionSightingRecord), state: row.state, reviewer: row.reviewer, reviewed_at: row.reviewed_at };
}
