/**
 * The one parser of query parameters: a route's declarations (schemas/api/parameters.ts) read
 * a raw query into typed values, or refuse it with the code the declaration names. Unknown and
 * repeated parameters, missing required ones, and values the schema refuses all come from here,
 * each with a mend (core/next-call.ts) so that suggested_next_call is the same GET that succeeds.
 * The codes a declaration can produce are found by running this parser on generated invalid
 * queries (`declaredCodes`), so the document lists what the parser does, not what someone wrote.
 */
import { z } from 'zod';
import type { ParsedQuery, QueryParameter } from '../schemas/api/parameters.ts';
import { ApiError, apiError, type ErrorCode, type RawQuery } from '../schemas/errors.ts';
import { firstOf, truncate, withValue, without } from './next-call.ts';

export type { ParsedQuery, QueryParameter };

interface Constraints {
  type?: string;
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  default?: unknown;
  items?: Constraints;
  anyOf?: Constraints[];
}

const constraintCache = new WeakMap<z.ZodType, Constraints>();

/** The schema's constraints as JSON Schema states them (what /openapi.json shows). */
function constraintsOf(schema: z.ZodType): Constraints {
  let out = constraintCache.get(schema);
  if (!out) {
    out = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output', unrepresentable: 'any' }) as Constraints;
    // zod bounds every integer by the safe range; that is no bound a client needs to hear of.
    if (out.maximum === Number.MAX_SAFE_INTEGER) delete out.maximum;
    if (out.minimum === Number.MIN_SAFE_INTEGER) delete out.minimum;
    constraintCache.set(schema, out);
  }
  return out;
}

function closedOf(constraints: Constraints | undefined): string[] | undefined {
  if (!constraints) return undefined;
  if (constraints.enum) return constraints.enum.map(String);
  if (constraints.const !== undefined) return [String(constraints.const)];
  if (constraints.anyOf?.every((part) => part.const !== undefined)) return constraints.anyOf.map((part) => String(part.const));
  return undefined;
}

/** The values a closed parameter accepts (each part of a list, for a list); undefined for an open one. */
export function acceptedValues(parameter: QueryParameter): string[] | undefined {
  const constraints = constraintsOf(parameter.schema);
  return closedOf(constraints.type === 'array' ? constraints.items : constraints);
}

/** Parameters this path does not take: refused, so that no filter is silently ignored. */
export function rejectUnknown(raw: RawQuery, allowed: readonly string[], path: string): void {
  const unknown = Object.keys(raw).filter((name) => !allowed.includes(name));
  if (unknown.length === 0) return;
  throw apiError(
    'UNKNOWN_PARAMETER',
    `unknown parameter${unknown.length > 1 ? 's' : ''} ${unknown.map((name) => `"${name}"`).join(', ')} on ${path}`,
    allowed.length === 0
      ? `Remove ${unknown.length > 1 ? 'them' : 'it'}: ${path} takes no query parameters. Unknown parameters are rejected so that no filter is silently ignored.`
      : `Remove ${unknown.length > 1 ? 'them' : 'it'} or use one of: ${allowed.join(', ')}. Unknown parameters are rejected so that no filter is silently ignored.`,
    { details: { unknown, allowed }, repair: without(...unknown) },
  );
}

function rejectRepeated(raw: RawQuery, parameters: readonly QueryParameter[]): void {
  for (const { name } of parameters) {
    const value = raw[name];
    if (!Array.isArray(value)) continue;
    throw apiError(
      'PARAM_REPEATED',
      `parameter "${name}" was given ${value.length} times`,
      `Send "${name}" once; join several values with commas where the parameter takes a list.`,
      { repair: firstOf(name) },
    );
  }
}

/** The example of a parameter: the deployment's (a real question, a real concept), else the declaration's. */
function exampleOf(parameter: QueryParameter, examples: Record<string, string>): string {
  const example = examples[parameter.name] ?? parameter.example;
  if (Array.isArray(example)) return example.map(String).join(',');
  if (example !== undefined) return String(example);
  return acceptedValues(parameter)?.[0] ?? 'x';
}

function missing(parameter: QueryParameter, path: string, example: string): ApiError {
  return apiError(
    'PARAM_MISSING',
    `${parameter.name} is missing or empty`,
    `Resend with ${parameter.name} set (${parameter.description.replace(/\.$/, '')}), e.g. GET ${path}?${parameter.name}=${encodeURIComponent(example)}.`,
    { extra: { param_missing: true }, repair: withValue(parameter.name, example) },
  );
}

/** The raw string as the schema reads it: trimmed, split into a list, a number, a closed value in its own case. */
function coerce(parameter: QueryParameter, value: string): unknown {
  const text = parameter.trim ? value.trim() : value;
  const accepted = acceptedValues(parameter);
  const canonical = (part: string) =>
    parameter.caseInsensitive && accepted ? (accepted.find((candidate) => candidate.toLowerCase() === part.toLowerCase()) ?? part) : part;
  if (parameter.list) {
    const parts = text
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part.length > 0)
      .map(canonical);
    return [...new Set(parts)];
  }
  const constraints = constraintsOf(parameter.schema);
  if (constraints.type === 'number' || constraints.type === 'integer') return /^\d+$/.test(text) ? Number(text) : Number.NaN;
  return canonical(text);
}

function invalid(parameter: QueryParameter, value: string, coerced: unknown, error: z.ZodError, example: string): ApiError {
  const { name } = parameter;
  const code: ErrorCode = parameter.code ?? 'INVALID_PARAMETER';
  // A required parameter is mended with a valid value; an optional one is left out.
  const mend = parameter.required ? withValue(name, example) : without(name);
  const accepted = acceptedValues(parameter);
  const constraints = constraintsOf(parameter.schema);
  if (accepted) {
    const parts = Array.isArray(coerced) ? coerced.map(String) : [String(coerced)];
    const unknown = parts.filter((part) => !accepted.includes(part));
    const message =
      parts.length === 0
        ? `parameter "${name}" is empty`
        : parameter.list
          ? `unknown value${unknown.length > 1 ? 's' : ''} ${unknown.map((part) => `"${part}"`).join(', ')} in "${name}"`
          : `unknown ${name} "${value}"`;
    const action = parameter.list
      ? `Use a comma list of: ${accepted.join(', ')}. Scoping parameters are never silently ignored.`
      : `Use ${name}=${accepted.join(`, ${name}=`)}, or leave it out.`;
    return apiError(code, message, action, { details: { parameter: name, ...(parameter.list ? { unknown } : {}), allowed: accepted }, repair: mend });
  }
  if (constraints.type === 'number' || constraints.type === 'integer') {
    const minimum = constraints.minimum ?? 0;
    const bounded = constraints.maximum !== undefined;
    const absent = constraints.default !== undefined ? `, or leave it out for ${String(constraints.default)}` : ', or leave it out';
    return apiError(
      code,
      `${name} must be an integer ${bounded ? `from ${minimum} to ${constraints.maximum}` : `of at least ${minimum}`}, got "${value}"`,
      `Send ${name} ${bounded ? `between ${minimum} and ${constraints.maximum}` : `of at least ${minimum}`}${absent}.`,
      {
        details: {
          parameter: name,
          ...(constraints.minimum !== undefined ? { minimum: constraints.minimum } : {}),
          ...(constraints.maximum !== undefined ? { maximum: constraints.maximum } : {}),
        },
        repair: mend,
      },
    );
  }
  const tooBig = error.issues.find((issue) => issue.code === 'too_big');
  if (tooBig && typeof coerced === 'string') {
    const limit = Number(tooBig.maximum);
    return apiError(code, `${name} is ${coerced.length} characters; the limit is ${limit}`, `Shorten ${name} to at most ${limit} characters.`, {
      details: { parameter: name, limit },
      repair: withValue(name, truncate(coerced, limit)),
    });
  }
  if (typeof coerced === 'string' && coerced.trim() === '') {
    return apiError(code, `"${name}" is empty`, `Send a value for ${name} (${parameter.description.replace(/\.$/, '')}), or leave it out.`, {
      details: { parameter: name },
      repair: mend,
    });
  }
  return apiError(
    code,
    `${name} is invalid: ${error.issues.map((issue) => issue.message).join('; ')}`,
    `Fix ${name} (${parameter.description.replace(/\.$/, '')}), or leave it out.`,
    {
      details: { parameter: name },
      repair: mend,
    },
  );
}

export interface DeclaredQueryOptions {
  /** The path, as named in messages. */
  path: string;
  /** The deployment's example value of a parameter (core/examples.ts), used to mend a missing or invalid required one. */
  examples?: Record<string, string>;
}

/**
 * Reads `raw` with the declarations: unknown names first, then repeats, then each parameter in
 * declaration order (missing when required and absent or blank, refused when its schema refuses
 * it). Absent optional parameters read as their schema's default, or undefined.
 */
export function parseDeclaredQuery<const Ps extends readonly QueryParameter[]>(parameters: Ps, raw: RawQuery, options: DeclaredQueryOptions): ParsedQuery<Ps> {
  rejectUnknown(
    raw,
    parameters.map((parameter) => parameter.name),
    options.path,
  );
  rejectRepeated(raw, parameters);
  const out: Record<string, unknown> = {};
  for (const parameter of parameters) {
    const value = raw[parameter.name] as string | undefined;
    const example = exampleOf(parameter, options.examples ?? {});
    const absent = value === undefined || ((parameter.emptyIsAbsent || parameter.required) && value.trim() === '');
    if (absent) {
      if (parameter.required) throw missing(parameter, options.path, example);
      const fallback = parameter.schema.safeParse(undefined);
      out[parameter.name] = fallback.success ? fallback.data : undefined;
      continue;
    }
    const coerced = coerce(parameter, value);
    // A blank value is refused when the schema refuses an empty one (a string of at least one character).
    const parsed =
      typeof coerced === 'string' && coerced.trim() === '' && !parameter.schema.safeParse('').success
        ? parameter.schema.safeParse('')
        : parameter.schema.safeParse(coerced);
    if (!parsed.success) throw invalid(parameter, value, coerced, parsed.error, example);
    out[parameter.name] = parameter.flag ? parsed.data !== '0' && parsed.data !== 'false' : parsed.data;
  }
  return out as ParsedQuery<Ps>;
}

/** A value the declaration accepts: its example, its first accepted value, its minimum. */
export function validValue(parameter: QueryParameter): string {
  const accepted = acceptedValues(parameter);
  if (parameter.example !== undefined) return Array.isArray(parameter.example) ? parameter.example.map(String).join(',') : String(parameter.example);
  if (accepted) return accepted[0]!;
  const constraints = constraintsOf(parameter.schema);
  if (constraints.type === 'number' || constraints.type === 'integer') return String(constraints.minimum ?? 1);
  return 'x';
}

/** The required parameters with valid values: the smallest query the declarations accept. */
export function minimalQuery(parameters: readonly QueryParameter[]): Record<string, string> {
  return Object.fromEntries(parameters.filter((parameter) => parameter.required).map((parameter) => [parameter.name, validValue(parameter)]));
}

/** Values the declaration refuses (or reads as absent): what a client gets wrong. */
export function invalidValues(parameter: QueryParameter): string[] {
  const constraints = constraintsOf(parameter.schema);
  const accepted = acceptedValues(parameter);
  const out = ['', ' '];
  if (accepted) out.push('undocumented-value', parameter.list ? `${accepted[0]},undocumented-value` : `${accepted[0]}x`);
  if (constraints.type === 'number' || constraints.type === 'integer') {
    out.push('x', '1.5', '-1', String((constraints.minimum ?? 0) - 1), String((constraints.maximum ?? 1e9) + 1));
  }
  if (constraints.maxLength !== undefined) out.push('a'.repeat(constraints.maxLength + 1));
  // A value off its pattern: a good one with a character added (a revision one digit too long).
  if (constraints.pattern !== undefined) out.push(`${validValue(parameter)}~`);
  return out;
}

/**
 * Generated invalid queries of an operation, each a full query, valid but for its one fault;
 * `valid` is the good query they start from (default: the declarations' own examples).
 */
export function invalidQueries(parameters: readonly QueryParameter[], valid: Record<string, string> = minimalQuery(parameters)): RawQuery[] {
  const out: RawQuery[] = [{ ...valid, 'undeclared-parameter': '1' }];
  for (const parameter of parameters) {
    const value = validValue(parameter);
    out.push({ ...valid, [parameter.name]: [value, value] });
    if (parameter.required) {
      const { [parameter.name]: _dropped, ...rest } = valid;
      out.push(rest);
    }
    for (const bad of invalidValues(parameter)) out.push({ ...valid, [parameter.name]: bad });
  }
  return out;
}

/** The codes the declarations produce on generated invalid queries: what the parser can answer. */
export function declaredCodes(parameters: readonly QueryParameter[] | undefined): ErrorCode[] {
  if (parameters === undefined) return [];
  const codes = new Set<ErrorCode>();
  for (const query of invalidQueries(parameters)) {
    try {
      parseDeclaredQuery(parameters, query, { path: '' });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      codes.add(error.code as ErrorCode);
    }
  }
  return [...codes];
}
