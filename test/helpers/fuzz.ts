/**
 * Contract fuzzing from /openapi.json (issue 7). Everything here is derived from the served
 * document: the operations (paths × methods), their parameters and request bodies, the
 * statuses and error codes each may answer. Requests are generated with fast-check
 * arbitraries (valid values, missing, mistyped, extra and over-long fields, malformed JSON,
 * wrong content types, oversized bodies, hostile unicode, bad auth, repeated and unknown
 * parameters, wrong methods), sent to the in-process app over a loopback socket with
 * supertest, and every response is judged by the same oracles:
 *
 *   - no 5xx, except the 502/503 the configuration makes expected (precise: status + code);
 *   - the status is documented for the operation, the body validates against its schema
 *     (test/helpers/openapi.ts), required response headers are present;
 *   - every 4xx/5xx JSON body is the §7 envelope (JSON-RPC errors only where documented);
 *   - no stack trace and no internal path in any body;
 *   - 405 carries Allow with the documented methods, 429 carries Retry-After;
 *   - a URL over 8192 bytes is 414 URI_TOO_LONG, a JSON body over 64 kB is 413, one nested
 *     past 64 levels 400 (checked in that order, before the text and the schema).
 *
 * Seeds are drawn per run (FUZZ_SEEDS=<a,b,c> replays given ones) and printed with each test.
 *
 * Failures are collected (not thrown inside the property, so every run is sent and every
 * distinct problem is reported once with its smallest reproduction).
 */
import { Buffer } from 'node:buffer';
import { randomInt } from 'node:crypto';
import { request as httpRequest, type Server } from 'node:http';
import { connect as netConnect, type AddressInfo } from 'node:net';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import fc from 'fast-check';
import request from 'supertest';
import { findIllFormedText } from '../../core/well-formed-text.ts';
import type { OpenApiValidator } from './openapi.ts';

export type Json = Record<string, unknown>;

export const MAX_URL_BYTES = 8192;
export const MAX_JSON_BODY_BYTES = 64 * 1024;
export const MAX_BODY_DEPTH = 64;

/**
 * The seeds of this run: FUZZ_SEEDS (comma-separated integers) replays a failing run; without
 * it, three are drawn afresh each run, so every run explores new requests. Test names and the
 * suites' summaries print them.
 */
export function chooseSeeds(env: string | undefined = process.env.FUZZ_SEEDS, count = 3): number[] {
  if (env === undefined || env.trim() === '') return Array.from({ length: count }, () => randomInt(1, 2 ** 31 - 1));
  const seeds = env.split(',').map((item) => Number(item.trim()));
  if (seeds.some((seed) => !Number.isSafeInteger(seed))) throw new Error(`FUZZ_SEEDS=${env}: expected comma-separated integers`);
  return seeds;
}

export const SEEDS: readonly number[] = chooseSeeds();
export const RUNS_PER_SEED = 200;

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------

/** UTF-8 bytes of a JS string, lone surrogates written as their 3-byte (WTF-8) form: U+D800 → ED A0 80. */
export function wtf8(text: string): Buffer {
  const bytes: number[] = [];
  for (let index = 0; index < text.length; index++) {
    let cp = text.charCodeAt(index);
    if (cp >= 0xd800 && cp <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (next - 0xdc00);
        index++;
      }
    }
    if (cp < 0x80) bytes.push(cp);
    else if (cp < 0x800) bytes.push(0xc0 | (cp >> 6), 0x80 | (cp & 63));
    else if (cp < 0x10000) bytes.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
    else bytes.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
  }
  return Buffer.from(bytes);
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/** Percent-encodes every byte but the unreserved ones; lone surrogates become %ED%A0%80-style raw bytes. */
export function percentEncode(text: string, plusForSpace = false): string {
  let out = '';
  for (const byte of wtf8(text)) {
    const char = String.fromCharCode(byte);
    if (byte < 0x80 && UNRESERVED.test(char)) out += char;
    else if (byte === 0x20 && plusForSpace) out += '+';
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** JSON text whose escaped lone surrogates (\ud800) are turned back into raw code units, for a WTF-8 body. */
function unescapeLoneSurrogates(json: string): string {
  return json.replace(
    /(?<!\\)((?:\\\\)*)\\u(d[89a-f][0-9a-f]{2})/gi,
    (_match, slashes: string, hex: string) => slashes + String.fromCharCode(parseInt(hex, 16)),
  );
}

export type BodyEncoding = 'json' | 'wtf8' | 'pretty' | 'bom';

export function encodeJson(value: unknown, encoding: BodyEncoding): Buffer {
  switch (encoding) {
    case 'json':
      return Buffer.from(JSON.stringify(value) ?? 'null', 'utf8');
    case 'pretty':
      return Buffer.from(JSON.stringify(value, null, 2) ?? 'null', 'utf8');
    case 'bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(value) ?? 'null', 'utf8')]);
    case 'wtf8':
      return wtf8(unescapeLoneSurrogates(JSON.stringify(value) ?? 'null'));
  }
}

// ---------------------------------------------------------------------------------------
// Hostile strings
// ---------------------------------------------------------------------------------------

/** Building blocks of hostile text: NUL and controls, lone surrogates, bidi overrides, zero-width, combining marks, emoji, case-folding traps, injection-looking text. */
export const HOSTILE_ATOMS: readonly string[] = [
  '\u0000',
  'a\u0000b',
  '\u0001',
  '\u001b[2J',
  '\u007f',
  '\u0085',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  'x\ud83d',
  '\ude00y',
  '\u202e',
  '\u202d',
  '\u2066',
  '\u200f',
  '\u061c',
  'abc\u202edcba',
  '\u200b',
  '\u200c',
  '\u200d',
  '\u2060',
  '\ufeff',
  '\u00ad',
  '\u180e',
  '\u0301',
  'e\u0301\u0302\u0303\u0304',
  'Z\u0351\u0352\u0357\u035b\u0300\u0301\u0316\u0317',
  '\u2028',
  '\u2029',
  '\r\n',
  '\n',
  '\t',
  '\u000b',
  '\u000c',
  '😀',
  '👩‍👩‍👧‍👦',
  '🏳️‍🌈',
  '🇺🇳',
  '𝕏𝔂𝕫',
  '\u{10ffff}',
  '\u{e0001}',
  '\uffff',
  '\ufffe',
  '\ufffd',
  'İ',
  'ß',
  'ﬃ',
  'ǅ',
  'ﷺ',
  'Ξ',
  '∅',
  'Δ',
  '∞',
  '\u0e01\u0e34\u0e4a',
  'عربى',
  'עברית',
  '中文',
  '한국어',
  '<script>alert(1)</script>',
  '"',
  "'",
  '\\',
  '`',
  '${process.env.HOME}',
  '{{constructor.constructor}}',
  '%00',
  '%ED%A0%80',
  '%',
  '%%',
  '+',
  '&',
  '=',
  '#',
  '?',
  '/',
  ';',
  ',',
  '..',
  '../../../../etc/passwd',
  '..\\..\\boot.ini',
  "' OR '1'='1",
  '__proto__',
  'constructor',
  'NaN',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  ' ',
  '   ',
];

function truncateUnits(text: string, maxUnits: number): string {
  return text.length <= maxUnits ? text : text.slice(0, maxUnits);
}

export function hostileString(maxUnits = 80): fc.Arbitrary<string> {
  const part = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_ATOMS) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 4 }) },
    { weight: 2, arbitrary: fc.constantFrom('refusal', 'tide', 'What is ', 'owned', 'TST-D1', 'Alder') },
  );
  return fc
    .array(part, { minLength: 1, maxLength: 8 })
    .map((parts) => truncateUnits(parts.join(''), Math.max(1, maxUnits)))
    .filter((text) => text.length > 0);
}

/** Hostile atoms spliced into a clean value (prefix, suffix or middle). */
function spliceHostile(clean: fc.Arbitrary<string>, maxUnits: number): fc.Arbitrary<string> {
  return fc.tuple(clean, fc.constantFrom(...HOSTILE_ATOMS), fc.constantFrom('prefix', 'suffix', 'middle')).map(([value, atom, where]) => {
    const middle = Math.floor(value.length / 2);
    const spliced = where === 'prefix' ? atom + value : where === 'suffix' ? value + atom : value.slice(0, middle) + atom + value.slice(middle);
    return truncateUnits(spliced, maxUnits);
  });
}

// ---------------------------------------------------------------------------------------
// The document
// ---------------------------------------------------------------------------------------

export interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header';
  required: boolean;
  schema: Json;
  /** style form, explode false: a comma-joined list. */
  list: boolean;
}

export interface Operation {
  id: string;
  method: 'GET' | 'POST';
  template: string;
  tags: string[];
  parameters: Parameter[];
  body?: { schema: Json; required: boolean };
  /** Methods documented on the path (uppercase), e.g. ['GET', 'POST']. */
  pathMethods: string[];
  /** The path documents a 405 (an API route); static files do not. */
  has405: boolean;
  /** Documented statuses → documented error codes (x-error-codes). */
  codes: Map<number, string[]>;
  statuses: string[];
  security: boolean;
}

const DOC_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export function operationsOf(document: Json): Operation[] {
  const out: Operation[] = [];
  for (const [template, item] of Object.entries(document.paths as Record<string, Json>)) {
    const pathMethods = DOC_METHODS.filter((method) => isObject(item[method])).map((method) => method.toUpperCase());
    for (const method of DOC_METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      const responses = operation.responses as Record<string, Json>;
      const codes = new Map<number, string[]>();
      for (const [status, response] of Object.entries(responses)) {
        if (Array.isArray(response['x-error-codes'])) codes.set(Number(status), response['x-error-codes'] as string[]);
      }
      const requestBody = operation.requestBody as Json | undefined;
      const bodySchema =
        requestBody && isObject(requestBody.content) ? ((requestBody.content as Json)['application/json'] as Json | undefined)?.schema : undefined;
      out.push({
        id: String(operation.operationId),
        method: method.toUpperCase() as Operation['method'],
        template,
        tags: (operation.tags as string[]) ?? [],
        parameters: ((operation.parameters as Json[]) ?? []).map((parameter) => ({
          name: String(parameter.name),
          in: parameter.in as Parameter['in'],
          required: parameter.required === true,
          schema: (parameter.schema as Json) ?? {},
          list: parameter.style === 'form' && parameter.explode === false,
        })),
        ...(isObject(bodySchema) ? { body: { schema: bodySchema, required: requestBody?.required === true } } : {}),
        pathMethods,
        has405: Object.values(item).some((candidate) => isObject(candidate) && isObject(candidate.responses) && isObject((candidate.responses as Json)['405'])),
        codes,
        statuses: Object.keys(responses),
        security: Array.isArray(operation.security),
      });
    }
  }
  return out;
}

/** Error codes of the catalogue with their status. */
export function catalogueOf(document: Json): Map<string, number> {
  return new Map(((document['x-error-catalogue'] as { code: string; status: number }[]) ?? []).map((entry) => [entry.code, entry.status]));
}

// ---------------------------------------------------------------------------------------
// Context
// ---------------------------------------------------------------------------------------

export interface FuzzConfig {
  /** A short name for summaries, e.g. "live" or "no-panel". */
  name: string;
  /** Whether a 5xx with this code is what this configuration makes expected on this operation. */
  expected5xx(status: number, code: string | undefined, operation: Operation): boolean;
  /** The ingestion secret the app was given, if any (persisting a council). */
  ingestSecret?: string;
  /** A live panel is wired. */
  live: boolean;
  /** Every model of the panel fails (502 PROVIDER_FAILED / NOT_PERSISTABLE are then expected on live paths). */
  providerDown?: boolean;
  /** The app runs its default rate limits: a request that would succeed may get 429 RATE_LIMITED. */
  rateLimited?: boolean;
}

export interface McpTool {
  name: string;
  inputSchema: Json;
}

export interface FuzzContext {
  document: Json;
  validator: OpenApiValidator;
  catalogue: Map<string, number>;
  config: FuzzConfig;
  /** Values that mean something to this corpus, by `operationId.name` or `name` (ids, slugs, questions). */
  hints: Record<string, readonly unknown[]>;
  /** Partial parameter sets (or bodies) to start from, by operationId: the deep forms of an operation. */
  presets: Record<string, readonly Json[]>;
  mcpTools: McpTool[];
  /** Job ids seen in 202 answers; `{{job:N}}` in a parameter picks one. */
  jobIds: string[];
  /** Absolute paths that must never appear in a body (repo, artifacts, content, temp dirs). */
  internalPaths: string[];
}

export function createContext(options: Omit<FuzzContext, 'catalogue' | 'jobIds'>): FuzzContext {
  return { ...options, catalogue: catalogueOf(options.document), jobIds: [] };
}

function resolve(context: FuzzContext, schema: Json): Json {
  let current = schema;
  for (let depth = 0; depth < 10 && typeof current.$ref === 'string'; depth++) {
    const name = (current.$ref as string).replace('#/components/schemas/', '');
    const { $ref: _ignored, ...rest } = current;
    current = { ...(((context.document.components as Json).schemas as Json)[name] as Json), ...rest };
  }
  return current;
}

function hintFor(context: FuzzContext, operation: string, name: string): readonly unknown[] {
  return context.hints[`${operation}.${name}`] ?? context.hints[name] ?? [];
}

// ---------------------------------------------------------------------------------------
// Values from schemas
// ---------------------------------------------------------------------------------------

type Mode = 'clean' | 'hostile';

function typeOf(schema: Json): string | undefined {
  if (typeof schema.type === 'string') return schema.type;
  if ('const' in schema) return typeof schema.const === 'string' ? 'string' : typeof schema.const;
  if (Array.isArray(schema.enum)) return typeof schema.enum[0] === 'string' ? 'string' : typeof schema.enum[0];
  return undefined;
}

function stringValue(schema: Json, hints: readonly unknown[], mode: Mode): fc.Arbitrary<string> {
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : 400;
  const fits = (value: string) => value.length >= min && value.length <= max;
  if (typeof schema.pattern === 'string') {
    const pattern = new RegExp(schema.pattern);
    const generated = fc.stringMatching(pattern).filter((value) => fits(value) && value.length <= 140);
    // Hints that fit the pattern too (a revision the deployment holds), so valid requests also succeed.
    const fitting = hints.filter((value): value is string => typeof value === 'string' && pattern.test(value) && fits(value));
    const clean = fitting.length > 0 ? fc.oneof(generated, fc.constantFrom(...fitting)) : generated;
    return mode === 'clean' ? clean : fc.oneof(clean, hostileString(Math.min(max, 80)));
  }
  const hinted = hints.filter((value): value is string => typeof value === 'string' && fits(value));
  const cleanOptions: fc.WeightedArbitrary<string>[] = [
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: Math.max(min, 1), maxLength: Math.min(max, 30) }) },
  ];
  if (hinted.length > 0) cleanOptions.push({ weight: 6, arbitrary: fc.constantFrom(...hinted) });
  const clean = fc.oneof(...cleanOptions).filter(fits);
  if (mode === 'clean') return clean;
  return fc.oneof({ weight: 2, arbitrary: hostileString(Math.min(max, 80)) }, { weight: 2, arbitrary: spliceHostile(clean, max) }).filter(fits);
}

/** A value the schema accepts (in `hostile` mode its strings carry hostile unicode, still within the length limits). */
export function validValue(context: FuzzContext, operation: string, name: string, schema: Json, mode: Mode, depth = 0): fc.Arbitrary<unknown> {
  const resolved = resolve(context, schema);
  const hints = hintFor(context, operation, name);
  if ('const' in resolved) return fc.constant(resolved.const);
  if (Array.isArray(resolved.enum)) return fc.constantFrom(...(resolved.enum as unknown[]));
  const union = (resolved.anyOf ?? resolved.oneOf) as Json[] | undefined;
  if (Array.isArray(union)) return fc.oneof(...union.map((inner) => validValue(context, operation, name, inner, mode, depth + 1)));
  switch (typeOf(resolved)) {
    case 'string':
      return stringValue(resolved, hints, mode);
    case 'integer': {
      const min = typeof resolved.minimum === 'number' ? resolved.minimum : -1000;
      const max = typeof resolved.maximum === 'number' ? resolved.maximum : 1000;
      const hinted = hints.filter((value): value is number => typeof value === 'number' && value >= min && value <= max);
      return hinted.length > 0
        ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...hinted) }, { weight: 1, arbitrary: fc.integer({ min, max }) })
        : fc.integer({ min, max });
    }
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 });
    case 'boolean':
      return hints.length > 0 ? fc.constantFrom(...hints) : fc.boolean();
    case 'array': {
      const items = (resolved.items as Json) ?? {};
      const minItems = typeof resolved.minItems === 'number' ? resolved.minItems : 0;
      const maxItems = Math.min(typeof resolved.maxItems === 'number' ? resolved.maxItems : 4, 4);
      return fc.array(validValue(context, operation, name, items, mode, depth + 1), { minLength: minItems, maxLength: Math.max(minItems, maxItems) });
    }
    case 'object': {
      const properties = (resolved.properties as Record<string, Json>) ?? {};
      if (Object.keys(properties).length === 0 || depth > 4) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
      const required = (resolved.required as string[]) ?? [];
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, inner] of Object.entries(properties)) model[key] = validValue(context, operation, key, inner, mode, depth + 1);
      return fc.record(model, { requiredKeys: required });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A value of a different JSON type than the schema wants. */
function mistypedValue(context: FuzzContext, schema: Json): fc.Arbitrary<unknown> {
  const type = typeOf(resolve(context, schema));
  const all: unknown[] = [0, -1, 1.5, 1e308, true, false, null, [], ['x'], {}, { a: 1 }, '', 'x', '1', 'true', '\u0000'];
  const wrong = all.filter((value) => {
    switch (type) {
      case 'string':
        return typeof value !== 'string';
      case 'integer':
      case 'number':
        return typeof value !== 'number';
      case 'boolean':
        return typeof value !== 'boolean';
      case 'array':
        return !Array.isArray(value);
      case 'object':
        return !isObject(value);
      default:
        return false;
    }
  });
  return fc.constantFrom(...(wrong.length > 0 ? wrong : all));
}

/** Values a query parameter of this schema rejects or must handle: wrong types, case, spacing, empties. */
function mistypedParameter(context: FuzzContext, parameter: Parameter): fc.Arbitrary<string> {
  const schema = resolve(context, parameter.schema);
  const type = typeOf(schema);
  const common = ['', ' ', ',', 'null', 'undefined', '[]', '{}', '\u0000', '%'];
  if (type === 'integer') {
    const max = typeof schema.maximum === 'number' ? schema.maximum : 100;
    return fc.constantFrom(
      ...common,
      'abc',
      '1.5',
      '-1',
      '0',
      '1e2',
      '0x10',
      ' 3',
      '3 ',
      '+3',
      '٣',
      '３',
      '99999999999999999999999',
      'NaN',
      'Infinity',
      '3abc',
      String(max + 1),
      '007',
      '1,2',
    );
  }
  if (type === 'array') {
    const items = resolve(context, (schema.items as Json) ?? {});
    const first = Array.isArray(items.enum) ? String(items.enum[0]) : 'x';
    return fc.constantFrom(
      ...common,
      'everything',
      `${first},,`,
      first.toUpperCase(),
      `${first},bogus`,
      ` ${first} `,
      `${first};${first}`,
      `${first}%2C${first}`,
    );
  }
  if (Array.isArray(schema.enum)) {
    const first = String(schema.enum[0]);
    return fc.constantFrom(
      ...common,
      'bogus',
      first.toUpperCase(),
      first.toLowerCase(),
      ` ${first} `,
      `${first},${first}`,
      `${first}\u200b`,
      `${first}\u0000`,
      'yes',
      'on',
      '2',
      '-1',
    );
  }
  return fc.constantFrom(...common, 'x', '\t', '\u200b', '\u202e');
}

// ---------------------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------------------

export type Category =
  | 'valid'
  | 'head'
  | 'hostile'
  | 'missing'
  | 'mistyped'
  | 'extra'
  | 'overlong'
  | 'url-too-long'
  | 'repeated'
  | 'unknown-param'
  | 'wrong-method'
  | 'preflight'
  | 'path-variant'
  | 'headers'
  | 'malformed-json'
  | 'content-type'
  | 'oversized-body'
  | 'bad-auth'
  | 'idempotency-key'
  | 'repeated-headers'
  | 'hostile-deep';

export interface Expectation {
  statuses: number[];
  codes?: string[];
  why: string;
  /** The document does not order this check before the live-panel check: an expected 5xx of the configuration also satisfies it. */
  orUnavailable?: boolean;
}

export interface FuzzCase {
  operation: string;
  category: Category;
  method: string;
  /** Encoded path. */
  path: string;
  /** Encoded name=value pairs (value undefined: a bare name); `{{job:N}}` is filled in when sent. */
  query: [string, string | undefined][];
  headers: [string, string][];
  body?: Buffer;
  expect?: Expectation;
  note: string;
}

type Params = Record<string, unknown>;

function encodeParameter(parameter: Parameter | undefined, value: unknown): string {
  if (Array.isArray(value) && (parameter?.list ?? true)) return value.map((item) => String(item)).join(',');
  return String(value);
}

function queryPairs(operation: Operation, params: Params, plus: boolean): [string, string][] {
  const pairs: [string, string][] = [];
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    const parameter = operation.parameters.find((candidate) => candidate.name === name && candidate.in === 'query');
    const text = encodeParameter(parameter, value);
    pairs.push([percentEncode(name, plus), text.startsWith('{{job') ? text : percentEncode(text, plus)]);
  }
  return pairs;
}

function fillPath(operation: Operation, pathValues: Record<string, string>): string {
  return operation.template.replace(/\{([^}]+)\}/g, (_match, name: string) => percentEncode(pathValues[name] ?? 'x'));
}

const maybe = <T>(arbitrary: fc.Arbitrary<T>, weightPresent = 1, weightAbsent = 3): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: weightAbsent, arbitrary: fc.constant(undefined) }, { weight: weightPresent, arbitrary: arbitrary });

/** Query parameters, header parameters and path values that the document accepts. */
function validParams(context: FuzzContext, operation: Operation, mode: Mode): fc.Arbitrary<{ query: Params; headers: Params; path: Record<string, string> }> {
  const query: Record<string, fc.Arbitrary<unknown>> = {};
  const headers: Record<string, fc.Arbitrary<unknown>> = {};
  const pathValues: Record<string, fc.Arbitrary<string>> = {};
  for (const parameter of operation.parameters) {
    const value = validValue(context, operation.id, parameter.name, parameter.schema, mode);
    if (parameter.in === 'path') pathValues[parameter.name] = value.map(String).filter((text) => text.length > 0);
    else if (parameter.in === 'header') headers[parameter.name] = maybe(value, 1, 2);
    else query[parameter.name] = parameter.required ? value : maybe(value, 1, 4);
  }
  const generated = fc.record({ query: fc.record(query), headers: fc.record(headers), path: fc.record(pathValues) });
  const presets = context.presets[operation.id]?.filter((preset) => !('__body' in preset)) ?? [];
  if (presets.length === 0) return generated;
  return fc.oneof(
    { weight: 2, arbitrary: generated },
    {
      weight: 3,
      arbitrary: fc
        .tuple(generated, fc.constantFrom(...presets))
        .map(([base, preset]) => ({ ...base, query: { ...requiredOnly(base.query, operation), ...preset } })),
    },
  );
}

/** Only the required parameters of a generated set (presets bring their own). */
function requiredOnly(query: Params, operation: Operation): Params {
  return Object.fromEntries(Object.entries(query).filter(([name]) => operation.parameters.find((parameter) => parameter.name === name)?.required));
}

function bodyPresets(context: FuzzContext, operation: Operation): Json[] {
  return (context.presets[operation.id] ?? []).filter((preset) => '__body' in preset).map((preset) => preset.__body as Json);
}

function validBody(context: FuzzContext, operation: Operation, mode: Mode): fc.Arbitrary<unknown> {
  if (operation.id === 'mcpPost') return mcpBody(context, mode);
  const generated = validValue(context, operation.id, '(body)', operation.body!.schema, mode);
  const presets = bodyPresets(context, operation);
  if (presets.length === 0) return generated;
  return fc.oneof(
    { weight: 2, arbitrary: generated },
    { weight: 1, arbitrary: fc.tuple(generated, fc.constantFrom(...presets)).map(([base, preset]) => ({ ...(base as Json), ...preset })) },
  );
}

const JSON_TYPE = ['Content-Type', 'application/json'] as [string, string];

function requestBase(operation: Operation, params: { query: Params; headers: Params; path: Record<string, string> }, plus: boolean) {
  return {
    path: fillPath(operation, params.path),
    query: queryPairs(operation, params.query, plus) as [string, string | undefined][],
    headers: Object.entries(params.headers)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => [name, String(value)] as [string, string])
      .filter(([, value]) => isSendableHeader(value)),
  };
}

/** Node's client refuses header values outside tab, visible ASCII and latin-1 (and CR, LF, NUL). */
export function isSendableHeader(value: string): boolean {
  for (const char of value) {
    const code = char.codePointAt(0)!;
    if (!(code === 9 || (code >= 0x20 && code <= 0x7e) || (code >= 0x80 && code <= 0xff))) return false;
  }
  return true;
}

function jsonCase(
  operation: Operation,
  category: Category,
  base: ReturnType<typeof requestBase>,
  body: unknown,
  encoding: BodyEncoding,
  note: string,
  expect?: Expectation,
): FuzzCase {
  return {
    operation: operation.id,
    category,
    method: operation.method,
    ...base,
    headers: [JSON_TYPE, ...base.headers],
    body: encodeJson(body, encoding),
    note,
    ...(expect ? { expect } : {}),
  };
}

const encodings = fc.constantFrom<BodyEncoding>('json', 'json', 'wtf8', 'pretty', 'bom');

/** Headers an ordinary client sends, to be sent twice with the case's own. */
const DOUBLED_HEADERS: [string, string][] = [
  ['Accept', 'application/json'],
  ['Accept-Encoding', 'gzip'],
  ['User-Agent', 'fuzz/1'],
  ['X-Forwarded-For', '203.0.113.7'],
  ['Origin', 'http://localhost:4321'],
  ['Cookie', 'a=b'],
  ['If-None-Match', '"x"'],
  ['Cache-Control', 'no-cache'],
  ['Accept-Language', 'en'],
  ['Mcp-Session-Id', 'fuzz'],
];

/** A different second value for a repeated header. */
function secondValue(name: string, value: string): string {
  switch (name.toLowerCase()) {
    case 'content-type':
      return 'text/plain';
    case 'authorization':
      return 'Bearer wrong';
    case 'idempotency-key':
      return `${value}-other`;
    case 'origin':
      return 'https://evil.example';
    default:
      return `${value}2`;
  }
}

/** Every kind of request for one operation. */
export function caseArbitrary(context: FuzzContext, operation: Operation): fc.Arbitrary<FuzzCase> {
  const options: fc.WeightedArbitrary<FuzzCase>[] = [];
  // fast-check wants integer weights; the ones below are in quarters.
  const add = (weight: number, arbitrary: fc.Arbitrary<FuzzCase>) =>
    options.push({ weight: Math.round(weight * 4), arbitrary: securedCase(context, operation, arbitrary) });
  const plus = fc.boolean();
  const isPost = operation.method === 'POST';
  const queryParameters = operation.parameters.filter((parameter) => parameter.in === 'query');
  const documents = (code: string) => [...operation.codes.values()].some((codes) => codes.includes(code));

  const simple = (category: Category, mode: Mode, note: string) =>
    fc
      .tuple(validParams(context, operation, mode), plus, isPost ? validBody(context, operation, mode) : fc.constant(undefined), encodings)
      .map(([params, usePlus, body, encoding]): FuzzCase => {
        const base = requestBase(operation, params, usePlus);
        if (isPost)
          return jsonCase(
            operation,
            category,
            base,
            body,
            category === 'hostile' ? encoding : 'json',
            `${note}${category === 'hostile' ? ` (${encoding} body)` : ''}`,
          );
        return { operation: operation.id, category, method: operation.method, ...base, note };
      });

  add(5, simple('valid', 'clean', 'valid per the document'));
  add(4, simple('hostile', 'hostile', 'valid shape, hostile unicode in every string'));
  if (operation.method === 'GET')
    add(
      0.75,
      simple('head', 'clean', 'HEAD of a valid GET').map((fuzzCase) => ({ ...fuzzCase, method: 'HEAD' })),
    );

  // Wrong methods: 405 with Allow for every method the path does not document.
  const wrongMethods = ['PUT', 'DELETE', 'PATCH', 'TRACE', 'PROPFIND', 'PURGE', 'LOCK', 'GET', 'POST', 'HEAD'].filter(
    (method) => !operation.pathMethods.includes(method) && !(method === 'HEAD' && operation.pathMethods.includes('GET')),
  );
  add(
    2,
    fc
      .tuple(validParams(context, operation, 'clean'), fc.constantFrom(...wrongMethods), fc.boolean())
      // A path value holding a slash names a path outside the template (404 under any method, GET
      // included); those are the path-variant cases. A fresh seed drew one (issue 26).
      .filter(([params]) => !Object.values(params.path).some((value) => /[/\\]/.test(value)))
      .map(([params, method, withBody]): FuzzCase => {
        const base = requestBase(operation, params, false);
        return {
          operation: operation.id,
          category: 'wrong-method',
          method,
          ...base,
          ...(withBody && method !== 'HEAD' && method !== 'GET' ? { headers: [JSON_TYPE, ...base.headers], body: Buffer.from('{"q":"x"}') } : {}),
          note: `${method} is not documented on ${operation.template}`,
          expect: { statuses: [405], codes: ['METHOD_NOT_ALLOWED'], why: 'a method the path does not document answers 405 with Allow' },
        };
      }),
  );

  add(
    0.5,
    fc.tuple(validParams(context, operation, 'clean'), fc.constantFrom('GET', 'POST', 'DELETE', 'X-Custom')).map(([params, requested]): FuzzCase => ({
      operation: operation.id,
      category: 'preflight',
      method: 'OPTIONS',
      ...requestBase(operation, params, false),
      headers: [
        ['Origin', 'https://agent.example'],
        ['Access-Control-Request-Method', requested],
        ['Access-Control-Request-Headers', 'content-type, authorization'],
      ],
      note: 'CORS preflight',
      expect: { statuses: [204], why: 'every path answers an OPTIONS preflight with 204' },
    })),
  );

  // URLs past 8192 bytes (and under Node's 16 kB header limit): 414 URI_TOO_LONG.
  const pathParameter = operation.parameters.find((parameter) => parameter.in === 'path');
  add(
    1,
    fc
      .tuple(
        validParams(context, operation, 'clean'),
        fc.integer({ min: MAX_URL_BYTES + 1, max: 15_000 }),
        fc.constantFrom('a', '%ED%A0%80', '%E2%80%AE', '%00', '%C3%A9'),
        fc.boolean(),
      )
      .map(([params, target, unit, onPath]): FuzzCase => {
        const base = requestBase(operation, params, false);
        const room = (used: number) => Math.max(1, Math.ceil((target - used) / unit.length));
        const name = queryParameters[0]?.name ?? 'pad';
        const rest = base.query.filter(([key]) => key !== name);
        const padded =
          onPath && pathParameter
            ? {
                ...base,
                path: operation.template.replace(/\{[^}]+\}/g, () =>
                  unit.repeat(room(Buffer.byteLength(buildUrl(operation.template.replace(/\{[^}]+\}/g, ''), base.query)))),
                ),
              }
            : {
                ...base,
                query: [[name, unit.repeat(room(Buffer.byteLength(buildUrl(base.path, rest)) + name.length + 2))], ...rest] as [string, string | undefined][],
              };
        return {
          operation: operation.id,
          category: 'url-too-long',
          method: operation.method,
          ...padded,
          ...(isPost ? { headers: [JSON_TYPE, ...padded.headers], body: Buffer.from('{}') } : {}),
          note: `URL padded past ${MAX_URL_BYTES} bytes with ${unit} ${onPath && pathParameter ? 'in the path' : 'in the query'}`,
          expect: { statuses: [414], codes: ['URI_TOO_LONG'], why: `URLs over ${MAX_URL_BYTES} bytes answer 414` },
        };
      }),
  );

  // Unknown and repeated parameters, case variants of names.
  add(
    1.5,
    fc
      .tuple(
        validParams(context, operation, 'clean'),
        fc.constantFrom('verbose', 'foo', '__proto__', 'constructor', 'q[]', 'Q', 'q ', 'callback', 'debug', '', 'a\u0000b', '\u202eq', 'ID', 'sort'),
        fc.constantFrom('1', '', 'x', '\u0000'),
        fc.boolean(),
      )
      .map(([params, name, value, bare]): FuzzCase => {
        const base = requestBase(operation, params, false);
        const known = operation.parameters.some((parameter) => parameter.name === name);
        const pair: [string, string | undefined] = [percentEncode(name), bare ? undefined : percentEncode(value)];
        const rejects = !known && name !== '' && !isPost && documents('UNKNOWN_PARAMETER');
        return {
          operation: operation.id,
          category: 'unknown-param',
          method: operation.method,
          ...base,
          query: [...base.query, pair],
          ...(isPost ? { headers: [JSON_TYPE, ...base.headers], body: Buffer.from(JSON.stringify(firstPreset(context, operation))) } : {}),
          note: `unknown query parameter ${JSON.stringify(name)}`,
          ...(rejects ? { expect: { statuses: [400], codes: ['UNKNOWN_PARAMETER'], why: 'unknown parameters are rejected on this path' } } : {}),
        };
      }),
  );
  if (queryParameters.length > 0) {
    add(
      1,
      fc
        .tuple(validParams(context, operation, 'clean'), fc.constantFrom(...queryParameters), fc.boolean(), mistypedParameter(context, queryParameters[0]!))
        .map(([params, parameter, same, other]): FuzzCase => {
          const base = requestBase(operation, params, false);
          const existing = base.query.find(([name]) => name === percentEncode(parameter.name));
          const value = existing?.[1] ?? percentEncode('x');
          const query: [string, string | undefined][] = [...base.query, [percentEncode(parameter.name), same ? value : percentEncode(other)]];
          if (!existing) query.push([percentEncode(parameter.name), value]);
          return {
            operation: operation.id,
            category: 'repeated',
            method: operation.method,
            ...base,
            query,
            note: `parameter ${parameter.name} repeated`,
            ...(documents('PARAM_REPEATED') ? { expect: { statuses: [400], why: 'a repeated parameter is rejected', orUnavailable: true } } : {}),
          };
        }),
    );
    add(
      1.5,
      fc
        .tuple(validParams(context, operation, 'clean'), fc.constantFrom(...queryParameters))
        .chain(([params, parameter]) => mistypedParameter(context, parameter).map((value) => [params, parameter, value] as const))
        .map(([params, parameter, value]): FuzzCase => {
          const base = requestBase(operation, { ...params, query: { ...params.query, [parameter.name]: undefined } }, false);
          return {
            operation: operation.id,
            category: 'mistyped',
            method: operation.method,
            ...base,
            query: [...base.query, [percentEncode(parameter.name), percentEncode(value)]],
            note: `${parameter.name}=${JSON.stringify(value)}`,
          };
        }),
    );
    const required = queryParameters.filter((parameter) => parameter.required);
    if (required.length > 0) {
      add(
        1,
        fc
          .tuple(validParams(context, operation, 'clean'), fc.constantFrom(...required), fc.constantFrom('absent', 'empty', 'blank', 'bare'))
          .map(([params, parameter, how]): FuzzCase => {
            const base = requestBase(operation, { ...params, query: { ...params.query, [parameter.name]: undefined } }, false);
            const extra: [string, string | undefined][] =
              how === 'absent' ? [] : how === 'bare' ? [[parameter.name, undefined]] : [[parameter.name, how === 'empty' ? '' : '%20%09%E2%80%8B'.slice(0, 6)]];
            return {
              operation: operation.id,
              category: 'missing',
              method: operation.method,
              ...base,
              query: [...base.query, ...extra],
              note: `required ${parameter.name} ${how}`,
              expect: { statuses: [400], why: `${parameter.name} is required` },
            };
          }),
      );
    }
    const limited = queryParameters.filter((parameter) => typeof resolve(context, parameter.schema).maxLength === 'number');
    if (limited.length > 0) {
      add(
        1,
        fc
          .tuple(
            validParams(context, operation, 'clean'),
            fc.constantFrom(...limited),
            fc.integer({ min: 1, max: 40 }),
            fc.constantFrom('a', 'é', '\u200b', '😀'),
          )
          .map(([params, parameter, over, unit]): FuzzCase => {
            const max = resolve(context, parameter.schema).maxLength as number;
            // Multi-byte units would push a 4000-character q past Node's 16 kB request-head limit (a parser-level 431, tested over a raw socket).
            const safeUnit = Buffer.byteLength(percentEncode(unit)) * (max + over) > 12_000 ? 'a' : unit;
            const value = safeUnit.repeat(max + over);
            const base = requestBase(operation, { ...params, query: { ...params.query, [parameter.name]: value } }, false);
            const bytes = Buffer.byteLength(buildUrl(base.path, base.query));
            return {
              operation: operation.id,
              category: 'overlong',
              method: operation.method,
              ...base,
              note: `${parameter.name} of ${value.length} characters (maxLength ${max})`,
              expect:
                bytes > MAX_URL_BYTES
                  ? { statuses: [414], codes: ['URI_TOO_LONG'], why: 'URL over the limit' }
                  : { statuses: [400], why: `${parameter.name} is longer than its maxLength` },
            };
          }),
      );
    }
  }

  // Path parameters: hostile ids, traversal, encoded slashes.
  if (operation.parameters.some((parameter) => parameter.in === 'path')) {
    add(
      1.5,
      fc
        .tuple(
          validParams(context, operation, 'clean'),
          fc.constantFrom(
            '..%2F..%2Fpackage',
            '%2e%2e%2f%2e%2e%2fpackage',
            '..%5C..%5Cpackage',
            '....%2F%2F',
            '%252e%252e%252f',
            '%00',
            'refusal%00',
            '%ED%A0%80',
            '%E2%80%AE',
            '.',
            '..',
            '%2E',
            'index',
            'INDEX',
            'manifest',
            '%C0%AE%C0%AE%2F',
            'a%2Fb',
            '~',
            '*',
          ),
        )
        .map(([params, raw]): FuzzCase => {
          const base = requestBase(operation, params, false);
          return {
            operation: operation.id,
            category: 'path-variant',
            method: operation.method,
            ...base,
            path: operation.template.replace(/\{[^}]+\}/g, raw),
            note: `path parameter ${raw}`,
            ...(/\.\.|%2F|%5C|%2e|%00|%25|%C0/i.test(raw)
              ? { expect: { statuses: [404], codes: ['ROUTE_NOT_FOUND'], why: 'no file outside the published tree is served' } }
              : {}),
          };
        }),
    );
  }

  // Path variants the document does not list: any path not listed answers 404 ROUTE_NOT_FOUND.
  add(
    0.5,
    fc.tuple(validParams(context, operation, 'clean'), fc.constantFrom('upper', 'trailing-slash', 'double-slash')).map(([params, how]): FuzzCase => {
      const base = requestBase(operation, params, false);
      const path = how === 'upper' ? base.path.toUpperCase() : how === 'trailing-slash' ? `${base.path}/` : `/${base.path}`;
      return {
        operation: operation.id,
        category: 'path-variant',
        method: operation.method,
        ...base,
        path,
        ...(isPost ? { headers: [JSON_TYPE, ...base.headers], body: Buffer.from(JSON.stringify(firstPreset(context, operation))) } : {}),
        note: `path variant (${how}) ${path}`,
        ...(path === base.path || Object.keys(context.document.paths as Json).includes(path)
          ? {}
          : { expect: { statuses: [404], codes: ['ROUTE_NOT_FOUND'], why: 'a path the document does not list answers 404 ROUTE_NOT_FOUND' } }),
      };
    }),
  );

  // Request headers that change how a response is produced.
  add(
    1,
    fc
      .tuple(
        validParams(context, operation, 'clean'),
        fc.constantFrom<[string, string][]>(
          [['Accept', 'text/html']],
          [['Accept', 'application/xml']],
          [['Accept', '*/*;q=0']],
          [['Accept-Encoding', 'br, gzip;q=0, *;q=0']],
          [['If-None-Match', '*']],
          [['If-None-Match', '"nope"']],
          [['If-Modified-Since', 'Thu, 01 Jan 2099 00:00:00 GMT']],
          [['If-Match', '"nope"']],
          [['If-Unmodified-Since', 'Mon, 01 Jan 1990 00:00:00 GMT']],
          [['Range', 'bytes=0-3']],
          [['Range', 'bytes=999999999-']],
          [['X-Forwarded-For', '\u00ff, 999.1.1.1, ::ffff:garbage']],
          [['Origin', 'null']],
          [['Origin', 'https://evil.example']],
          [['Origin', 'http://localhost:4321']],
          [['Cookie', 'a=b; __proto__=x']],
          [['User-Agent', 'x'.repeat(2000)]],
          [['Accept-Language', '\u00e9\u00e9;q=2']],
          [['MCP-Protocol-Version', 'bogus']],
          [['Authorization', 'Bearer x']],
        ),
      )
      .map(([params, headers]): FuzzCase => {
        const base = requestBase(operation, params, false);
        return {
          operation: operation.id,
          category: 'headers',
          method: operation.method,
          ...base,
          headers: [...(isPost ? [JSON_TYPE] : []), ...base.headers, ...headers],
          ...(isPost ? { body: Buffer.from(JSON.stringify(firstPreset(context, operation))) } : {}),
          note: headers.map(([name, value]) => `${name}: ${value.slice(0, 40)}`).join('; '),
        };
      }),
  );

  // Every header sent twice (issue 26), the same value again or a second one: Node keeps the
  // first of some (Content-Type, Authorization, User-Agent) and joins the others with ", ".
  const idempotent = operation.parameters.some((parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === 'idempotency-key');
  add(
    1,
    fc
      .tuple(simple('valid', 'clean', 'valid per the document'), fc.constantFrom('same', 'second'), fc.subarray(DOUBLED_HEADERS), fc.nat(1_000_000))
      .map(([fuzzCase, how, extra, key]): FuzzCase => {
        const secret =
          operation.security && context.config.ingestSecret ? [['Authorization', `Bearer ${context.config.ingestSecret}`] as [string, string]] : [];
        const keyed = idempotent ? [['Idempotency-Key', `fuzz-${key}`] as [string, string]] : [];
        const headers = [...fuzzCase.headers, ...extra, ...secret, ...keyed];
        const doubled = headers.flatMap(([name, value]): [string, string][] => [
          [name, value],
          [name, how === 'same' ? value : secondValue(name, value)],
        ]);
        return {
          ...fuzzCase,
          category: 'repeated-headers',
          headers: doubled,
          note: `every header twice (${how}): ${headers.map(([name]) => name).join(', ') || '(none)'}`,
        };
      }),
  );

  if (isPost) addBodyCases(context, operation, add);
  if (operation.parameters.some((parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === 'idempotency-key')) {
    add(
      1,
      fc
        .tuple(
          fc.constant(firstPreset(context, operation)),
          fc.constantFrom('', ' ', 'a b', 'x'.repeat(201), '\u00e9t\u00e9', 'tab\there', '\u00ff', 'ok-key', 'A'.repeat(200), '"quoted"', '\u0080'),
        )
        .map(([body, key]): FuzzCase => {
          const valid = /^[\x21-\x7e]{1,200}$/.test(key);
          return {
            operation: operation.id,
            category: 'idempotency-key',
            method: operation.method,
            path: operation.template,
            query: [],
            headers: [JSON_TYPE, ['Idempotency-Key', key]],
            body: encodeJson(body, 'json'),
            note: `Idempotency-Key ${JSON.stringify(key.slice(0, 30))}`,
            ...(valid || key.trim() !== key || key === '' ? {} : { expect: { statuses: [400], why: 'a malformed Idempotency-Key is rejected' } }),
          };
        }),
    );
  }
  if (operation.id === 'councilPost') addAuthCases(context, operation, add);
  return fc.oneof(...options);
}

/** Categories whose requests reach the route's own checks (the body parser let them through). */
const ROUTE_CATEGORIES = new Set<Category>(['missing', 'mistyped', 'extra', 'overlong', 'content-type']);

/**
 * Operations behind the ingestion secret check it before the body: with a secret configured the
 * cases carry it (so the fuzz reaches the body checks and the 2xx); without one, a request the
 * parser lets through answers 503 PERSISTENCE_UNAVAILABLE before its body is read.
 */
function securedCase(context: FuzzContext, operation: Operation, arbitrary: fc.Arbitrary<FuzzCase>): fc.Arbitrary<FuzzCase> {
  if (!operation.security || operation.id === 'councilPost') return arbitrary;
  const secret = context.config.ingestSecret;
  return arbitrary.map((fuzzCase): FuzzCase => {
    if (fuzzCase.headers.some(([name]) => name.toLowerCase() === 'authorization')) return fuzzCase;
    if (secret) return { ...fuzzCase, headers: [...fuzzCase.headers, ['Authorization', `Bearer ${secret}`]] };
    if (!fuzzCase.expect || !ROUTE_CATEGORIES.has(fuzzCase.category) || !fuzzCase.expect.statuses.includes(400)) return fuzzCase;
    return {
      ...fuzzCase,
      expect: { statuses: [400, 503], why: `${fuzzCase.expect.why}, or 503 PERSISTENCE_UNAVAILABLE first: no ingestion secret is configured` },
    };
  });
}

function firstPreset(context: FuzzContext, operation: Operation): unknown {
  if (operation.id === 'mcpPost') return { jsonrpc: '2.0', id: 1, method: 'tools/list' };
  return bodyPresets(context, operation)[0] ?? {};
}

/** What the hostile-deep cases put in every string: NUL, unpaired surrogates, bidi controls. */
const DEEP_HOSTILE_ATOMS = ['\u0000', 'a\u0000b', '\ud800', '\udfff', 'x\ud83d', '\u202e', '\u2066', '\u200f'];

/** JSON-RPC's own fields stay as they are, so that MCP tool calls reach their arguments. */
const PROTOCOL_FIELDS = new Set(['jsonrpc', 'method', 'name', 'protocolVersion']);

/** The value with `atom` appended to every string (the value is generated, a few levels deep). */
function withAtomInEveryString(value: unknown, atom: string, depth = 0): unknown {
  if (depth > 20) return value;
  if (typeof value === 'string') return `${value}${atom}`;
  if (Array.isArray(value)) return value.map((item) => withAtomInEveryString(item, atom, depth + 1));
  if (isObject(value))
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [key, PROTOCOL_FIELDS.has(key) ? inner : withAtomInEveryString(inner, atom, depth + 1)]),
    );
  return value;
}

function addBodyCases(context: FuzzContext, operation: Operation, add: (weight: number, arbitrary: fc.Arbitrary<FuzzCase>) => void): void {
  const schema = resolve(context, operation.body!.schema);
  // A body that is a union of objects (oneOf by kind): its fields are every variant's, and the
  // required ones those all variants require; a field sent to the wrong variant is unknown there (400 too).
  const variants = ((schema.oneOf ?? schema.anyOf) as Json[] | undefined)?.map((variant) => resolve(context, variant)) ?? [schema];
  const properties: Record<string, Json> = Object.assign({}, ...variants.map((variant) => (variant.properties as Record<string, Json>) ?? {}).reverse());
  const names = Object.keys(properties);
  const required = ((variants[0]!.required as string[]) ?? []).filter((name) =>
    variants.every((variant) => ((variant.required as string[]) ?? []).includes(name)),
  );
  const base = { path: operation.template, query: [] as [string, string | undefined][], headers: [] as [string, string][] };
  const body = validBody(context, operation, 'clean');
  const strict = operation.id !== 'mcpPost';

  // Malformed JSON with a JSON content type: 400 INVALID_JSON.
  add(
    1.5,
    fc
      .tuple(
        body,
        fc.constantFrom(
          'truncate',
          'trailing-comma',
          'single-quotes',
          'garbage-after',
          'nan',
          'comment',
          'unquoted',
          'lone-brace',
          'raw-control',
          'utf16',
          'bad-escape',
          'primitive',
          'deep',
          'deep-bare',
        ),
      )
      .map(([value, how]): FuzzCase => {
        const text = JSON.stringify(value);
        let raw: Buffer;
        let expectInvalid = true;
        switch (how) {
          case 'truncate':
            raw = Buffer.from(text.slice(0, Math.max(1, Math.floor(text.length / 2))));
            break;
          case 'trailing-comma':
            raw = Buffer.from(text.endsWith('}') && text.length > 2 ? `${text.slice(0, -1)},}` : '[1,]');
            break;
          case 'single-quotes':
            raw = Buffer.from("{'query': 'x', 'q': 'x'}");
            break;
          case 'garbage-after':
            raw = Buffer.from(`${text}garbage`);
            break;
          case 'nan':
            raw = Buffer.from('{"q": NaN, "query": Infinity}');
            break;
          case 'comment':
            raw = Buffer.from(`/* hi */ ${text}`);
            break;
          case 'unquoted':
            raw = Buffer.from('{query: "x"}');
            break;
          case 'lone-brace':
            raw = Buffer.from('{');
            break;
          case 'raw-control':
            raw = Buffer.from('{"q": "a\u0000b\nc", "query": "\u0001"}');
            break;
          case 'utf16':
            raw = Buffer.from(text, 'utf16le');
            break;
          case 'bad-escape':
            raw = Buffer.from('{"q": "\\x41\\u12"}');
            break;
          case 'primitive':
            raw = Buffer.from('"just a string"');
            break;
          case 'deep':
            // 20 000 levels of nesting inside 64 kB: valid JSON, refused past 64 levels.
            raw = Buffer.from(`{"q": ${'['.repeat(20_000)}${']'.repeat(20_000)}}`);
            expectInvalid = false;
            break;
          case 'deep-bare':
            // The same as the whole body (issue 13): it crashed the JSON-RPC batch check of /api/mcp.
            raw = Buffer.from(`${'['.repeat(20_000)}${']'.repeat(20_000)}`);
            expectInvalid = false;
            break;
        }
        return {
          operation: operation.id,
          category: 'malformed-json',
          method: 'POST',
          ...base,
          headers: [JSON_TYPE],
          body: raw,
          note: `malformed JSON (${how})`,
          expect: expectInvalid
            ? { statuses: [400], codes: ['INVALID_JSON'], why: 'the body is not valid JSON' }
            : { statuses: [400], why: 'JSON nested past 64 levels is refused (BODY_TOO_DEEP, or JSON-RPC -32600 on /api/mcp)' },
        };
      }),
  );

  // Wrong content types, no content type, unsupported charsets and encodings.
  add(
    1.5,
    fc
      .tuple(
        body,
        fc.constantFrom(
          'text/plain',
          'application/x-www-form-urlencoded',
          'none',
          'multipart/form-data; boundary=x',
          'application/xml',
          'application/vnd.api+json',
          'application/json; charset=utf-16',
          'application/json; charset=latin1',
          'application/json; charset=bogus',
          'APPLICATION/JSON',
          'application/json;charset=UTF-8',
          'application/json, text/plain',
          'json',
          '',
        ),
        fc.constantFrom('none', 'gzip-garbage', 'br', 'x-unknown'),
      )
      .map(([value, type, encoding]): FuzzCase => {
        const headers: [string, string][] = type === 'none' ? [] : [['Content-Type', type]];
        if (encoding !== 'none') headers.push(['Content-Encoding', encoding === 'gzip-garbage' ? 'gzip' : encoding]);
        const jsonLike = /^application\/json(;\s*charset=(utf-8|latin1))?$/i.test(type);
        const mcpRejects = !/json/i.test(type);
        return {
          operation: operation.id,
          category: 'content-type',
          method: 'POST',
          ...base,
          headers,
          body: encodeJson(value, 'json'),
          note: `Content-Type ${type}${encoding === 'none' ? '' : `, Content-Encoding ${encoding}`}`,
          ...((operation.id === 'mcpPost' ? mcpRejects || encoding !== 'none' : !jsonLike || encoding !== 'none')
            ? { expect: { statuses: operation.id === 'mcpPost' ? [400, 415] : [400], why: 'the body is not readable as JSON' } }
            : {}),
        };
      }),
  );

  // Bodies past 64 kB: 413 PAYLOAD_TOO_LARGE.
  add(
    0.75,
    fc
      .tuple(body, fc.integer({ min: MAX_JSON_BODY_BYTES + 1, max: 300_000 }), fc.constantFrom('a', 'é', '\u202e', ' '))
      .map(([value, size, unit]): FuzzCase => {
        const key = names.find((name) => typeOf(resolve(context, properties[name]!)) === 'string') ?? 'pad';
        const padded = isObject(value) ? { ...value, [key]: unit.repeat(size) } : { pad: unit.repeat(size) };
        return {
          operation: operation.id,
          category: 'oversized-body',
          method: 'POST',
          ...base,
          headers: [JSON_TYPE],
          body: encodeJson(padded, 'json'),
          note: `body of about ${size} characters`,
          expect: { statuses: [413], codes: ['PAYLOAD_TOO_LARGE'], why: 'JSON bodies over 64 kB answer 413' },
        };
      }),
  );

  // Issue 26: ill-formed or bidi text in every string of the body AND, in a field the schema
  // does not have, nesting far past the limit and/or a string near or past the size limit. The
  // checks run size → depth → text → schema, so the first one that fails answers, never a 500.
  add(
    2,
    fc
      .tuple(
        validBody(context, operation, 'clean'),
        fc.constantFrom(...DEEP_HOSTILE_ATOMS),
        fc.constantFrom('json', 'wtf8') as fc.Arbitrary<BodyEncoding>,
        fc.oneof(
          { weight: 4, arbitrary: fc.integer({ min: MAX_BODY_DEPTH, max: MAX_BODY_DEPTH + 8 }) },
          { weight: 4, arbitrary: fc.integer({ min: MAX_BODY_DEPTH, max: 30_000 }) },
          { weight: 2, arbitrary: fc.integer({ min: 0, max: MAX_BODY_DEPTH - 2 }) },
        ),
        fc.array(fc.constantFrom('[', '{'), { minLength: 1, maxLength: 3 }),
        fc.oneof(
          { weight: 3, arbitrary: fc.constant(0) },
          { weight: 2, arbitrary: fc.integer({ min: 1, max: MAX_JSON_BODY_BYTES - 1_000 }) },
          { weight: 2, arbitrary: fc.integer({ min: MAX_JSON_BODY_BYTES, max: 400_000 }) },
        ),
        // Names no body schema has (and not the padding's): a second key of the same name would replace the nesting.
        fc.constantFrom('extra', '__proto__', '\u0000', 'fuzz_nested'),
      )
      .map(([value, atom, encoding, depth, kinds, padding, field]): FuzzCase => {
        const hostile = withAtomInEveryString(value, atom);
        const opening = Array.from({ length: depth }, (_, level) => (kinds[level % kinds.length] === '[' ? '[' : '{"k":')).join('');
        const closing = Array.from({ length: depth }, (_, level) => (kinds[(depth - 1 - level) % kinds.length] === '[' ? ']' : '}')).join('');
        const deep = `${opening}${JSON.stringify(`leaf${atom}`)}${closing}`;
        const pad =
          padding > 0 ? `,"fuzz_padding":${JSON.stringify(atom.repeat(Math.ceil(padding / Math.max(1, Buffer.byteLength(JSON.stringify(atom)) - 2))))}` : '';
        const inserted = `${JSON.stringify(field)}:${deep}${pad}`;
        const encoded = encodeJson(hostile, encoding);
        const [open, rest] = [encoded.subarray(0, 1).toString('latin1'), encoded.subarray(1)];
        const empty = rest.length === 1;
        const body =
          open === '{'
            ? Buffer.concat([Buffer.from(`{${inserted}${empty ? '' : ','}`), rest])
            : Buffer.concat([Buffer.from(`[{${inserted}}${empty ? '' : ','}`), rest]);
        // The body's own object (and a batch's array) around the inserted value.
        const tooDeep = depth + (open === '{' ? 1 : 2) > MAX_BODY_DEPTH;
        const illFormed = findIllFormedText(atom) !== undefined;
        let expected: Expectation | undefined;
        if (body.length > MAX_JSON_BODY_BYTES) expected = { statuses: [413], codes: ['PAYLOAD_TOO_LARGE'], why: 'size is checked first' };
        else if (tooDeep) expected = { statuses: [400], ...(strict ? { codes: ['BODY_TOO_DEEP'] } : {}), why: 'depth is checked before text and schema' };
        else if (illFormed && strict) expected = { statuses: [400], codes: ['INVALID_TEXT'], why: 'text is checked before the schema' };
        return {
          operation: operation.id,
          category: 'hostile-deep',
          method: 'POST',
          ...base,
          headers: [JSON_TYPE],
          body,
          note: `${JSON.stringify(atom)} in every string, ${depth} levels (${kinds.join('')}) in ${JSON.stringify(field)}, ${padding} bytes of padding (${encoding} body)`,
          ...(expected ? { expect: expected } : {}),
        };
      }),
  );

  if (!strict) {
    addMcpCases(context, operation, add);
    return;
  }

  // Missing required fields.
  if (required.length > 0 || operation.id === 'councilPost') {
    const droppable = operation.id === 'councilPost' ? ['q+question+council_id'] : required;
    add(
      1,
      fc.tuple(body, fc.constantFrom(...droppable)).map(([value, field]): FuzzCase => {
        const copy = { ...(value as Json) };
        for (const name of field.split('+')) delete copy[name];
        return { ...jsonCase(operation, 'missing', base, copy, 'json', `required ${field} missing`), expect: { statuses: [400], why: `${field} is required` } };
      }),
    );
  }
  // Mistyped fields and bodies of the wrong JSON type.
  add(
    1.5,
    fc
      .oneof(
        fc.tuple(body, fc.constantFrom(...names)).chain(([value, field]) =>
          mistypedValue(context, properties[field]!).map((wrong) => ({
            value: { ...(value as Json), [field]: wrong },
            note: `${field}: ${JSON.stringify(wrong)}`,
          })),
        ),
        fc.constantFrom<unknown>([], [{}], 42, 'text', null, true).map((value) => ({ value, note: `body ${JSON.stringify(value)}` })),
      )
      .map(({ value, note }): FuzzCase => ({
        ...jsonCase(operation, 'mistyped', base, value, 'json', note),
        expect: { statuses: [400], why: 'a field of the wrong type is rejected' },
      })),
  );
  // Fields the schema does not have (additionalProperties false).
  add(
    1,
    fc
      .tuple(
        body,
        fc.constantFrom('extra', '__proto__', 'constructor', 'prototype', 'Query', 'Q', 'q ', '', '\u0000', '\u202eq', 'toString'),
        fc.jsonValue({ maxDepth: 2 }),
      )
      .map(([value, field, extra]): FuzzCase => {
        // JSON.stringify drops a "__proto__" own property set with spread; write it into the text.
        const text = JSON.stringify(value);
        const raw =
          text === '{}'
            ? `{${JSON.stringify(field)}:${JSON.stringify(extra) ?? 'null'}}`
            : `{${JSON.stringify(field)}:${JSON.stringify(extra) ?? 'null'},${text.slice(1)}`;
        const known = names.includes(field);
        return {
          operation: operation.id,
          category: 'extra',
          method: 'POST',
          ...base,
          headers: [JSON_TYPE],
          body: Buffer.from(raw),
          note: `extra field ${JSON.stringify(field)}`,
          ...(known ? {} : { expect: { statuses: [400], why: 'unknown fields are rejected (additionalProperties false)' } }),
        };
      }),
  );
  // Strings past maxLength, arrays past maxItems.
  const limited = names.filter((name) => {
    const inner = resolve(context, properties[name]!);
    return typeof inner.maxLength === 'number' || typeof inner.maxItems === 'number';
  });
  if (limited.length > 0) {
    add(
      1,
      fc
        .tuple(body, fc.constantFrom(...limited), fc.integer({ min: 1, max: 50 }), fc.constantFrom('a', 'é', '😀', '\u0301'))
        .map(([value, field, over, unit]): FuzzCase => {
          const inner = resolve(context, properties[field]!);
          const long =
            typeof inner.maxItems === 'number'
              ? Array.from({ length: (inner.maxItems as number) + over }, () => firstHint(context, operation, field) ?? 'x')
              : 'x' + unit.repeat((inner.maxLength as number) + over);
          const encoded = encodeJson({ ...(value as Json), [field]: long }, 'json');
          return {
            operation: operation.id,
            category: 'overlong',
            method: 'POST',
            ...base,
            headers: [JSON_TYPE],
            body: encoded,
            note: `${field} past its limit by ${over}`,
            expect:
              encoded.length > MAX_JSON_BODY_BYTES
                ? { statuses: [413], why: 'body over 64 kB' }
                : { statuses: [400], why: `${field} is longer than the document allows` },
          };
        }),
    );
  }
}

function firstHint(context: FuzzContext, operation: Operation, name: string): string | undefined {
  const hint = hintFor(context, operation.id, name)[0];
  return typeof hint === 'string' ? hint : undefined;
}

/** POST /api/council with persist and every shape of Authorization header. */
function addAuthCases(context: FuzzContext, operation: Operation, add: (weight: number, arbitrary: fc.Arbitrary<FuzzCase>) => void): void {
  const secret = context.config.ingestSecret ?? 'no-secret-configured';
  type Variant = { header: string | string[] | undefined; outcome: 'ok' | 'required' | 'invalid' };
  const variants: Variant[] = [
    { header: undefined, outcome: 'required' },
    { header: `Bearer ${secret}`, outcome: 'ok' },
    { header: `bearer ${secret}`, outcome: 'ok' },
    { header: `BEARER\t${secret}`, outcome: 'ok' },
    { header: `Bearer    ${secret}   `, outcome: 'ok' },
    { header: 'Bearer', outcome: 'required' },
    { header: 'Bearer ', outcome: 'required' },
    { header: '', outcome: 'required' },
    { header: `Basic ${Buffer.from(`user:${secret}`).toString('base64')}`, outcome: 'required' },
    { header: secret, outcome: 'required' },
    { header: `Token ${secret}`, outcome: 'required' },
    { header: `Bearer${secret}`, outcome: 'required' },
    { header: 'Bearer wrong', outcome: 'invalid' },
    { header: `Bearer ${secret.toUpperCase()}`, outcome: 'invalid' },
    { header: `Bearer ${secret}x`, outcome: 'invalid' },
    { header: `Bearer ${secret.slice(0, -1)}`, outcome: 'invalid' },
    { header: `Bearer ${secret} ${secret}`, outcome: 'invalid' },
    { header: `Bearer ${'A'.repeat(8000)}`, outcome: 'invalid' },
    { header: `Bearer ${secret}\u00e9`, outcome: 'invalid' },
    { header: 'Bearer \u00ff\u00fe', outcome: 'invalid' },
    { header: `Bearer "${secret}"`, outcome: 'invalid' },
    { header: [`Bearer wrong`, `Bearer ${secret}`], outcome: 'invalid' },
  ];
  add(
    3,
    fc
      .tuple(fc.constantFrom('q', 'question'), fc.constantFrom(...variants), fc.constantFrom(true, true, true, false))
      .map(([field, variant, persist]): FuzzCase => {
        const body = { [field]: 'Who owns a refusal that came from training?', persist };
        const headers: [string, string][] = [JSON_TYPE];
        for (const header of variant.header === undefined ? [] : Array.isArray(variant.header) ? variant.header : [variant.header])
          headers.push(['Authorization', header]);
        let expect: Expectation;
        const down = context.config.providerDown ? [502] : [];
        if (!persist)
          expect = context.config.live
            ? { statuses: [200, ...down], why: 'without persist the Authorization header plays no part' }
            : { statuses: [503], codes: ['LIVE_PANEL_UNAVAILABLE'], why: 'no panel' };
        else if (!context.config.ingestSecret) expect = { statuses: [503], codes: ['PERSISTENCE_UNAVAILABLE'], why: 'persist without a configured secret' };
        else if (variant.outcome === 'required') expect = { statuses: [401], codes: ['AUTH_REQUIRED'], why: 'persist needs Authorization: Bearer <secret>' };
        else if (variant.outcome === 'invalid') expect = { statuses: [403], codes: ['AUTH_INVALID'], why: 'the bearer token is not the secret' };
        else expect = { statuses: [201, ...down], why: 'persist with the right secret commits the record' };
        return {
          operation: operation.id,
          category: 'bad-auth',
          method: 'POST',
          path: operation.template,
          query: [],
          headers,
          body: encodeJson(body, 'json'),
          note: `persist ${persist}, Authorization ${variant.header === undefined ? '(none)' : JSON.stringify(String(variant.header).slice(0, 40))}`,
          expect,
        };
      }),
  );
}

// ---------------------------------------------------------------------------------------
// MCP: JSON-RPC bodies built from tools/list
// ---------------------------------------------------------------------------------------

function mcpId(): fc.Arbitrary<string | number> {
  return fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.constantFrom('a', 'id-1', ''));
}

/** Well-formed JSON-RPC messages: tool calls with arguments from each tool's inputSchema, tools/list, initialize, ping, a notification. */
function mcpMessage(context: FuzzContext, mode: Mode): fc.Arbitrary<unknown> {
  const id = mcpId();
  const toolCall = fc
    .constantFrom(...context.mcpTools)
    .chain((tool) => validValue(context, `mcp.${tool.name}`, '(args)', tool.inputSchema, mode).map((args) => ({ name: tool.name, arguments: args })));
  return fc.oneof(
    { weight: 8, arbitrary: fc.tuple(id, toolCall).map(([messageId, params]) => ({ jsonrpc: '2.0', id: messageId, method: 'tools/call', params })) },
    { weight: 2, arbitrary: id.map((messageId) => ({ jsonrpc: '2.0', id: messageId, method: 'tools/list' })) },
    {
      weight: 1,
      arbitrary: id.map((messageId) => ({
        jsonrpc: '2.0',
        id: messageId,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '0' } },
      })),
    },
    { weight: 1, arbitrary: fc.constant({ jsonrpc: '2.0', method: 'notifications/initialized' }) },
    { weight: 1, arbitrary: id.map((messageId) => ({ jsonrpc: '2.0', id: messageId, method: 'ping' })) },
  );
}

/** JSON-RPC messages with the wrong shape: unknown methods and tools, arguments of the wrong type, missing params, not JSON-RPC at all. */
function mcpMalformed(context: FuzzContext): fc.Arbitrary<unknown> {
  const id = mcpId();
  const tool = fc.constantFrom(...context.mcpTools.map((candidate) => candidate.name));
  return fc.oneof(
    {
      weight: 3,
      arbitrary: fc
        .tuple(
          id,
          tool,
          fc.oneof(
            fc.constantFrom<unknown>(null, [], 'x', 1, true),
            fc.dictionary(fc.constantFrom('q', 'id', 'identity', 'job_id', 'wait_seconds', 'extra', '__proto__', 'answer'), fc.jsonValue({ maxDepth: 2 }), {
              maxKeys: 3,
            }),
          ),
        )
        .map(([messageId, name, args]) => ({ jsonrpc: '2.0', id: messageId, method: 'tools/call', params: { name, arguments: args } })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(id, tool)
        .map(([messageId, name]) => ({ jsonrpc: '2.0', id: messageId, method: 'tools/call', params: { name: `${name}\u0000`, arguments: {} } })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(id, fc.constantFrom('tools/nope', 'resources/list', 'prompts/get', '', 'rpc.discover', '__proto__'))
        .map(([messageId, method]) => ({ jsonrpc: '2.0', id: messageId, method })),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom<unknown>(
        { jsonrpc: '1.0', id: 1, method: 'tools/list' },
        { id: 1, method: 'tools/list' },
        { jsonrpc: '2.0', id: { nested: true }, method: 'tools/list' },
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: 'x' },
        { jsonrpc: '2.0', id: 1, method: 'tools/call' },
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { arguments: {} } },
        { jsonrpc: '2.0', id: 1, result: {} },
        { jsonrpc: '2.0', id: 1, error: { code: 1, message: 'x' } },
        {},
        [],
      ),
    },
  );
}

function mcpBody(context: FuzzContext, mode: Mode): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 6, arbitrary: mcpMessage(context, mode) },
    { weight: 1, arbitrary: fc.array(mcpMessage(context, mode), { minLength: 1, maxLength: 3 }) },
  );
}

function addMcpCases(context: FuzzContext, operation: Operation, add: (weight: number, arbitrary: fc.Arbitrary<FuzzCase>) => void): void {
  add(
    2,
    fc
      .oneof({ weight: 4, arbitrary: mcpMalformed(context) }, { weight: 1, arbitrary: fc.array(mcpMalformed(context), { minLength: 1, maxLength: 3 }) })
      .map((value): FuzzCase => ({
        operation: operation.id,
        category: 'mistyped',
        method: 'POST',
        path: operation.template,
        query: [],
        headers: [JSON_TYPE],
        body: encodeJson(value, 'json'),
        note: 'malformed JSON-RPC message',
      })),
  );
  add(
    1.5,
    fc
      .tuple(
        mcpBody(context, 'clean'),
        fc.constantFrom<[string, string][]>(
          [],
          [['Accept', 'application/json']],
          [['Accept', 'text/event-stream']],
          [['Accept', 'text/html']],
          [['Accept', '*/*']],
          [['Origin', 'https://evil.example']],
          [['Origin', 'http://localhost:5173']],
          [['Origin', 'null']],
          [['Origin', 'http://127.0.0.1.evil.example']],
          [['Mcp-Session-Id', 'nope']],
          [['MCP-Protocol-Version', '1999-01-01']],
          [['MCP-Protocol-Version', '2025-06-18']],
        ),
      )
      .map(([value, headers]): FuzzCase => ({
        operation: operation.id,
        category: 'headers',
        method: 'POST',
        path: operation.template,
        query: [],
        headers: [JSON_TYPE, ...headers],
        body: encodeJson(value, 'json'),
        note: `MCP with ${headers.map(([name, header]) => `${name}: ${header}`).join('; ') || 'no extra headers'}`,
      })),
  );
}

// ---------------------------------------------------------------------------------------
// Sending
// ---------------------------------------------------------------------------------------

export function buildUrl(path: string, query: [string, string | undefined][]): string {
  if (query.length === 0) return path;
  return `${path}?${query.map(([name, value]) => (value === undefined ? name : `${name}=${value}`)).join('&')}`;
}

export interface Observed {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  raw: Buffer;
  text: string;
  contentType: string;
  json?: unknown;
  jsonError?: string;
  /** A transport failure (reset, timeout) instead of a response. */
  error?: string;
  ms: number;
}

/** The URL actually sent: job placeholders filled from the jobs seen so far. */
export function materialize(context: FuzzContext, fuzzCase: FuzzCase): string {
  const query = fuzzCase.query.map(([name, value]): [string, string | undefined] => {
    if (value === undefined || !value.startsWith('{{job')) return [name, value];
    const index = Number(/\{\{job:(\d+)\}\}/.exec(value)?.[1] ?? 0);
    const id = context.jobIds.length > 0 ? context.jobIds[index % context.jobIds.length]! : `job_missing_${index}`;
    return [name, percentEncode(id)];
  });
  return buildUrl(fuzzCase.path, query);
}

/**
 * Sends a request whose headers repeat (superagent cannot repeat Content-Type) with Node's own
 * client: each value of a name is its own header line.
 */
function sendRepeated(server: Server, method: string, url: string, headers: [string, string][], body: Buffer | undefined): Promise<Observed> {
  const started = Date.now();
  const address = server.address() as AddressInfo;
  const grouped: Record<string, string[]> = {};
  for (const [name, value] of headers) (grouped[name] ??= []).push(value);
  return new Promise((resolve) => {
    const failed = (error: Error) =>
      resolve({
        status: 0,
        headers: {},
        raw: Buffer.alloc(0),
        text: '',
        contentType: '',
        error: `${(error as { code?: string }).code ?? ''} ${error.message}`,
        ms: Date.now() - started,
      });
    const outgoing = httpRequest({ host: '127.0.0.1', port: address.port, method, path: url, headers: grouped, timeout: 15_000 }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', failed);
      response.on('end', () => {
        // Decoded as superagent decodes, so both senders' bodies are judged alike.
        const received = Buffer.concat(chunks);
        const encoding = String(response.headers['content-encoding'] ?? '').toLowerCase();
        let raw: Buffer;
        try {
          raw =
            encoding === 'gzip'
              ? gunzipSync(received)
              : encoding === 'br'
                ? brotliDecompressSync(received)
                : encoding === 'deflate'
                  ? inflateSync(received)
                  : received;
        } catch (error) {
          failed(error as Error);
          return;
        }
        resolve(observedOf(response.statusCode ?? 0, response.headers as Observed['headers'], raw, started));
      });
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error('timeout')));
    outgoing.on('error', failed);
    outgoing.end(body);
  });
}

function observedOf(status: number, headers: Observed['headers'], raw: Buffer, started: number): Observed {
  const text = raw.toString('utf8');
  const contentType = String(headers['content-type'] ?? '');
  const observed: Observed = { status, headers, raw, text, contentType, ms: Date.now() - started };
  if (/json/i.test(contentType) && text.length > 0) {
    try {
      observed.json = JSON.parse(text);
    } catch (error) {
      observed.jsonError = (error as Error).message;
    }
  }
  return observed;
}

export async function send(server: Server, method: string, url: string, headers: [string, string][], body: Buffer | undefined): Promise<Observed> {
  const names = headers.map(([name]) => name.toLowerCase());
  if (new Set(names).size < names.length) return sendRepeated(server, method, url, headers, body);
  const started = Date.now();
  const agent = request(server) as unknown as Record<string, (url: string) => request.Test>;
  const verb = agent[method.toLowerCase()];
  if (!verb) throw new Error(`supertest cannot send ${method}`);
  let test = verb
    .call(agent, url)
    .ok(() => true)
    .timeout(15_000);
  const grouped = new Map<string, string[]>();
  for (const [name, value] of headers) grouped.set(name, [...(grouped.get(name) ?? []), value]);
  for (const [name, values] of grouped) test = test.set(name, (values.length === 1 ? values[0]! : values) as string);
  test = test.buffer(true).parse((response, callback) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(Buffer.from(chunk)));
    response.on('end', () => callback(null, Buffer.concat(chunks)));
    response.on('error', (error: Error) => callback(error, Buffer.concat(chunks)));
  });
  // Bytes go out as they are: without this, superagent re-serializes a Buffer sent as JSON into {"type":"Buffer","data":[…]}.
  if (body !== undefined) test = test.serialize((value: unknown) => value as string).send(body);
  try {
    const response = await test;
    const raw = Buffer.isBuffer(response.body) ? response.body : Buffer.alloc(0);
    const text = raw.toString('utf8');
    const contentType = String(response.headers['content-type'] ?? '');
    const observed: Observed = { status: response.status, headers: response.headers as Observed['headers'], raw, text, contentType, ms: Date.now() - started };
    if (/json/i.test(contentType) && text.length > 0) {
      try {
        observed.json = JSON.parse(text);
      } catch (error) {
        observed.jsonError = (error as Error).message;
      }
    }
    return observed;
  } catch (error) {
    return {
      status: 0,
      headers: {},
      raw: Buffer.alloc(0),
      text: '',
      contentType: '',
      error: `${(error as { code?: string }).code ?? ''} ${(error as Error).message}`,
      ms: Date.now() - started,
    };
  }
}

// ---------------------------------------------------------------------------------------
// Oracles
// ---------------------------------------------------------------------------------------

const STACK_TRACE = /\n\s+at .+:\d+/;
const INTERNAL_PATH = /\/work\/|node_modules/;
const ENVELOPE_KEYS = ['code', 'message', 'agent_action', 'retryable', 'suggested_next_call'];

function strings(value: unknown, out: string[] = [], depth = 0): string[] {
  if (depth > 60) return out;
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const inner of value) strings(inner, out, depth + 1);
  else if (isObject(value))
    for (const [key, inner] of Object.entries(value)) {
      out.push(key);
      strings(inner, out, depth + 1);
    }
  return out;
}

/** The methods a 405 must list in Allow. */
export function expectedAllow(operation: Operation): string[] {
  const allowed = [...operation.pathMethods];
  if (allowed.includes('GET') && !allowed.includes('HEAD')) allowed.push('HEAD');
  return [...allowed, 'OPTIONS'].sort();
}

export function envelopeProblems(body: unknown, status: number, catalogue: Map<string, number>): string[] {
  if (!isObject(body)) return [`a ${status} body is not a JSON object`];
  const error = body.error;
  if (!isObject(error)) return [`a ${status} body has no error object (keys: ${Object.keys(body).join(', ')})`];
  const problems: string[] = [];
  for (const key of ENVELOPE_KEYS) if (!(key in error)) problems.push(`error.${key} is missing`);
  if (typeof error.code !== 'string') problems.push('error.code is not a string');
  if (typeof error.message !== 'string') problems.push('error.message is not a string');
  if (typeof error.agent_action !== 'string') problems.push('error.agent_action is not a string');
  if (typeof error.retryable !== 'boolean') problems.push('error.retryable is not a boolean');
  if (!(error.suggested_next_call === null || isObject(error.suggested_next_call))) problems.push('error.suggested_next_call is neither null nor an object');
  for (const key of Object.keys(error)) if (![...ENVELOPE_KEYS, 'details'].includes(key)) problems.push(`error.${key} is not part of the envelope`);
  const catalogued = typeof error.code === 'string' ? catalogue.get(error.code) : undefined;
  if (typeof error.code === 'string' && catalogued === undefined) problems.push(`error.code ${error.code} is not in x-error-catalogue`);
  else if (catalogued !== undefined && catalogued !== status)
    problems.push(`error.code ${String(error.code)} is catalogued as ${catalogued}, answered as ${status}`);
  return problems;
}

function codeOf(body: unknown): string | undefined {
  return isObject(body) && isObject(body.error) && typeof body.error.code === 'string' ? body.error.code : undefined;
}

/** Every way a response breaks the contract. */
export function judge(context: FuzzContext, operation: Operation, fuzzCase: FuzzCase, url: string, observed: Observed): string[] {
  if (observed.error) return [`no HTTP response: ${observed.error.trim()}`];
  const problems: string[] = [];
  const { status } = observed;
  const method = fuzzCase.method;
  const head = method === 'HEAD';
  const code = codeOf(observed.json);
  const urlBytes = Buffer.byteLength(url);
  const wrongMethod = method !== 'OPTIONS' && !operation.pathMethods.includes(method) && !(head && operation.pathMethods.includes('GET'));

  // What this request must get, most specific rule first.
  let expect = fuzzCase.expect;
  if (urlBytes > MAX_URL_BYTES) expect = { statuses: [414], codes: ['URI_TOO_LONG'], why: `the URL is ${urlBytes} bytes` };
  else if (method === 'OPTIONS') expect = { statuses: [204], why: 'OPTIONS preflight' };
  else if (wrongMethod && fuzzCase.category !== 'path-variant')
    expect = { statuses: [405], codes: ['METHOD_NOT_ALLOWED'], why: `${method} is not documented on ${operation.template}` };
  else if (
    method === 'POST' &&
    fuzzCase.body &&
    fuzzCase.body.length > MAX_JSON_BODY_BYTES &&
    /application\/json/i.test(headerValue(fuzzCase.headers, 'content-type') ?? '') &&
    !headerValue(fuzzCase.headers, 'content-encoding')
  ) {
    expect = { statuses: [413], codes: ['PAYLOAD_TOO_LARGE'], why: `the JSON body is ${fuzzCase.body.length} bytes` };
  }
  // A HEAD answer has no body to read the code from: any code this operation documents for the status will do.
  const expected5xx = (candidate: string | undefined) => context.config.expected5xx(status, candidate, operation);
  const unavailable = status >= 500 && (head && code === undefined ? (operation.codes.get(status) ?? []).some(expected5xx) : expected5xx(code));
  if (expect?.orUnavailable && unavailable) expect = undefined;
  // Over its limit, a request that would otherwise succeed is refused, after validation.
  if (expect && context.config.rateLimited && status === 429 && code === 'RATE_LIMITED' && expect.statuses.some((candidate) => candidate < 300))
    expect = undefined;
  if (expect && !expect.statuses.includes(status))
    problems.push(`expected ${expect.statuses.join('/')} (${expect.why}), got ${status}${code ? ` ${code}` : ''}`);
  else if (expect?.codes && !head && code !== undefined && !expect.codes.includes(code))
    problems.push(`expected ${expect.codes.join('/')} (${expect.why}), got ${code}`);

  if (status >= 500 && !unavailable) problems.push(`unexpected ${status}${code ? ` ${code}` : ''} in the ${context.config.name} configuration`);

  if (method === 'OPTIONS') {
    if (status === 204 && observed.headers['access-control-allow-origin'] === undefined) problems.push('preflight without Access-Control-Allow-Origin');
  } else {
    // The document: status, schema, media type and required headers.
    const body = /json/i.test(observed.contentType) || observed.contentType === '' ? observed.json : observed.text;
    const documented = context.validator.validate(method, fuzzCase.path, status, head ? undefined : body, observed.contentType || undefined, observed.headers);
    problems.push(...documented);
  }
  if (observed.jsonError) problems.push(`the body claims JSON but does not parse: ${observed.jsonError}`);

  // §7: every 4xx/5xx JSON body is the envelope (JSON-RPC errors where the MCP endpoint documents them).
  if (status >= 400 && !head) {
    const jsonRpc = isObject(observed.json) && observed.json.jsonrpc === '2.0';
    if (!/json/i.test(observed.contentType))
      problems.push(`a ${status} answered ${observed.contentType || 'no content type'} instead of the JSON error envelope`);
    else if (!(jsonRpc && operation.id === 'mcpPost')) problems.push(...envelopeProblems(observed.json, status, context.catalogue));
  }
  if (status === 405) {
    const allow = String(observed.headers.allow ?? '');
    if (!allow) problems.push('405 without Allow');
    else {
      const listed = allow
        .split(',')
        .map((item) => item.trim().toUpperCase())
        .filter(Boolean)
        .sort();
      if (listed.join(',') !== expectedAllow(operation).join(','))
        problems.push(`Allow lists ${listed.join(', ')}, the document has ${expectedAllow(operation).join(', ')}`);
    }
  }
  if (status === 429 && !/^\d+$/.test(String(observed.headers['retry-after'] ?? ''))) problems.push('429 without a numeric Retry-After');
  if (status === 401 && !observed.headers['www-authenticate']) problems.push('401 without WWW-Authenticate');

  // No stack traces, no internal paths, in the raw text or any decoded string.
  const texts = [observed.text, ...strings(observed.json)];
  if (texts.some((text) => STACK_TRACE.test(text))) problems.push('a body carries a stack trace');
  if (texts.some((text) => INTERNAL_PATH.test(text) || context.internalPaths.some((internal) => text.includes(internal))))
    problems.push('a body carries an internal path');

  if (operation.id === 'mcpPost' && status === 200) problems.push(...mcpProblems(context, operation, observed.json));
  return problems;
}

function headerValue(headers: [string, string][], name: string): string | undefined {
  return headers.find(([candidate]) => candidate.toLowerCase() === name)?.[1];
}

/** Inside a 200 JSON-RPC answer: an internal error, or a tool that hit an unexpected 5xx, is a 5xx in disguise. */
function mcpProblems(context: FuzzContext, operation: Operation, body: unknown): string[] {
  const problems: string[] = [];
  for (const message of Array.isArray(body) ? body : [body]) {
    if (!isObject(message)) continue;
    if (isObject(message.error) && message.error.code === -32603) problems.push(`JSON-RPC internal error: ${String(message.error.message).slice(0, 120)}`);
    const result = message.result;
    if (isObject(result) && result.isError === true && isObject(result.structuredContent) && isObject(result.structuredContent.error)) {
      const error = result.structuredContent.error;
      const status = typeof error.status === 'number' ? error.status : 0;
      if (status >= 500 && !context.config.expected5xx(status, String(error.code), operation)) problems.push(`an MCP tool hit ${status} ${String(error.code)}`);
      if (status === 0) problems.push(`an MCP tool error without an HTTP status: ${String(error.code)}`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------
// Running, counting, reporting
// ---------------------------------------------------------------------------------------

export interface Finding {
  signature: string;
  config: string;
  operation: string;
  category: Category;
  count: number;
  problems: string[];
  method: string;
  url: string;
  headers: [string, string][];
  body?: Buffer;
  note: string;
  status: number;
  responseHeaders: Record<string, unknown>;
  responseText: string;
}

export class FuzzStats {
  readonly perOperation = new Map<
    string,
    { requests: number; seeds: Set<number>; statuses: Map<number, number>; categories: Map<string, number>; ms: number }
  >();
  readonly findings = new Map<string, Finding>();
  /** Operations that answered a 2xx to their own method (a CORS preflight's 204 does not count). */
  readonly succeeded = new Set<string>();

  entry(operation: string) {
    let entry = this.perOperation.get(operation);
    if (!entry) {
      entry = { requests: 0, seeds: new Set(), statuses: new Map(), categories: new Map(), ms: 0 };
      this.perOperation.set(operation, entry);
    }
    return entry;
  }

  record(operation: string, seed: number, category: string, status: number, ms: number): void {
    const entry = this.entry(operation);
    entry.requests++;
    entry.seeds.add(seed);
    entry.ms += ms;
    entry.statuses.set(status, (entry.statuses.get(status) ?? 0) + 1);
    entry.categories.set(category, (entry.categories.get(category) ?? 0) + 1);
    if (status >= 200 && status < 300 && category !== 'preflight') this.succeeded.add(operation);
  }

  /** Keeps one finding per signature: the one with the shortest request. */
  addFinding(finding: Omit<Finding, 'count' | 'signature'>): Finding {
    const signature = `${finding.config} ${finding.operation} ${finding.status} ${normalizeProblem(finding.problems[0] ?? '')}`;
    const existing = this.findings.get(signature);
    const size = (candidate: { url: string; body?: Buffer }) => candidate.url.length + (candidate.body?.length ?? 0);
    if (!existing) {
      const created = { ...finding, signature, count: 1 };
      this.findings.set(signature, created);
      return created;
    }
    existing.count++;
    if (size(finding) < size(existing)) Object.assign(existing, finding, { count: existing.count, signature });
    return existing;
  }

  findingsFor(config: string, operation: string): Finding[] {
    return [...this.findings.values()].filter((finding) => finding.config === config && finding.operation === operation);
  }

  summary(title: string): string {
    const rows = [...this.perOperation.entries()].sort(([a], [b]) => a.localeCompare(b));
    const total = rows.reduce((sum, [, entry]) => sum + entry.requests, 0);
    const seeds = new Set(rows.flatMap(([, entry]) => [...entry.seeds]));
    const lines = [
      `${title}: ${rows.length} operations × ${seeds.size} seeds (${[...seeds].join(', ')}), ${total} requests (${Math.round(total / Math.max(1, rows.length))} per operation)`,
    ];
    for (const [operation, entry] of rows) {
      const statuses = [...entry.statuses.entries()]
        .sort(([a], [b]) => a - b)
        .map(([status, count]) => `${status}×${count}`)
        .join(' ');
      lines.push(
        `  ${operation.padEnd(34)} ${String(entry.requests).padStart(5)} req, ${entry.seeds.size} seeds, ${(entry.ms / Math.max(1, entry.requests)).toFixed(1)} ms/req  ${statuses}`,
      );
    }
    const allStatuses = new Map<number, number>();
    for (const [, entry] of rows) for (const [status, count] of entry.statuses) allStatuses.set(status, (allStatuses.get(status) ?? 0) + count);
    lines.push(
      `  statuses seen: ${[...allStatuses.entries()]
        .sort(([a], [b]) => a - b)
        .map(([status, count]) => `${status}×${count}`)
        .join(' ')}`,
    );
    const categories = new Map<string, number>();
    for (const [, entry] of rows) for (const [category, count] of entry.categories) categories.set(category, (categories.get(category) ?? 0) + count);
    lines.push(
      `  categories: ${[...categories.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([category, count]) => `${category}×${count}`)
        .join(' ')}`,
    );
    lines.push(`  distinct findings: ${this.findings.size}`);
    return lines.join('\n');
  }
}

function normalizeProblem(problem: string): string {
  return problem
    .replace(/\b(GET|PUT|POST|DELETE|PATCH|TRACE|PROPFIND|PURGE|LOCK|HEAD|OPTIONS)\b/g, '<method>')
    .replace(/"[^"]*"/g, '"…"')
    .replace(/\d+/g, 'N')
    .replace(/\/[^\s]*/g, '/…')
    .slice(0, 160);
}

function preview(buffer: Buffer | undefined, max = 300): string {
  if (!buffer) return '(none)';
  const text = buffer.toString('utf8');
  const shown = JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
  return `${shown} (${buffer.length} bytes${buffer.includes(0xed) ? ', raw bytes ED… present' : ''})`;
}

export function formatFinding(finding: Finding): string {
  const url = finding.url.length > 300 ? `${finding.url.slice(0, 300)}… (${Buffer.byteLength(finding.url)} bytes)` : finding.url;
  return [
    `[${finding.config}] ${finding.operation} — ${finding.category} (${finding.note}); ${finding.count} similar`,
    `  problems: ${finding.problems.join(' | ')}`,
    `  request:  ${finding.method} ${url}`,
    `  headers:  ${JSON.stringify(finding.headers.map(([name, value]) => `${name}: ${value.length > 80 ? `${value.slice(0, 80)}…` : value}`))}`,
    `  body:     ${preview(finding.body)}`,
    `  response: ${finding.status} ${JSON.stringify(Object.fromEntries(Object.entries(finding.responseHeaders).filter(([name]) => ['content-type', 'allow', 'retry-after', 'location', 'www-authenticate', 'content-length'].includes(name))))} ${JSON.stringify(finding.responseText.slice(0, 400))}`,
  ].join('\n');
}

export interface RunOptions {
  context: FuzzContext;
  server: Server;
  operation: Operation;
  seed: number;
  numRuns: number;
  stats: FuzzStats;
  /** Called after each response (e.g. to collect job ids). */
  observe?: (fuzzCase: FuzzCase, observed: Observed) => void;
}

/** Runs one seed of one operation: numRuns requests, every response judged; returns the problems found. */
export async function fuzzOperation(options: RunOptions): Promise<Finding[]> {
  const { context, server, operation, seed, numRuns, stats } = options;
  const found = new Set<Finding>();
  let sent = 0;
  await fc.assert(
    fc.asyncProperty(caseArbitrary(context, operation), fc.nat(1000), async (fuzzCase, jobPick) => {
      const url = materialize(context, { ...fuzzCase, query: fuzzCase.query.map(([name, value]) => [name, value?.replace('{{job}}', `{{job:${jobPick}}}`)]) });
      const observed = await send(server, fuzzCase.method, url, fuzzCase.headers, fuzzCase.body);
      sent++;
      stats.record(operation.id, seed, fuzzCase.category, observed.status, observed.ms);
      if (isObject(observed.json) && typeof observed.json.job_id === 'string' && observed.status === 202) context.jobIds.push(observed.json.job_id);
      options.observe?.(fuzzCase, observed);
      const problems = judge(context, operation, fuzzCase, url, observed);
      if (problems.length > 0) {
        found.add(
          stats.addFinding({
            config: context.config.name,
            operation: operation.id,
            category: fuzzCase.category,
            problems,
            method: fuzzCase.method,
            url,
            headers: fuzzCase.headers,
            ...(fuzzCase.body ? { body: fuzzCase.body } : {}),
            note: fuzzCase.note,
            status: observed.status,
            responseHeaders: observed.headers,
            responseText: observed.text,
          }),
        );
      }
      return true;
    }),
    { seed, numRuns, endOnFailure: true },
  );
  if (sent !== numRuns) throw new Error(`${operation.id}: sent ${sent} requests, wanted ${numRuns}`);
  return [...found];
}

// ---------------------------------------------------------------------------------------
// Raw sockets: what Node's HTTP parser answers before the app sees a request
// ---------------------------------------------------------------------------------------

export interface RawResponse {
  /** 0 when the server closed without an HTTP answer. */
  status: number;
  statusLine: string;
  headers: Record<string, string>;
  body: string;
  bytes: number;
  closed: boolean;
  error?: string;
}

/** Writes bytes to a fresh connection and reads until the server closes it (or the timeout). */
export function rawRequest(port: number, payload: Buffer, timeoutMs = 5000): Promise<RawResponse> {
  return new Promise((resolvePromise) => {
    const chunks: Buffer[] = [];
    let settled = false;
    let errorText: string | undefined;
    const socket = netConnect({ port, host: '127.0.0.1' }, () => {
      socket.write(payload, (error) => {
        if (error) errorText = error.message;
      });
    });
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const raw = Buffer.concat(chunks);
      const text = raw.toString('latin1');
      const headEnd = text.indexOf('\r\n\r\n');
      const head = headEnd >= 0 ? text.slice(0, headEnd) : text;
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
      const body = headEnd >= 0 ? raw.subarray(Buffer.byteLength(text.slice(0, headEnd + 4), 'latin1')).toString('utf8') : '';
      resolvePromise({ status, statusLine, headers, body, bytes: raw.length, closed, ...(errorText ? { error: errorText } : {}) });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error) => {
      errorText = error.message;
    });
    socket.on('close', () => finish(true));
  });
}
