/**
 * Both drivers refuse text they could not keep alike (NUL, unpaired surrogates) with the same
 * permanent UnstorableTextError, before any statement runs: SQLite would keep it, PostgreSQL
 * would fail mid-statement. Applied to every argument of every method.
 */
import { findIllFormedText } from '../core/well-formed-text.ts';
import { UnstorableTextError, type Store } from './store.ts';

/** Look-ups by id: nothing stored can have such an id, so they find nothing (e.g. 404 JOB_NOT_FOUND). */
const LOOKUPS = new Set(['getJob', 'getContribution']);

export function refusingIllFormedText(store: Store): Store {
  const wrapped: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(store) as [string, (...args: unknown[]) => Promise<unknown>][]) {
    wrapped[name] = (...args: unknown[]) => {
      const found = findIllFormedText(args, name);
      if (!found) return method(...args);
      return LOOKUPS.has(name) ? Promise.resolve(undefined) : Promise.reject(new UnstorableTextError(found.field, found.problem));
    };
  }
  return wrapped as unknown as Store;
}
