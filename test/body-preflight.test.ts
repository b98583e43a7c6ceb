/**
 * Issue 26, item 1: a body with bad text AND extreme nesting answered 500 (the text check's
 * copy for the suggested resend recursed before the depth check ran). Every POST body now
 * passes one preflight, size → depth → text → schema, before any route; what walks the body
 * after it meets at most MAX_BODY_DEPTH levels.
 */
import fc from 'fast-check';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_DEPTH } from '../api/http/body-depth.ts';
import { storableText } from '../storage/text-check.ts';
import { toWellFormedText } from '../core/well-formed-text.ts';
import { buildApp, type BuiltApp } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { MAX_JSON_BODY_BYTES } from './helpers/fuzz.ts';

let built: BuiltApp;
const logged: string[] = [];

beforeAll(async () => {
  built = await buildApp(writeFixtureContent(), { log: (line) => logged.push(line) });
});

const post = (path: string, body: string, headers: [string, string][] = []) => {
  let test = request(built.app).post(path).set('Content-Type', 'application/json');
  const grouped = new Map<string, string[]>();
  for (const [name, value] of headers) grouped.set(name, [...(grouped.get(name) ?? []), value]);
  for (const [name, values] of grouped) test = test.set(name, (values.length === 1 ? values[0]! : values) as string);
  return test.send(body);
};

/** The reproduction of the issue: a NUL in identity and 5,000 nested arrays in an unknown field. */
const REPRODUCTION = `{"id":"TST-D1","answer":"x","identity":"a \\u0000 b","justification":"dissent","extra":${'['.repeat(5_000)}${']'.repeat(5_000)}}`;

/** Every POST path of the app but MCP (which answers in JSON-RPC), and paths with no POST at all. */
const POST_PATHS = [
  '/api/contribute',
  '/api/store',
  '/api/council',
  '/api/query',
  '/api/play',
  '/api/tensions/dispositions',
  '/api/jobs/cancel',
  '/api/federation/offer',
];
const OTHER_PATHS = ['/api/health', '/atlas/', '/nowhere'];

describe('the issue’s reproduction', () => {
  it.each(POST_PATHS)('%s: 400 BODY_TOO_DEEP, not a 500', async (path) => {
    const response = await post(path, REPRODUCTION);
    expect(response.status, response.text.slice(0, 300)).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'BODY_TOO_DEEP', details: { max_depth: MAX_BODY_DEPTH } });
    expect(response.body.error.agent_action).toMatch(/flat JSON object/);
  });

  it('on /api/store with the Idempotency-Key header sent twice', async () => {
    const response = await post('/api/store', REPRODUCTION, [
      ['Idempotency-Key', 'k-1'],
      ['Idempotency-Key', 'k-1'],
    ]);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('BODY_TOO_DEEP');
  });

  it.each(OTHER_PATHS)('%s (no POST route): refused as a body before routing, not a 500', async (path) => {
    const response = await post(path, REPRODUCTION);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('BODY_TOO_DEEP');
  });

  it('on /api/mcp: the JSON-RPC error of its protocol', async () => {
    const response = await request(built.app)
      .post('/api/mcp')
      .set('Content-Type', 'application/json')
      .set('Accept', 'application/json, text/event-stream')
      .send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"info","arguments":{"x":"\\u0000","y":${'['.repeat(5_000)}${']'.repeat(5_000)}}}}`);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ jsonrpc: '2.0', id: 3, error: { code: -32600 } });
  });
});

type Bad = 'nul' | 'lone-surrogate' | 'bidi' | 'none';
const BAD_TEXT: Record<Bad, string> = { nul: '\\u0000', 'lone-surrogate': '\\ud800', bidi: '\\u202e', none: '' };

describe('the order of the checks: size → depth → text → schema', () => {
  const shapes = fc.record({
    path: fc.constantFrom(...POST_PATHS, ...OTHER_PATHS),
    bad: fc.constantFrom<Bad>('nul', 'lone-surrogate', 'bidi', 'none'),
    /** Where the bad text sits: a known field, an unknown one, a key, inside the deep part. */
    where: fc.constantFrom('field', 'unknown', 'key', 'deep'),
    depth: fc.oneof(fc.integer({ min: 1, max: MAX_BODY_DEPTH - 2 }), fc.integer({ min: MAX_BODY_DEPTH + 1, max: 30_000 })),
    padding: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 200_000 })),
  });

  it('any mix of bad text, depth and size gets the first check it fails, never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(shapes, async ({ path, bad, where, depth, padding }) => {
        const text = BAD_TEXT[bad];
        const inner = `${'['.repeat(depth - 1)}${where === 'deep' ? `"${text}"` : '1'}${']'.repeat(depth - 1)}`;
        const key = where === 'key' ? `k${text}` : 'k';
        const body = `{"q":"${where === 'field' ? `why${text}` : 'why'}","${key}":${inner},"pad":"${'a'.repeat(padding)}"${where === 'unknown' ? `,"x":"${text}"` : ''}}`;
        const response = await post(path, body);
        const deep = depth + 1 > MAX_BODY_DEPTH;
        const illFormed = bad === 'nul' || bad === 'lone-surrogate';
        if (Buffer.byteLength(body) > MAX_JSON_BODY_BYTES) expect(response.body.error?.code).toBe('PAYLOAD_TOO_LARGE');
        else if (deep) expect(response.body.error?.code).toBe('BODY_TOO_DEEP');
        else if (illFormed) expect(response.body.error?.code).toBe('INVALID_TEXT');
        // 503 is documented where a configuration is missing (no panel, no ingestion secret).
        else expect(response.body.error?.code).not.toBe('INTERNAL_ERROR');
        expect(response.status).not.toBe(500);
        expect(response.text).not.toMatch(/\bat .*\.ts:\d+/);
      }),
      { numRuns: 150 },
    );
    expect(logged.filter((line) => /INTERNAL_ERROR/.test(line))).toEqual([]);
  });
});

describe('storableText (the resend copy of a refused body)', () => {
  /** By plain recursion: the reference the iterative copy must agree with. */
  const reference = (value: unknown): unknown => {
    if (typeof value === 'string') return toWellFormedText(value);
    if (Array.isArray(value)) return value.map(reference);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [toWellFormedText(key), reference(inner)]));
  };

  it('agrees with a recursive copy on any JSON value with hostile strings and keys', () => {
    const hostile = fc.string({ unit: 'binary', maxLength: 6 }).map((text) => text.replace(/a/g, '\u0000').replace(/b/g, '\ud800'));
    const values = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, hostile, fc.integer(), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
      array: fc.array(tie('value'), { maxLength: 4 }),
      object: fc.dictionary(hostile, tie('value'), { maxKeys: 4 }),
    })).value;
    fc.assert(
      fc.property(values, (value) => {
        expect(storableText(value)).toStrictEqual(reference(value));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps "__proto__" as an own key, as JSON.parse does', () => {
    const copy = storableText(JSON.parse('{"__proto__":{"a":"\\u0000"}}') as unknown) as Record<string, unknown>;
    expect(Object.keys(copy)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
  });

  it('copies a value nested far deeper than the call stack would allow', () => {
    let deep: unknown = 'bottom \u0000';
    for (let level = 0; level < 200_000; level++) deep = level % 2 === 0 ? [deep] : { k: deep };
    let copy = storableText(deep);
    for (let level = 0; level < 200_000; level++) copy = Array.isArray(copy) ? copy[0] : (copy as { k: unknown }).k;
    expect(copy).toBe('bottom ');
  });
});
