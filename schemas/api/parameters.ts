/**
 * A query parameter as a route declares it: the zod schema /openapi.json documents and the
 * route table parses with (core/declared-query.ts), its example, and how a raw string is read
 * before the schema sees it. One declaration is the documentation, the parser and the error code.
 */
import { z } from 'zod';
import type { ErrorCode } from '../errors.ts';

export interface QueryParameter<N extends string = string, S extends z.ZodType = z.ZodType> {
  name: N;
  schema: S;
  description: string;
  required?: boolean;
  /** A comma list (style form, explode false): split on commas, parts trimmed, empty parts dropped, repeats dropped. */
  list?: boolean;
  example?: unknown;
  /** The code of a value the schema refuses (default INVALID_PARAMETER). */
  code?: ErrorCode;
  /** Surrounding white space is not part of the value. */
  trim?: boolean;
  /** A closed value (or list part) matches its accepted value whatever its case, and is read as that value. */
  caseInsensitive?: boolean;
  /** An empty (or blank) value reads as absent. */
  emptyIsAbsent?: boolean;
  /** A flag: its truthy spellings read as true, 0 and false as false. */
  flag?: boolean;
}

/** What a declared parameter reads as: a flag as a boolean, every other as its schema's output. */
type ValueOf<P> = P extends { flag: true } ? boolean : P extends QueryParameter<string, infer S> ? z.output<S> : never;

/** A required parameter and one with a default are always there; any other may be absent. */
type Present<P> = P extends { required: true }
  ? ValueOf<P>
  : P extends QueryParameter<string, infer S>
    ? undefined extends z.input<S>
      ? ValueOf<P>
      : ValueOf<P> | undefined
    : never;

/** The parsed query of a list of declarations, by name. */
export type ParsedQuery<Ps extends readonly QueryParameter[]> = { [P in Ps[number] as P['name']]: Present<P> };

type Options = Omit<QueryParameter, 'name' | 'schema' | 'description'>;

export function queryParameter<const N extends string, S extends z.ZodType, const O extends Options = Record<never, never>>(
  name: N,
  schema: S,
  description: string,
  options?: O,
): QueryParameter<N, S> & O {
  return { name, schema, description, ...(options ?? ({} as O)) };
}

/** A comma list of closed values. */
export const commaList = <const T extends readonly [string, ...string[]]>(values: T) => z.array(z.enum(values)).min(1);
/** A flag: one of the truthy spellings, 0 or false (a literal keeps the order; z.enum puts numeric strings first). */
export const flag = <const T extends readonly [string, ...string[]]>(truthy: T) => z.literal([...truthy, '0', 'false']);

/** A flag parameter: 1 or true (any case) reads as true, 0 or false as false; anything else is 400 INVALID_PARAMETER. */
export function flagParameter<const N extends string>(name: N, description: string) {
  return queryParameter(name, flag(['1', 'true']), description, { flag: true, caseInsensitive: true });
}

/**
 * The description of a closed parameter from its values: each value with what it means, in the
 * values' order ("a: meaning. b: meaning."). Typed by the values, so a value without a meaning
 * (or a meaning for a value the schema does not take) does not compile.
 */
export function valueMeanings<const V extends string>(values: readonly V[], meanings: Record<V, string>): string {
  return values.map((value) => `${value}: ${meanings[value]}`).join(' ');
}
