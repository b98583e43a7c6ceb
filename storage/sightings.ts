/** Tensions named by live deliberations, pending until a curator keeps or dismisses each. */
import type { KeptSighting } from '../core/tension-identity.ts';

/** A tension named by a live deliberation (core/tension-identity.ts): pending until a curator keeps or dismisses it. */
export interface TensionSightingRecord extends KeptSighting {
  state: 'pending' | 'kept' | 'dismissed';
  reviewer: string | null;
  reviewed_at: string | null;
}
export type NewTensionSighting = Omit<TensionSightingRecord, 'state' | 'reviewer' | 'reviewed_at'>;

export interface SightingsStore {
  /** Stores sightings as pending (ids are unique; a repeated id is ignored). */
  addTensionSightings(items: readonly NewTensionSighting[]): Promise<void>;
  /** Sightings oldest first, all or in one state. */
  listTensionSightings(state?: TensionSightingRecord['state']): Promise<TensionSightingRecord[]>;
  /** Keeps or dismisses a pending sighting; undefined when there is no pending sighting with that id. */
  reviewTensionSighting(id: string, decision: { state: 'kept' | 'dismissed'; reviewer: string }, now: Date): Promise<TensionSightingRecord | undefined>;
}

/** A tension sighting as both drivers keep it: the sighting as JSON text, its review state in columns. */
export interface SightingRow {
  data: string;
  state: TensionSightingRecord['state'];
  reviewer: string | null;
  reviewed_at: string | null;
}

export function toSighting(row: SightingRow): TensionSightingRecord {
  return { ...(JSON.parse(row.data) as TensionSightingRecord), state: row.state, reviewer: row.reviewer, reviewed_at: row.reviewed_at };
}
