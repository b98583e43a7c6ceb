/**
 * Both drivers keep only text they can keep alike: no NUL, no unpaired surrogate (SQLite would
 * keep them, PostgreSQL fails mid-statement). What clients send is checked at the HTTP edge
 * (400 INVALID_TEXT) and refused here with the same permanent UnstorableTextError; what the
 * server itself produced (model answers in job results, session exchanges, council records) is
 * stored safely instead — NUL removed, unpaired surrogates as U+FFFD — so an acknowledged job
 * never loses its result to a character a model emitted.
 */
import { findIllFormedText, toWellFormedText } from '../core/well-formed-text.ts';
import { UnstorableTextError, type Store } from './store.ts';

/** Look-ups by id: nothing stored can have such an id, so they find nothing (e.g. 404 JOB_NOT_FOUND). */
const LOOKUPS = new Set(['getJob', 'getContribution']);
/** Writes of text the server produced (model output): made storable rather than refused. */
const PRODUCED = new Set(['finishJob', 'appendExchange', 'saveRecord', 'keepCouncil', 'addJobStage', 'addTensionSightings']);

/** A copy of plain data with every string (and key) storable; other values are kept as they are. */
export function storableText<T>(value: T): T {
  const fix = toWellFormedText;
  const copy = (item: unknown): unknown => {
    if (typeof item === 'string') return fix(item);
    if (Array.isArray(item)) return item.map(copy);
    if (item === null || typeof item !== 'object' || item instanceof Date) return item;
    return Object.fromEntries(Object.entries(item).map(([key, inner]) => [fix(key), copy(inner)]));
  };
  return copy(value) as T;
}

export function refusingIllFormedText(store: Store): Store {
  const wrapped: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(store) as [string, (...args: unknown[]) => Promise<unknown>][]) {
    wrapped[name] = (...args: unknown[]) => {
      const found = findIllFormedText(args, name);
      if (!found) return method(...args);
      if (LOOKUPS.has(name)) return Promise.resolve(undefined);
      if (PRODUCED.has(name)) return method(...args.map((arg) => storableText(arg)));
      return Promise.reject(new UnstorableTextError(found.field, found.problem));
    };
  }
  return wrapped as unknown as Store;
}
