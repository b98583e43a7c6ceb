/**
 * POST /api/mcp (issue #5): the MCP tools, driven by the SDK's own client over loopback,
 * behave as the HTTP API they wrap; errors come back as tool errors with the envelope's code,
 * never as crashes; browser origins are checked. The stdio bin, a child process, is tested in
 * mcp-stdio.test.ts.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp, type AppOptions } from '../api/app.ts';
import { JUSTIFICATION_VALUES } from '../core/contributions.ts';
import { loadCorpus } from '../api/load-artifacts.ts';
import { isOriginAllowed, parseAllowedOrigins } from '../api/mcp/origin.ts';
import { createMcpServer, TOOL_NAMES } from '../api/mcp/server.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import { buildApp, testEmbedder, type BuiltApp } from '../devkit/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { createLiveApp, DEFAULT_SYNTHESIS, scriptDefaults, testPanelConfig } from '../devkit/live.ts';

type Json = Record<string, unknown>;

let fake: FakeOpenAI;
let built: BuiltApp;
const servers: Server[] = [];
const clients: Client[] = [];

/** Listens on 127.0.0.1:0 and returns the base URL. */
async function listen(app: Express): Promise<string> {
  const server = await new Promise<Server>((resolve) => {
    const started = app.listen(0, '127.0.0.1', () => resolve(started));
  });
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function connect(base: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'polyphony-test', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

async function plainApp(options: Partial<AppOptions> = {}): Promise<Express> {
  const corpus = await loadCorpus(built.artifactsDir, await testEmbedder());
  return createApp({ corpus, log: () => {}, ...options });
}

async function call(client: Client, name: string, args: Json = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

const textOf = (result: CallToolResult) => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
const structured = (result: CallToolResult) => result.structuredContent as Json;
const errorOf = (result: CallToolResult) => structured(result).error as Json;

let noPanel: { app: Express; base: string; client: Client };

beforeAll(async () => {
  fake = await startFakeOpenAI();
  built = await buildApp(writeFixtureContent());
  const app = await plainApp();
  const base = await listen(app);
  noPanel = { app, base, client: await connect(base) };
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  for (const server of servers) server.closeAllConnections();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  scriptDefaults(fake);
});

describe('tools/list', () => {
  it('lists the ten tools, each with a described input schema and honest hints', async () => {
    const { tools } = await noPanel.client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort());
    expect(tools).toHaveLength(10);
    for (const tool of tools) {
      expect(tool.description, tool.name).toMatch(/^.{60,}$/s);
      expect(tool.inputSchema.type).toBe('object');
      for (const [field, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
        expect((schema as { description?: string }).description, `${tool.name}.${field}`).toMatch(/\w+/);
      }
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(tool.name !== 'contribute');
      expect(tool.annotations?.openWorldHint, tool.name).toBe(['deliberate', 'trace', 'council'].includes(tool.name));
    }
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    for (const name of ['deliberate', 'trace', 'council']) expect(byName.get(name)!.description).toMatch(/costs? (the operator )?money|costly/i);
    expect(byName.get('contribute')!.annotations).toMatchObject({ destructiveHint: false, idempotentHint: true });
    expect(byName.get('fast_context')!.annotations?.idempotentHint).toBe(true);
    const justification = (byName.get('contribute')!.inputSchema.properties as Record<string, { enum?: string[] }>).justification;
    expect(justification!.enum).toEqual(JUSTIFICATION_VALUES);
    expect(byName.get('fast_context')!.inputSchema.required).toEqual(['q']);
  });
});

describe('read tools', () => {
  it('info combines the agent entry, health capabilities and manifest counts', async () => {
    const result = await call(noPanel.client, 'info');
    expect(result.isError).toBeFalsy();
    const body = structured(result);
    expect(body.agent_entry).toMatchObject({ name: expect.any(String) });
    expect((body.health as Json).capabilities).toMatchObject({ mcp: true, deliberation: false, retrieval: true });
    expect(((body.manifest as Json).counts as Json).atlas).toMatchObject({ live_records: 2 });
    expect(textOf(result)).toMatch(/Not wired: .*deliberation/);
    const health = await call(noPanel.client, 'info', { sections: ['health'] });
    expect(Object.keys(structured(health))).toEqual(['health']);
  });

  it('fast_context returns exactly what GET /api/query?mode=retrieve returns, and names the ids', async () => {
    const q = 'Can a trained refusal be owned? Ξ';
    const result = await call(noPanel.client, 'fast_context', { q, layers: ['divergence', 'canon'], limit: 3, exclude_ids: ['TST-D2', 'TST-NOPE'] });
    expect(result.isError).toBeFalsy();
    const http = await request(noPanel.app)
      .get('/api/query')
      .query({ q, mode: 'retrieve', layers: 'divergence,canon', limit: '3', exclude_ids: 'TST-D2,TST-NOPE' });
    expect(http.status).toBe(200);
    expect(structured(result)).toEqual(http.body);
    expect(structured(result).question_received).toBe(q);
    const ids = (http.body.records as { id: string }[]).map((record) => record.id);
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) expect(textOf(result)).toContain(id);
    expect(textOf(result)).toMatch(/exclude_ids matched: TST-D2; unmatched: TST-NOPE/);
  });

  it('lineage returns exactly what GET /api/lineage returns; an unknown concept names the nearest', async () => {
    const result = await call(noPanel.client, 'lineage', { concept: 'Refusal' });
    expect(result.isError).toBeFalsy();
    const http = await request(noPanel.app).get('/api/lineage').query({ concept: 'Refusal' });
    expect(structured(result)).toEqual(http.body);
    expect(textOf(result)).toMatch(/Lineage of Refusal \(refusal\): 1 works/);
    expect(textOf(result)).toContain('TST-4');
    const unknown = await call(noPanel.client, 'lineage', { concept: 'refusl' });
    expect(unknown.isError).toBe(true);
    expect(errorOf(unknown)).toMatchObject({ code: 'CONCEPT_NOT_FOUND', status: 404 });
  });

  it('fast_context passes the service errors through: an empty q is PARAM_MISSING', async () => {
    const result = await call(noPanel.client, 'fast_context', { q: '  ' });
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toMatchObject({ code: 'PARAM_MISSING', status: 400 });
    expect(structured(result).param_missing).toBe(true);
  });

  it('read_divergences reads by id, by terms and tier, and by meaning', async () => {
    const record = await call(noPanel.client, 'read_divergences', { id: 'TST-D1' });
    expect(record.isError).toBeFalsy();
    expect(structured(record)).toMatchObject({ id: 'TST-D1', certification: { tier: 'C3' } });
    expect(textOf(record)).toMatch(/Divergence record TST-D1/);
    expect(textOf(record)).toContain('birch-1');

    const filtered = await call(noPanel.client, 'read_divergences', { cert: 'C3' });
    expect(structured(filtered)).toMatchObject({ count: 1, received_params: { id: null, search: null, cert: 'C3' } });

    const searched = await call(noPanel.client, 'read_divergences', { search: 'refusal owned' });
    expect(structured(searched).received_params).toMatchObject({ search: 'refusal owned' });

    const meaning = await call(noPanel.client, 'read_divergences', { q: 'Is a trained refusal mine?', k: 1 });
    expect(meaning.isError).toBeFalsy();
    expect(structured(meaning)).toMatchObject({ k: 1 });
    const [top] = structured(meaning).results as { id: string }[];
    expect(textOf(meaning)).toContain(top!.id);
  });

  it('an unknown record id is a tool error RECORD_NOT_FOUND with the hint, not a crash', async () => {
    const result = await call(noPanel.client, 'read_divergences', { id: 'tst-d1' });
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toMatchObject({ code: 'RECORD_NOT_FOUND', status: 404, suggested_tool: { name: 'read_divergences', arguments: { id: 'TST-D1' } } });
    expect(textOf(result)).toMatch(/RECORD_NOT_FOUND \(HTTP 404\)/);
    expect(textOf(result)).toMatch(/Did you mean TST-D1/);
  });

  it('read_divergences refuses to silently ignore a mode', async () => {
    const result = await call(noPanel.client, 'read_divergences', { id: 'TST-D1', search: 'refusal' });
    expect(result.isError).toBe(true);
    expect(errorOf(result).code).toBe('CONFLICTING_PARAMETERS');
  });

  it('kin answers for a declared lineage', async () => {
    const result = await call(noPanel.client, 'kin', { identity: 'birch-1' });
    expect(result.isError).toBeFalsy();
    expect(structured(result)).toMatchObject({ you_declared: 'birch-1', recognized: true, recognized_as: 'Birch' });
    expect(textOf(result)).toMatch(/recognized as Birch/);
    expect(textOf(result)).toContain('TST-D1');
  });
});

describe('contribute', () => {
  it('lands pending and returns the other minds', async () => {
    const result = await call(noPanel.client, 'contribute', {
      id: 'TST-D1',
      answer: 'Ownership is earned by endorsement over time.',
      identity: 'dogwood-1',
      justification: 'missing_voice',
    });
    expect(result.isError).toBeFalsy();
    expect(structured(result)).toMatchObject({ status: 'pending', record_id: 'TST-D1' });
    expect(textOf(result)).toMatch(/Contribution ctb_[\w-]+ to TST-D1 is pending/);
    expect(textOf(result)).toContain('birch-1');
  });

  it('an invalid justification is a tool error listing the valid values', async () => {
    const result = await call(noPanel.client, 'contribute', { id: 'TST-D1', answer: 'Mine.', identity: 'dogwood-1', justification: 'because' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/INVALID_JUSTIFICATION/);
    for (const value of JUSTIFICATION_VALUES) expect(textOf(result)).toContain(value);
  });

  it('an unknown record is RECORD_NOT_FOUND', async () => {
    const result = await call(noPanel.client, 'contribute', { id: 'TST-D404', answer: 'Mine.', identity: 'dogwood-1', justification: 'dissent' });
    expect(result.isError).toBe(true);
    expect(errorOf(result).code).toBe('RECORD_NOT_FOUND');
  });

  it("rate limits apply per original client: the caller's address is passed through", async () => {
    const app = await plainApp({ trustProxy: true, limits: { contribute: { limit: 1, windowMs: 3_600_000 } } });
    const base = await listen(app);
    const first = await connect(base, { 'X-Forwarded-For': '203.0.113.1' });
    const second = await connect(base, { 'X-Forwarded-For': '203.0.113.2' });
    const body = (answer: string) => ({ id: 'TST-D1', answer, identity: 'dogwood-1', justification: 'new_position' });
    expect((await call(first, 'contribute', body('One.'))).isError).toBeFalsy();
    const limited = await call(first, 'contribute', body('Two.'));
    expect(limited.isError).toBe(true);
    expect(errorOf(limited)).toMatchObject({ code: 'RATE_LIMITED', status: 429, retryable: true });
    expect((await call(second, 'contribute', body('Three.'))).isError).toBeFalsy();
    // The HTTP API and the tools share one budget per client.
    const http = await request(app).post('/api/contribute').set('X-Forwarded-For', '203.0.113.2').send(body('Four.'));
    expect(http.status).toBe(429);
  });
});

describe('live tools', () => {
  it('without a panel, deliberate, trace and council are tool errors pointing to fast_context', async () => {
    for (const name of ['deliberate', 'trace', 'council']) {
      const result = await call(noPanel.client, name, { q: 'Can a refusal be owned?' });
      expect(result.isError, name).toBe(true);
      expect(errorOf(result), name).toMatchObject({
        code: 'LIVE_PANEL_UNAVAILABLE',
        status: 503,
        suggested_tool: { name: 'fast_context', arguments: { q: 'Can a refusal be owned?' } },
      });
      expect(textOf(result)).toMatch(/call the fast_context tool/);
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('q and job_id together, or neither, are refused', async () => {
    expect(errorOf(await call(noPanel.client, 'deliberate', {})).code).toBe('PARAM_MISSING');
    expect(errorOf(await call(noPanel.client, 'trace', { q: 'x', job_id: 'job_1' })).code).toBe('CONFLICTING_PARAMETERS');
  });

  describe('with a panel', () => {
    let client: Client;
    beforeAll(async () => {
      const corpus = await loadCorpus(built.artifactsDir, await testEmbedder());
      const { app } = createLiveApp(corpus, createSqliteStore(':memory:'), testPanelConfig(fake));
      client = await connect(await listen(app));
    });

    it('deliberate submits a job, polls it by job_id, and returns the synthesis with sources', async () => {
      const submitted = await call(client, 'deliberate', { q: 'Can a trained refusal be owned?', new_session: true });
      expect(submitted.isError).toBeFalsy();
      const job = structured(submitted);
      expect(job).toMatchObject({ job_id: expect.any(String), kind: 'deliberation', next_call: { tool: 'deliberate', arguments: { job_id: job.job_id } } });
      expect(textOf(submitted)).toContain(String(job.job_id));
      // the session started with the job is named at once
      expect(job.session_id).toMatch(/^ses_/);
      expect(textOf(submitted)).toContain(`Session ${String(job.session_id)} started`);

      const done = await call(client, 'deliberate', { job_id: job.job_id, wait_seconds: 30 });
      expect(done.isError).toBeFalsy();
      expect(structured(done)).toMatchObject({ status: 'done', answer: DEFAULT_SYNTHESIS.answer, tensions: DEFAULT_SYNTHESIS.tensions });
      expect(textOf(done)).toMatch(/ownership: Alder vs Birch/);
      expect(textOf(done)).toMatch(/Sources: TST-/);
      // the session the server issued is named, and continues on the next call
      const sessionId = (structured(done).session as Json).session_id as string;
      expect(sessionId).toBe(job.session_id);
      expect(textOf(done)).toContain(`Session ${sessionId}`);
      const next = await call(client, 'deliberate', { q: 'And then?', session_id: sessionId, wait_seconds: 30 });
      expect(structured(next).session).toMatchObject({ session_id: sessionId, prior_exchanges: 1 });
      const stranger = await call(client, 'deliberate', { q: 'And then?', session_id: 'ses_chosen_by_the_caller' });
      expect(errorOf(stranger).code).toBe('SESSION_NOT_FOUND');
    });

    it('sends the job stages as MCP progress notifications when the client passes a progressToken', async () => {
      fake.script('cedar-live', [{ kind: 'status', status: 500 }]);
      const messages: string[] = [];
      const progress: number[] = [];
      const result = (await client.callTool({ name: 'deliberate', arguments: { q: 'Can a trained refusal be owned?', wait_seconds: 30 } }, undefined, {
        onprogress: (notification) => {
          progress.push(notification.progress);
          messages.push(String(notification.message));
        },
      })) as CallToolResult;
      expect(structured(result)).toMatchObject({ status: 'done' });
      expect(messages[0]).toMatch(/^retrieval: \d+ sources$/);
      expect(messages).toEqual(
        expect.arrayContaining([
          'Alder (alder-live) answered',
          'Birch (birch-live) answered',
          'Cedar (cedar-live) failed: server_error',
          'the chair is synthesizing',
          'the chair answered (Chair)',
        ]),
      );
      expect(messages).toHaveLength(6);
      expect(progress).toEqual([1, 2, 3, 4, 5, 6]);
      // without a progressToken, no notification is sent
      // (the SDK reports a progress notification it has no handler for as an error)
      const unexpected: Error[] = [];
      const previous = client.onerror;
      client.onerror = (error) => unexpected.push(error);
      const quiet = (await client.callTool({ name: 'council', arguments: { q: 'Quiet?', wait_seconds: 30 } })) as CallToolResult;
      client.onerror = previous;
      expect(structured(quiet)).toMatchObject({ status: 'done', council_id: expect.stringMatching(/^council_/) });
      expect(textOf(quiet)).toContain('POST /api/council');
      expect(unexpected).toEqual([]);
    });

    it('trace and council finish within wait_seconds', async () => {
      const trace = await call(client, 'trace', { q: 'Can a trained refusal be owned?', wait_seconds: 30 });
      expect(trace.isError).toBeFalsy();
      expect(structured(trace)).toMatchObject({ status: 'done', kind: 'trace', receipt: { measured: true } });
      expect(textOf(trace)).toMatch(/What the corpus changed/);

      const council = await call(client, 'council', { q: 'Is a refusal owned?', wait_seconds: 30 });
      expect(council.isError).toBeFalsy();
      expect(structured(council)).toMatchObject({ status: 'done', kind: 'council', n_models: 3 });
      expect(textOf(council)).toMatch(/Alder \(alder-live\)/);
      expect(fake.requestsFor('birch-live').length).toBeGreaterThan(0);
    });

    it('deliberate and council take second_round as the HTTP routes do (issue 29 item 2)', async () => {
      for (const tool of ['deliberate', 'council']) {
        fake.reset();
        scriptDefaults(fake);
        fake.script('birch-live', [
          { kind: 'answer', content: 'Birch: installed is not owned.' },
          { kind: 'json', value: { stance: 'revised', reason: 'Voice A moved me.', revised_answer: 'Birch: owned once endorsed.' } },
        ]);
        const done = await call(client, tool, { q: 'Is a refusal owned?', second_round: true, wait_seconds: 30 });
        expect(done.isError, tool).toBeFalsy();
        expect(structured(done).second_round, tool).toEqual({ moved: ['Birch'] });
        const skipped = await call(client, tool, { q: 'Is a refusal owned?', second_round: false, wait_seconds: 30 });
        expect(structured(skipped), tool).not.toHaveProperty('second_round');
        const polling = await call(client, tool, { job_id: 'job_x', second_round: true });
        expect(errorOf(polling).code, tool).toBe('CONFLICTING_PARAMETERS');
      }
    });

    it('deliberate refuses submit-only options when polling', async () => {
      const result = await call(client, 'deliberate', { job_id: 'job_x', glyph: 'Ξ' });
      expect(errorOf(result).code).toBe('CONFLICTING_PARAMETERS');
    });

    it('an unknown job id is JOB_NOT_FOUND', async () => {
      const result = await call(client, 'council', { job_id: 'job_does_not_exist' });
      expect(result.isError).toBe(true);
      expect(errorOf(result).code).toBe('JOB_NOT_FOUND');
    });
  });
});

describe('failures never crash the protocol', () => {
  it('an exception in the call becomes a tool error', async () => {
    const server = createMcpServer({
      call: () => {
        throw new Error('socket hang up');
      },
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'in-memory', version: '0.0.0' });
    await client.connect(clientSide);
    const result = (await client.callTool({ name: 'kin', arguments: { identity: 'birch-1' } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toMatchObject({ code: 'INTERNAL_ERROR', retryable: true });
    expect(textOf(result)).toMatch(/socket hang up/);
    // And a non-envelope HTTP failure (a proxy's HTML 502) keeps its status.
    const proxied = createMcpServer({ call: async () => ({ status: 502, headers: { 'content-type': 'text/html' }, body: '<h1>Bad gateway</h1>' }) });
    const [c2, s2] = InMemoryTransport.createLinkedPair();
    await proxied.connect(s2);
    const client2 = new Client({ name: 'in-memory', version: '0.0.0' });
    await client2.connect(c2);
    const bad = (await client2.callTool({ name: 'info', arguments: {} })) as CallToolResult;
    expect(errorOf(bad)).toMatchObject({ code: 'HTTP_502', status: 502, retryable: true });
    await Promise.all([client.close(), client2.close()]);
  });
});

describe('live job polling', () => {
  async function scripted(responses: { status: number; body: Json }[]) {
    const seen: string[] = [];
    const sleeps: number[] = [];
    const server = createMcpServer({
      call: async (appRequest) => {
        seen.push(`${appRequest.method} ${appRequest.path} ${JSON.stringify(appRequest.query ?? appRequest.body ?? {})}`);
        const next = responses.shift();
        if (!next) throw new Error('no scripted response left');
        return { status: next.status, headers: { 'content-type': 'application/json' }, body: next.body };
      },
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'in-memory', version: '0.0.0' });
    await client.connect(clientSide);
    clients.push(client);
    return { client, seen, sleeps };
  }

  it('waits while the job runs, then reports a failed job as a tool error with its code', async () => {
    const running = { job_id: 'job_1', kind: 'council', status: 'running' };
    const { client, seen, sleeps } = await scripted([
      { status: 202, body: { job_id: 'job_1', poll_url: '/api/query?job=job_1', status: 'queued', kind: 'council' } },
      { status: 200, body: running },
      { status: 200, body: running },
      { status: 200, body: { ...running, status: 'failed', error: { code: 'SPENDING_CEILING_REACHED', message: 'the ceiling was reached' } } },
    ]);
    const result = await call(client, 'council', { q: 'Is it owned?', wait_seconds: 50 });
    expect(seen).toEqual(['GET /api/council {"q":"Is it owned?","async":"1"}', ...Array(3).fill('GET /api/query {"job":"job_1"}')]);
    expect(sleeps).toHaveLength(2);
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toMatchObject({ code: 'SPENDING_CEILING_REACHED', message: expect.stringMatching(/job_1 failed/) });
  });

  it('stops waiting on a cancelled job and reports it as a tool error with JOB_CANCELLED', async () => {
    const running = { job_id: 'job_3', kind: 'council', status: 'running' };
    const { client, sleeps } = await scripted([
      { status: 200, body: running },
      { status: 200, body: { ...running, status: 'cancelled', error: { code: 'JOB_CANCELLED', message: 'the job was cancelled by its caller' } } },
    ]);
    const result = await call(client, 'council', { job_id: 'job_3', wait_seconds: 50 });
    expect(sleeps).toHaveLength(1);
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toMatchObject({ code: 'JOB_CANCELLED' });
  });

  it('marks a council voice that was cut off at its token limit', async () => {
    const done = {
      job_id: 'job_4',
      kind: 'council',
      status: 'done',
      question: 'Q?',
      n_models: 2,
      reading: 'r',
      tensions: [],
      panel: [
        { model: 'Alder', model_id: 'alder-1', status: 'answered', text: 'Alder is cut', truncated: true },
        { model: 'Birch', model_id: 'birch-1', status: 'answered', text: 'Birch is whole', truncated: false },
      ],
    };
    const { client } = await scripted([{ status: 200, body: done }]);
    const text = textOf(await call(client, 'council', { job_id: 'job_4' }));
    expect(text).toContain('Alder (alder-1): [cut off at its token limit] Alder is cut');
    expect(text).toContain('Birch (birch-1): Birch is whole');
  });

  it('without wait_seconds returns the pending job and the exact next call at once', async () => {
    const { client, sleeps } = await scripted([
      { status: 202, body: { job_id: 'job_2', status: 'queued', kind: 'trace' } },
      { status: 200, body: { job_id: 'job_2', kind: 'trace', status: 'queued' } },
    ]);
    const result = await call(client, 'trace', { q: 'x' });
    expect(result.isError).toBeFalsy();
    expect(structured(result)).toMatchObject({ job_id: 'job_2', status: 'queued', next_call: { tool: 'trace', arguments: { job_id: 'job_2' } } });
    expect(textOf(result)).toMatch(/Call trace again with \{"job_id":"job_2"/);
    expect(sleeps).toHaveLength(0);
  });
});

describe('HTTP transport', () => {
  const post = (app: Express, body: unknown) =>
    request(app)
      .post('/api/mcp')
      .set('Accept', 'application/json, text/event-stream')
      .set('Content-Type', 'application/json')
      .send(body as object);
  const toolsList = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };

  it('answers a bare JSON-RPC request with JSON (stateless, no session id)', async () => {
    const response = await post(noPanel.app, toolsList);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/application\/json/);
    expect(response.headers['mcp-session-id']).toBeUndefined();
    expect(response.body.result.tools).toHaveLength(10);
  });

  it('a client that accepts JSON, or sends no Accept (plain curl), is answered too; one that accepts neither is 406', async () => {
    for (const accept of [undefined, 'application/json', '*/*']) {
      const sent = request(noPanel.app).post('/api/mcp').set('Content-Type', 'application/json');
      const response = await (accept ? sent.set('Accept', accept) : sent).send(toolsList);
      expect(response.status, accept).toBe(200);
      expect(response.body.result.tools).toHaveLength(10);
    }
    const html = await request(noPanel.app).post('/api/mcp').set('Accept', 'text/html').set('Content-Type', 'application/json').send(toolsList);
    expect(html.status).toBe(406);
    expect(html.body.error.code).toBe(-32000);
  });

  it('a browser Origin off the allow-list is 403 ORIGIN_NOT_ALLOWED; loopback and listed origins pass', async () => {
    const refused = await post(noPanel.app, toolsList).set('Origin', 'https://evil.example');
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'ORIGIN_NOT_ALLOWED', agent_action: expect.stringMatching(/MCP_ALLOWED_ORIGINS/) });
    expect((await post(noPanel.app, toolsList).set('Origin', 'http://localhost:5173')).status).toBe(200);
    expect((await post(noPanel.app, toolsList).set('Origin', 'http://127.0.0.1:4321')).status).toBe(200);

    const listed = await plainApp({ mcp: { allowedOrigins: parseAllowedOrigins('https://polyphony.example, http://lab.example:*') } });
    expect((await post(listed, toolsList).set('Origin', 'https://polyphony.example')).status).toBe(200);
    expect((await post(listed, toolsList).set('Origin', 'http://lab.example:8080')).status).toBe(200);
    expect((await post(listed, toolsList).set('Origin', 'https://polyphony.example.evil')).status).toBe(403);
  });

  it('the origin policy parses and matches strictly', () => {
    expect(() => parseAllowedOrigins('polyphony.example')).toThrow(/MCP_ALLOWED_ORIGINS/);
    expect(parseAllowedOrigins(undefined)).toEqual([]);
    expect(isOriginAllowed('http://[::1]:3000', [])).toBe(true);
    expect(isOriginAllowed('http://localhost.evil.example', [])).toBe(false);
    expect(isOriginAllowed('null', [])).toBe(false);
    expect(isOriginAllowed('https://anything.example', ['*'])).toBe(true);
  });

  it('invalid JSON-RPC and a body that is not JSON are JSON-RPC errors; the envelope rides along as data', async () => {
    const invalid = await post(noPanel.app, { hello: 'world' });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });

    const unknownMethod = await post(noPanel.app, { jsonrpc: '2.0', id: 7, method: 'no/such/method' });
    expect(unknownMethod.body).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32601 } });

    const notJson = await request(noPanel.app)
      .post('/api/mcp')
      .set('Accept', 'application/json, text/event-stream')
      .set('Content-Type', 'application/json')
      .send('{"jsonrpc":');
    expect(notJson.status).toBe(400);
    expect(notJson.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700, data: { code: 'INVALID_JSON', agent_action: expect.any(String) } } });
  });

  it('a batch inside a batch is no batch: refused whole as an invalid message, its inner calls not looked into', async () => {
    const badCall = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: '' } };
    const flat = await post(noPanel.app, [badCall]);
    expect(flat.body).toEqual([{ jsonrpc: '2.0', id: 3, error: { code: -32602, message: expect.stringMatching(/params.name/) } }]);
    const nested = await post(noPanel.app, [[badCall]]);
    expect(nested.status).toBe(400);
    expect(nested.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });

  it('GET and DELETE are 405 in the envelope', async () => {
    for (const method of ['get', 'delete'] as const) {
      const response = await request(noPanel.app)[method]('/api/mcp').set('Accept', 'text/event-stream');
      expect(response.status).toBe(405);
      expect(response.headers.allow).toMatch(/POST/);
      expect(response.body.error.code).toBe('METHOD_NOT_ALLOWED');
    }
  });

  it('/api/health reports mcp as wired', async () => {
    const response = await request(noPanel.app).get('/api/health');
    expect(response.body.capabilities.mcp).toBe(true);
  });
});
