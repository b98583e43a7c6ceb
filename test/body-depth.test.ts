/**
 * Deeply nested request bodies (issue 13, item 3): 20,000 nested `[` fit in 40 kB, under
 * the 64 kB limit, and used to overflow the stack of the MCP batch check (and of
 * JSON.stringify on POST /api/store) into a 500. Every body under the limit, however it
 * nests, now gets an answer in its route's own protocol: a JSON-RPC error on /api/mcp, the
 * §7 envelope (BODY_TOO_DEEP) elsewhere.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import fc from 'fast-check';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_DEPTH, nestsDeeperThan } from '../api/http/body-depth.ts';
import { buildApp, type BuiltApp } from '../devkit/app.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { MAX_JSON_BODY_BYTES, type Json } from './helpers/fuzz.ts';

let built: BuiltApp;
const logged: string[] = [];

beforeAll(async () => {
  built = await buildApp(writeFixtureContent(), { log: (line) => logged.push(line) });
});

/** Depth by plain recursion: the reference the iterative check must agree with. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

describe('nestsDeeperThan', () => {
  it('agrees with a recursive depth for any JSON value and limit', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 9 }), (value, limit) => {
        expect(nestsDeeperThan(value, limit)).toBe(depthOf(value) > limit);
      }),
      { numRuns: 300 },
    );
  });

  it('walks a million levels without recursion', () => {
    let deep: unknown = 1;
    for (let level = 0; level < 1_000_000; level++) deep = level % 2 === 0 ? [deep] : { k: deep };
    expect(nestsDeeperThan(deep, MAX_BODY_DEPTH)).toBe(true);
    expect(nestsDeeperThan(deep, 2_000_000)).toBe(false);
  });
});

type Kind = 'array' | 'object';

/** The text of `depth` nested containers, cycling through `pattern`, around a scalar. */
function nested(depth: number, pattern: readonly Kind[]): string {
  const kinds = Array.from({ length: depth }, (_, level) => pattern[level % pattern.length]!);
  return (
    kinds.map((kind) => (kind === 'array' ? '[' : '{"k":')).join('') +
    '1' +
    kinds
      .reverse()
      .map((kind) => (kind === 'array' ? ']' : '}'))
      .join('')
  );
}

/** Where the nested value sits in an otherwise plausible body of each route. */
const PLACEMENTS: Record<string, ((inner: string) => string)[]> = {
  '/api/mcp': [
    (inner) => inner,
    (inner) => `[${inner}]`,
    (inner) => `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},${inner}]`,
    (inner) => `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fast_context","arguments":{"q":"refusal","extra":${inner}}}}`,
    (inner) => `{"jsonrpc":"2.0","id":${inner},"method":"tools/list"}`,
    (inner) =>
      `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":${inner},"clientInfo":{"name":"x","version":"1"}}}`,
  ],
  '/api/contribute': [(inner) => inner, (inner) => `{"id":"TST-D1","identity":"m","justification":"x","answer":${inner}}`],
  '/api/store': [(inner) => `{"action":${inner}}`, (inner) => `{"action":"propose","title":"t","text":"x","identity":"m","sources":${inner}}`],
  '/api/query': [(inner) => `{"query":${inner}}`],
  '/api/council': [(inner) => `{"q":${inner}}`],
  '/api/play': [(inner) => `{"slug":${inner}}`],
};
const PATHS = Object.keys(PLACEMENTS);

const post = (path: string, body: string) =>
  request(built.app).post(path).set('Content-Type', 'application/json').set('Accept', 'application/json, text/event-stream').send(body);

function placedBody(path: string, placement: number, depth: number, pattern: readonly Kind[]): string {
  const place = PLACEMENTS[path]!;
  return place[placement % place.length]!(nested(depth, pattern));
}

/** Arbitrary bodies nested deeper than the limit, up to the body size limit. */
const deepBodies = fc
  .record({
    path: fc.constantFrom(...PATHS),
    placement: fc.nat(),
    pattern: fc.array(fc.constantFrom<Kind>('array', 'object'), { minLength: 1, maxLength: 4 }),
    // Up to 64 kB of brackets alone; object levels take 6 bytes, so the size is checked below.
    depth: fc.oneof(
      fc.integer({ min: MAX_BODY_DEPTH + 1, max: MAX_BODY_DEPTH + 10 }),
      fc.integer({ min: MAX_BODY_DEPTH + 1, max: MAX_JSON_BODY_BYTES / 2 - 16 }),
    ),
  })
  .map((shape) => ({ ...shape, body: placedBody(shape.path, shape.placement, shape.depth, shape.pattern) }))
  .filter(({ body }) => Buffer.byteLength(body) <= MAX_JSON_BODY_BYTES);

describe('POST bodies nested past the limit', () => {
  it('the issue’s case: 20,000 nested [ on /api/mcp is a JSON-RPC error, not a 500', async () => {
    const body = '['.repeat(20_000) + ']'.repeat(20_000);
    expect(Buffer.byteLength(body)).toBeLessThan(MAX_JSON_BODY_BYTES);
    const response = await post('/api/mcp', body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/more than 64 levels deep/) } });
  });

  it('the same shape on /api/store (its action was echoed with JSON.stringify) is BODY_TOO_DEEP', async () => {
    const response = await post('/api/store', `{"action":${'['.repeat(15_000)}${']'.repeat(15_000)}}`);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({
      code: 'BODY_TOO_DEEP',
      retryable: false,
      details: { max_depth: MAX_BODY_DEPTH },
      suggested_next_call: { method: 'GET', path: '/openapi.json' },
    });
    expect(response.body.error.agent_action).toEqual(expect.any(String));
  });

  it('any depth and shape of arrays and objects up to the size limit: JSON-RPC error on /api/mcp, the envelope elsewhere', async () => {
    await fc.assert(
      fc.asyncProperty(deepBodies, async ({ path, body }) => {
        const response = await post(path, body);
        expect(response.status).toBe(400);
        expect(response.text).not.toMatch(/\bat .*\.ts:\d+/);
        if (path === '/api/mcp') {
          expect(response.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
          expect(response.body.error.message).toMatch(/levels deep/);
        } else {
          expect(response.body.error.code).toBe('BODY_TOO_DEEP');
        }
      }),
      { numRuns: 120 },
    );
    expect(logged.filter((line) => /unhandled/.test(line))).toEqual([]);
  });

  it('the id of a single over-deep message is kept when it is usable', async () => {
    const response = await post(
      '/api/mcp',
      `{"jsonrpc":"2.0","id":"a1","method":"tools/call","params":{"name":"info","arguments":{"x":${nested(200, ['array'])}}}}`,
    );
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ jsonrpc: '2.0', id: 'a1', error: { code: -32600 } });
  });

  it('bodies within the limit are served as before: never BODY_TOO_DEEP, never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...PATHS),
        fc.nat(),
        fc.integer({ min: 1, max: MAX_BODY_DEPTH - 4 }),
        fc.array(fc.constantFrom<Kind>('array', 'object'), { minLength: 1, maxLength: 4 }),
        async (path, placement, depth, pattern) => {
          const response = await post(path, placedBody(path, placement, depth, pattern));
          expect(response.status).toBeLessThan(500);
          expect(response.body.error?.code).not.toBe('BODY_TOO_DEEP');
          if (path === '/api/mcp') expect(String(response.body.error?.message ?? '')).not.toMatch(/levels deep/);
        },
      ),
      { numRuns: 80 },
    );
  });
});

describe('a real MCP client over Streamable HTTP', () => {
  let server: Server;
  let client: Client;
  afterAll(async () => {
    await client?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('connects, lists and calls tools, before and after an over-deep body on the same server', async () => {
    server = await new Promise<Server>((resolve) => {
      const started = built.app.listen(0, '127.0.0.1', () => resolve(started));
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = new Client({ name: 'polyphony-depth-test', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`)));
    expect((await client.listTools()).tools).toHaveLength(10);

    const deep = await fetch(`${base}/api/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '['.repeat(20_000) + ']'.repeat(20_000),
    });
    expect(deep.status).toBe(400);
    expect(((await deep.json()) as Json).error).toMatchObject({ code: -32600 });

    const result = await client.callTool({ name: 'read_divergences', arguments: { id: 'TST-D1' } });
    expect(result.isError).toBeFalsy();
    expect(JSON.stringify(result.structuredContent)).toContain('TST-D1');
  });
});
