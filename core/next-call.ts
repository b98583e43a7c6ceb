/**
 * suggested_next_call for refused GET parameters (spec §7: "a concrete next request").
 * A refusal names its mend (drop the parameter, keep its first value, put in a valid one);
 * the suggestion is the same GET mended, mended again while the parser still refuses it,
 * so that following it succeeds instead of meeting the next bad value.
 */
import { ApiError, type QueryRepair, type RawQuery, type SuggestedCall } from '../schemas/errors.ts';

/** A refusal mends at most one problem; a query has fewer parameters than this. */
const MAX_REPAIRS = 64;

export const without =
  (...names: string[]): QueryRepair =>
  (raw) =>
    Object.fromEntries(Object.entries(raw).filter(([name]) => !names.includes(name)));

export const withValue =
  (name: string, value: string): QueryRepair =>
  (raw) => ({ ...raw, [name]: value });

/** A repeated parameter keeps its first value. */
export const firstOf =
  (name: string): QueryRepair =>
  (raw) => {
    const value = raw[name];
    return Array.isArray(value) ? { ...raw, [name]: value[0] } : raw;
  };

/** At most `limit` UTF-16 units, never cutting a surrogate pair in two. */
export function truncate(value: string, limit: number): string {
  let out = '';
  for (const character of value) {
    if (out.length + character.length > limit) break;
    out += character;
  }
  return out;
}

function flatten(raw: RawQuery): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) out[name] = first;
  }
  return out;
}

export function getCall(path: string, raw: RawQuery = {}): SuggestedCall {
  const query = flatten(raw);
  return Object.keys(query).length > 0 ? { method: 'GET', path, query } : { method: 'GET', path };
}

/**
 * Runs a pure parameter parser. When it refuses with a mend, the error's suggested_next_call
 * becomes the same GET mended until the parser accepts it.
 */
export function parseOrSuggest<T>(path: string, raw: RawQuery, parse: (raw: RawQuery) => T): T {
  try {
    return parse(raw);
  } catch (error) {
    if (error instanceof ApiError && error.options.repair) {
      const suggestion = mended(path, raw, error.options.repair, parse);
      if (suggestion) error.options.suggestedNextCall = suggestion;
    }
    throw error;
  }
}

function mended<T>(path: string, raw: RawQuery, first: QueryRepair, parse: (raw: RawQuery) => T): SuggestedCall | undefined {
  let candidate = raw;
  let repair: QueryRepair | undefined = first;
  for (let step = 0; step < MAX_REPAIRS && repair; step++) {
    candidate = repair(candidate);
    try {
      parse(candidate);
      return getCall(path, candidate);
    } catch (error) {
      if (!(error instanceof ApiError)) return undefined;
      if (!error.options.repair) return error.options.suggestedNextCall ?? undefined;
      repair = error.options.repair;
    }
  }
  return undefined;
}
