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

/**
 * A copy of plain data with every string (and key) storable; other values are kept as they are.
 * Iterative, like findIllFormedText: the value may be a request body of any depth.
 */
export function storableText<T>(value: T): T {
  const fix = toWellFormedText;
  const plain = (item: unknown): item is object => item !== null && typeof item === 'object' && !(item instanceof Date);
  const copyOf = (item: object): unknown[] | Record<string, unknown> => (Array.isArray(item) ? [] : {});
  const scalar = (item: unknown): unknown => (typeof item === 'string' ? fix(item) : item);
  if (!plain(value)) return scalar(value) as T;
  const root = copyOf(value);
  // Each pending pair is a source container and its (still empty) copy.
  const pending: [object, unknown[] | Record<string, unknown>][] = [[value, root]];
  while (pending.length > 0) {
    const [source, target] = pending.pop()!;
    const entries: [string | number, unknown][] = Array.isArray(source) ? source.map((item, index) => [index, item]) : Object.entries(source);
    for (const [key, item] of entries) {
      const copied = plain(item) ? copyOf(item) : scalar(item);
      if (Array.isArray(target)) target[key as number] = copied;
      else Object.defineProperty(target, fix(key as string), { value: copied, enumerable: true, writable: true, configurable: true });
      if (plain(item)) pending.push([item, copied as unknown[] | Record<string, unknown>]);
    }
  }
  return root as T;
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
