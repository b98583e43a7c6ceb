/**
 * Issue 27: the route table parses each operation's declared query before its handler, and
 * /openapi.json lists the codes that parsing can produce. Here every route of the app is walked
 * with invalid queries generated from its declaration, a malformed Idempotency-Key where one is
 * declared, and with one request per code its handler throws; the 400 codes seen must be exactly the 400 codes documented. Then every documented
 * value of every closed parameter (enums, flags, comma lists) is sent and must be accepted, and
 * one undocumented value must be refused with the declaration's code.
 */
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, routeTable } from '../api/app.ts';
import type { RateLimits } from '../api/http/rate-limit.ts';
import type { Method, RouteDefinition } from '../api/routes/types.ts';
import { acceptedValues, declaredCodes, invalidQueries, minimalQuery } from '../core/declared-query.ts';
import { exampleBody, exampleQuery } from '../core/examples.ts';
import { buildApp, type BuiltApp } from '../devkit/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { createLiveApp, INGEST_SECRET, scriptDefaults, testPanelConfig } from '../devkit/live.ts';
import type { QueryParameter } from '../schemas/api/parameters.ts';
import type { RawQuery } from '../schemas/errors.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';

const WINDOW = { limit: 100_000, windowMs: 3_600_000 };
const NO_LIMITS: RateLimits = { contribute: WINDOW, play: WINDOW, live: WINDOW, liveGlobal: WINDOW, council: WINDOW, councilGlobal: WINDOW };

/**
 * The body preflight every POST shares (api/openapi/operation.ts adds these codes to each): an
 * unreadable, over-deep or ill-formed body is refused before the route table, whatever the route.
 * Provoked per route by test/body-depth.test.ts, test/well-formed-text.test.ts and the fuzz.
 */
const BODY_PREFLIGHT = ['INVALID_JSON', 'BAD_REQUEST', 'BODY_TOO_DEEP', 'INVALID_TEXT'];

interface Call {
  method?: Method;
  query?: RawQuery;
  body?: unknown;
  headers?: Record<string, string>;
}

const ANSWER = { id: 'TST-D1', answer: 'Ownership comes by degrees.', identity: 'Dogwood', justification: 'new_position' };
const PROPOSAL = { action: 'propose', title: 'A synthesis', text: 'Two readings of refusal.', identity: 'Dogwood', sources: ['TST-1'] };
const BAD_KEY = { 'Idempotency-Key': 'a b' };

/**
 * The 400 codes each handler throws beyond what its declaration produces, one request each:
 * rules across parameters, body shapes, domain values, the Idempotency-Key header.
 */
const HANDLER_CASES: Record<string, Record<string, Call>> = {
  query: {
    PARAM_MISSING: { query: { layers: 'canon' } },
    CONFLICTING_PARAMETERS: { query: { q: 'tides', job: 'job_nope' } },
    INVALID_TEXT: { query: { q: 'tides\u0000', async: '1' } },
  },
  queryPost: {
    INVALID_BODY: { body: { query: 5 } },
    PARAM_MISSING: { body: { query: ' ' } },
    CONFLICTING_PARAMETERS: { body: { query: 'tides', session_id: 'sess_x', new_session: true } },
  },
  tensions: { INVALID_PARAMETER: { query: { concept: 'nowhere-at-all' } } },
  recordDisposition: { INVALID_BODY: { body: { kind: 'bogus' }, headers: { Authorization: `Bearer ${INGEST_SECRET}` } } },
  councilGet: { INVALID_TEXT: { query: { q: 'tides\u0000', async: '1' } } },
  councilPost: {
    INVALID_BODY: { body: { q: 5 } },
    PARAM_MISSING: { body: {} },
    CONFLICTING_PARAMETERS: { body: { council_id: 'council_x', q: 'tides', persist: true } },
  },
  trace: { INVALID_TEXT: { query: { q: 'tides\u0000', async: '1' } } },
  cancelJob: {
    INVALID_BODY: { body: { job: 5 } },
    PARAM_MISSING: { body: {} },
    CONFLICTING_PARAMETERS: { query: { job: 'job_a' }, body: { job: 'job_b' } },
  },
  contribute: {
    INVALID_BODY: { body: { id: 'TST-D1', identity: 'Dogwood' } },
    INVALID_JUSTIFICATION: { body: { ...ANSWER, justification: 'because' } },
  },
  store: {
    UNKNOWN_ACTION: { body: { ...PROPOSAL, action: 'delete' } },
    INVALID_BODY: { body: { action: 'propose', title: 'Only a title' } },
    UNKNOWN_SOURCE: { body: { ...PROPOSAL, sources: ['TST-1', 'NOPE-1'] } },
  },
  recordPlay: { INVALID_BODY: { body: { slug: 5 } } },
  federationOffer: { INVALID_BODY: { body: { offer: 5 } } },
  getRobotsTxt: { BAD_REQUEST: { headers: { Host: 'not a host' } } },
  getSitemap: { BAD_REQUEST: { headers: { Host: 'not a host' } } },
};

/** A value beside which a closed value can succeed (second_round is a step of a deliberation). */
const COMPANIONS: Record<string, RawQuery> = { 'query.second_round': { sync: '1' } };

let fake: FakeOpenAI;
let built: BuiltApp;
let app: Express;
let routes: readonly RouteDefinition[];
let document: { paths: Record<string, Record<string, Operation>> };

interface Operation {
  operationId: string;
  parameters?: { name: string; in: string; schema: { enum?: string[]; items?: { enum?: string[] } } }[];
  responses: Record<string, { 'x-error-codes'?: string[] }>;
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
  scriptDefaults(fake);
  built = await buildApp(writeFixtureContent());
  const store = createSqliteStore(':memory:');
  const wired = createLiveApp(built.corpus, store, testPanelConfig(fake), undefined, NO_LIMITS);
  app = createApp({
    corpus: built.corpus,
    live: wired.live,
    store,
    limits: NO_LIMITS,
    ingestSecret: INGEST_SECRET,
    log: () => {},
    appendDisposition: () => {
      throw new Error('no disposition is written by these cases');
    },
  });
  routes = routeTable(app);
  document = (await request(app).get('/openapi.json')).body;
}, 120_000);

afterAll(async () => {
  await fake?.close();
});

function url(path: string, query: RawQuery = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) search.append(name, one);
  }
  const text = search.toString();
  return text ? `${path}?${text}` : path;
}

async function send(path: string, method: Method, call: Call): Promise<{ status: number; code: string | undefined; body: Record<string, unknown> }> {
  const target = url(path, call.query);
  let pending = method === 'GET' ? request(app).get(target) : request(app).post(target);
  for (const [name, value] of Object.entries(call.headers ?? {})) pending = pending.set(name, value);
  const response = method === 'POST' ? await pending.send((call.body ?? {}) as object) : await pending;
  const body = response.body as Record<string, unknown>;
  return { status: response.status, code: (body?.error as { code?: string } | undefined)?.code, body };
}

/** The route's examples for required parameters, so a generated query differs from a good one only in its fault. */
function baseQuery(route: RouteDefinition, parameters: readonly QueryParameter[]): Record<string, string> {
  return { ...minimalQuery(parameters), ...exampleQuery(built.corpus, route.path) };
}

function generated(route: RouteDefinition, parameters: readonly QueryParameter[]): RawQuery[] {
  return invalidQueries(parameters, baseQuery(route, parameters));
}

function operations(): { route: RouteDefinition; method: Method; id: string; documented: Operation }[] {
  return routes.flatMap((route) =>
    (Object.keys(route.methods) as Method[]).map((method) => {
      const documented = document.paths[route.path]![method.toLowerCase()]!;
      return { route, method, id: documented.operationId, documented };
    }),
  );
}

describe('every route: the 400 codes generated invalid input gets are the documented ones', () => {
  it('covers every operation of the route table', () => {
    expect(operations().length).toBeGreaterThan(25);
    for (const id of Object.keys(HANDLER_CASES)) expect(operations().map((operation) => operation.id)).toContain(id);
  });

  it('each operation: observed (declaration + handler cases) equals documented', async () => {
    const problems: string[] = [];
    for (const { route, method, id, documented } of operations()) {
      const parameters = route.operations[method]!.query;
      const observed = new Map<string, string>();
      const record = (status: number, code: string | undefined, what: string) => {
        if (code === undefined) return;
        const listed = documented.responses[String(status)]?.['x-error-codes'] ?? [];
        if (!listed.includes(code)) problems.push(`${id}: ${what} answered ${status} ${code}, not documented at ${status}`);
        if (status === 400 && !observed.has(code)) observed.set(code, what);
      };
      for (const query of parameters ? generated(route, parameters) : []) {
        const result = await send(route.path, method, { query, ...(method === 'POST' ? { body: {} } : {}) });
        record(result.status, result.code, `?${new URLSearchParams(query as Record<string, string>).toString()}`);
      }
      // A declared Idempotency-Key header, malformed, on an otherwise good request.
      if (documented.parameters?.some((parameter) => parameter.in === 'header' && parameter.name === 'Idempotency-Key')) {
        const good = parameters ? baseQuery(route, parameters) : {};
        const result = await send(route.path, method, {
          query: good,
          headers: BAD_KEY,
          ...(method === 'POST' ? { body: exampleBody(built.corpus, route.path) } : {}),
        });
        if (result.code !== 'INVALID_PARAMETER') problems.push(`${id}: a malformed Idempotency-Key answered ${result.status} ${result.code ?? ''}`);
        record(result.status, result.code, 'a malformed Idempotency-Key');
      }
      for (const [code, call] of Object.entries(HANDLER_CASES[id] ?? {})) {
        const result = await send(route.path, method, call);
        if (result.code !== code) problems.push(`${id}: the case for ${code} answered ${result.status} ${result.code ?? ''}`);
        record(result.status, result.code, `case ${code}`);
      }
      const documented400 = documented.responses['400']?.['x-error-codes'] ?? [];
      const shared = method === 'POST' ? BODY_PREFLIGHT : [];
      for (const code of documented400) {
        if (!observed.has(code) && !shared.includes(code)) problems.push(`${id}: documents 400 ${code}, which no generated input or handler case produced`);
      }
      // The parser's own codes reach the client: no handler answers before the declaration.
      for (const code of declaredCodes(parameters)) {
        if (!observed.has(code)) problems.push(`${id}: the declaration produces ${code} but no request got it`);
      }
    }
    expect(problems).toEqual([]);
  }, 300_000);
});

describe('closed parameters: every documented value is accepted, an undocumented one refused', () => {
  it('each enum, flag and comma-list parameter of every operation', async () => {
    const problems: string[] = [];
    let sent = 0;
    for (const { route, method, id, documented } of operations()) {
      for (const parameter of route.operations[method]!.query ?? []) {
        const accepted = acceptedValues(parameter);
        if (!accepted) continue;
        // The documented values are read from /openapi.json, not from the declaration.
        const schema = documented.parameters?.find((entry) => entry.in === 'query' && entry.name === parameter.name)?.schema;
        const values = schema?.enum ?? schema?.items?.enum;
        if (!values) {
          problems.push(`${id}: ${parameter.name} is closed but /openapi.json lists no values`);
          continue;
        }
        expect(values).toEqual(accepted);
        const base = { ...baseQuery(route, route.operations[method]!.query!), ...COMPANIONS[`${id}.${parameter.name}`] };
        for (const value of values) {
          sent++;
          const result = await send(route.path, method, { query: { ...base, [parameter.name]: value } });
          if (result.status >= 400 && result.status < 500)
            problems.push(`${id}: ${parameter.name}=${value} (documented) answered ${result.status} ${result.code}`);
        }
        const refused = await send(route.path, method, { query: { ...base, [parameter.name]: 'undocumented-value' } });
        const code = parameter.code ?? 'INVALID_PARAMETER';
        if (refused.status !== 400 || refused.code !== code) {
          problems.push(`${id}: ${parameter.name}=undocumented-value answered ${refused.status} ${refused.code}, expected 400 ${code}`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(sent).toBeGreaterThan(40);
  }, 300_000);
});

describe('async on council and trace (issue 29 item 7): documented as the code behaves', () => {
  for (const path of ['/api/council', '/api/trace']) {
    it(`${path}: 1 and true submit a job, 0 and false run synchronously, any other value is 400 INVALID_PARAMETER`, async () => {
      const q = 'Who owns a refusal?';
      for (const value of ['1', 'true', 'TRUE']) expect((await send(path, 'GET', { query: { q, async: value } })).status).toBe(202);
      for (const value of ['0', 'false']) expect((await send(path, 'GET', { query: { q, async: value } })).status).toBe(200);
      const refused = await send(path, 'GET', { query: { q, async: 'yes' } });
      expect(refused.status).toBe(400);
      expect(refused.code).toBe('INVALID_PARAMETER');
      // The suggestion is the same call without the refused value, and it succeeds.
      const next = (refused.body.error as { suggested_next_call: { query: Record<string, string> } }).suggested_next_call;
      expect(next.query).toEqual({ q });
      const operation = document.paths[path]!.get!;
      const described = operation.parameters!.find((entry) => entry.name === 'async')!;
      expect(described.schema.enum).toEqual(['1', 'true', '0', 'false']);
      expect(JSON.stringify(described)).not.toMatch(/any other value runs/);
    }, 60_000);
  }
});
