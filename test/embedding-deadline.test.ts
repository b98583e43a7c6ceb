/**
 * The fast path when the question's embedding is late or fails (issue 43, part 4): a corpus
 * built with an OpenAI-compatible embedder pointed at the local fake (devkit/fake-openai.ts),
 * served with the server's question embedder (cache + deadline, providers/question-embedder.ts).
 * When the fake hangs or fails, GET /api/query, the MCP fast_context tool and the Atlas search
 * answer from the words alone and say so (retrieval.vectors unavailable), within the deadline,
 * never 500, in the OpenAPI contract; a question embedded before is served from the cache with
 * both sides; a late answer is kept without a second request; /api/ready names the embedder and
 * stays ready. No wall-clock thresholds: a hang lasts 60 s (timeout_ms) and each test's own
 * timeout is 20 s, so an answer at all is an answer that did not wait for it.
 */
import { writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { loadCorpus, type Corpus } from '../api/load-artifacts.ts';
import { createReadiness } from '../api/ops/readiness.ts';
import { retrieve } from '../core/retrieve.ts';
import { parseQueryParameters } from '../core/query-params.ts';
import type { Embedder } from '../core/ports/embedder.ts';
import { buildApp, tempDir, testEmbedder } from '../devkit/app.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../devkit/fake-openai.ts';
import { writeFixtureContent } from '../devkit/fixture-content.ts';
import { createConfiguredEmbedder } from '../providers/embeddings-config.ts';
import { createQuestionEmbedder } from '../providers/question-embedder.ts';
import { ReadinessSchema } from '../schemas/api.ts';
import { buildArtifacts } from '../scripts/build.ts';
import { createSqliteStore } from '../storage/sqlite-store.ts';
import { createContractChecker } from './helpers/contract.ts';
import { startServerProcess } from './helpers/server-process.ts';

const MODEL = 'embed-deadline';
const DEADLINE_MS = 300;
const TEST_TIMEOUT_MS = 20_000;

let fake: FakeOpenAI;
let dir: string;
let artifactsDir: string;
let configFile: string;
const servers: Server[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  fake = await startFakeOpenAI();
  dir = tempDir('embedding-deadline');
  artifactsDir = path.join(dir, 'artifacts');
  configFile = path.join(dir, 'embeddings.yaml');
  // A hung request is given up only after 60 s: far beyond any test's own timeout.
  writeFileSync(
    configFile,
    `base_url: ${fake.baseURL}\nmodel: ${MODEL}\ndimensions: 16\nbatch_size: 16\ntimeout_ms: 60000\nquery_timeout_ms: ${DEADLINE_MS}\n`,
  );
  await buildArtifacts({ contentDir: writeFixtureContent(), artifactsDir, cacheDir: path.join(dir, 'cache'), env: { EMBEDDINGS_CONFIG: configFile } });
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  for (const server of servers) server.closeAllConnections();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  await fake.close();
});

beforeEach(() => {
  fake.reset();
});

/** A fresh app per test, wired as api/server.ts wires its embedder: hung requests of one test hold no slot of the next. */
async function startApp(): Promise<{ app: Express; corpus: Corpus }> {
  const configured = await createConfiguredEmbedder({ EMBEDDINGS_CONFIG: configFile });
  const corpus = await loadCorpus(artifactsDir, createQuestionEmbedder(configured));
  const store = createSqliteStore(':memory:');
  return { app: createApp({ corpus, store, readiness: createReadiness({ store }), log: () => {} }), corpus };
}

/** Requests the fake received that carried `text`. */
function asked(text: string): number {
  return fake.requestsFor(MODEL).filter((recorded) => JSON.stringify((recorded.body as { input: unknown }).input).includes(text)).length;
}

const hang = () => fake.setDefault(MODEL, { kind: 'hang' });

function expectByWords(body: Record<string, unknown>, cause: 'timeout' | 'error', reason: RegExp): void {
  expect(body.retrieval).toMatchObject({ vectors: 'unavailable', cause, floors: 'not applied' });
  expect((body.retrieval as { reason: string }).reason).toMatch(reason);
  const records = body.records as { match: { semantic: number; lexical: number } }[];
  expect(records.length).toBeGreaterThan(0);
  // From the lexical side alone: no cosine measured, every record matching words of the question.
  for (const record of records) {
    expect(record.match.semantic).toBe(0);
    expect(record.match.lexical).toBeGreaterThan(0);
  }
}

describe('GET /api/query without the question embedding', () => {
  it(
    'answers from the words alone when the endpoint hangs, says why, and stays in the contract',
    async () => {
      const { app } = await startApp();
      const contract = await createContractChecker(app);
      hang();
      for (const url of [
        '/api/query?q=tide%20tables%20in%20the%20harbour',
        '/api/query?q=yeast%20and%20gluten%20in%20the%20dough&mode=retrieve',
        '/api/query?q=tide%20tables%20for%20sailors&format=brief',
        '/api/query?q=Where%20do%20Alder%20and%20Birch%20disagree%20about%20ownership%20of%20refusal%3F',
      ]) {
        const response = await request(app).get(url);
        expect(response.status, url).toBe(200);
        contract.check('GET', url, response);
        expectByWords(response.body, 'timeout', new RegExp(`did not answer within ${DEADLINE_MS} ms`));
      }
      const context = await request(app).get('/api/query?q=lamp%20of%20the%20lighthouse%20keeper');
      expect(context.body.records[0].id).toBe('TST-3');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a failing endpoint gives the failure kind, never its message; a question nothing matches is a no_context that says why',
    async () => {
      const { app } = await startApp();
      const contract = await createContractChecker(app);
      fake.setDefault(MODEL, { kind: 'status', status: 401, message: 'Incorrect API key provided: sk-abc***xyz' });
      const response = await request(app).get('/api/query?q=tide%20tables');
      expect(response.status).toBe(200);
      contract.check('GET', '/api/query?q=tide%20tables', response);
      expectByWords(response.body, 'error', /^the embedding model failed: auth \(HTTP 401\)$/);
      expect(response.text).not.toContain('sk-abc');

      const nothing = await request(app).get('/api/query?q=zebras%20quarrelling');
      expect(nothing.status).toBe(200);
      contract.check('GET', '/api/query?q=zebras%20quarrelling', nothing);
      expect(nothing.body.records).toEqual([]);
      expect(nothing.body.retrieval).toMatchObject({ vectors: 'unavailable', cause: 'error' });
      expect(nothing.body.no_context).toMatchObject({ reason: 'no_match', relevance_floor: 0 });
      expect(nothing.body.no_context.message).toMatch(/shares a word/);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'serves a question embedded before from the cache, with both sides, while the endpoint hangs',
    async () => {
      const { app } = await startApp();
      const q = 'why the bread rises';
      const healthy = await request(app).get('/api/query').query({ q });
      expect(healthy.status).toBe(200);
      expect(healthy.body.retrieval).toBeUndefined();
      expect(asked(q)).toBe(1);

      hang();
      const again = await request(app).get('/api/query').query({ q });
      expect(again.status).toBe(200);
      expect(again.body.retrieval).toBeUndefined();
      expect(again.body.records).toEqual(healthy.body.records);
      expect(asked(q)).toBe(1);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'keeps a late answer for the next ask, sending the question once however often it is asked meanwhile',
    async () => {
      const { app } = await startApp();
      const q = 'tide tables of the northern harbour at night';
      fake.script(MODEL, [{ kind: 'slow', delayMs: 2000, then: { kind: 'json', value: {} } }]);
      const first = await request(app).get('/api/query').query({ q });
      expect(first.status).toBe(200);
      expectByWords(first.body, 'timeout', /did not answer within/);
      // Asked until the late vector is in: every answer by then is words-only, and nothing is sent twice.
      let answer = first;
      while (answer.body.retrieval) {
        answer = await request(app).get('/api/query').query({ q });
        expect(answer.status).toBe(200);
      }
      expect(answer.body.records.length).toBeGreaterThan(0);
      expect(asked(q)).toBe(1);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'the Atlas search by meaning answers by words and says so',
    async () => {
      const { app } = await startApp();
      const contract = await createContractChecker(app);
      hang();
      const url = '/api/divergences/search?q=refusal%20from%20training&k=3';
      const response = await request(app).get(url);
      expect(response.status).toBe(200);
      contract.check('GET', url, response);
      expect(response.body.retrieval).toMatchObject({ vectors: 'unavailable', cause: 'timeout' });
      expect(response.body.note).toMatch(/by words/);
      expect(response.body.results.map((result: { id: string }) => result.id).sort()).toEqual(['TST-D1', 'TST-D2']);
      expect(response.body.results[0].score).toBe(1);

      fake.reset();
      const healthy = await request(app).get('/api/divergences/search?q=a%20question%20about%20owning%20a%20refusal');
      expect(healthy.body.retrieval).toBeUndefined();
      expect(healthy.body.note).toMatch(/by meaning/);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'through MCP: fast_context returns the same degraded answer and its summary says so',
    async () => {
      const { app } = await startApp();
      const server = await new Promise<Server>((resolve) => {
        const started = app.listen(0, '127.0.0.1', () => resolve(started));
      });
      servers.push(server);
      const client = new Client({ name: 'polyphony-test', version: '0.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/mcp`)));
      clients.push(client);
      hang();
      const q = 'sailors reading tide tables';
      const result = (await client.callTool({ name: 'fast_context', arguments: { q } })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      const structured = result.structuredContent as Record<string, unknown>;
      expectByWords(structured, 'timeout', /did not answer within/);
      const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
      expect(text).toMatch(/Vectors unavailable \(the embedding model did not answer within 300 ms\)/);
      // The same question over HTTP: the same answer, and the hung request was not sent again.
      const http = await request(app).get('/api/query').query({ q, mode: 'retrieve' });
      expect(structured).toEqual(http.body);
      expect(asked(q)).toBe(1);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'GET /api/ready names the embedder and how the last question went, and stays ready',
    async () => {
      const { app } = await startApp();
      const contract = await createContractChecker(app);
      const before = await request(app).get('/api/ready');
      expect(before.status).toBe(200);
      expect(before.body.embedder).toEqual({ id: `openai-compatible:${MODEL}@16`, deadline_ms: DEADLINE_MS, last_question: null });
      hang();
      await request(app).get('/api/query?q=tide');
      const after = await request(app).get('/api/ready');
      expect(after.status).toBe(200);
      contract.check('GET', '/api/ready', after);
      expect(after.body.embedder.last_question).toMatchObject({
        vectors: 'unavailable',
        cause: 'timeout',
        reason: `the embedding model did not answer within ${DEADLINE_MS} ms`,
      });
    },
    TEST_TIMEOUT_MS,
  );
});

describe('the server process with an endpoint that hangs', () => {
  it(
    'warms up and is ready, answers the fast path by words, and /api/ready shows the embedder',
    async () => {
      hang();
      const server = await startServerProcess({
        ARTIFACTS_DIR: artifactsDir,
        STORE_PATH: path.join(dir, 'store.db'),
        SITE_DIR: path.join(dir, 'none'),
        EMBED_WORKERS: '0',
        EMBEDDINGS_CONFIG: configFile,
      });
      try {
        let ready = await fetch(`${server.base}/api/ready`);
        while (ready.status !== 200) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          ready = await fetch(`${server.base}/api/ready`);
        }
        const body = ReadinessSchema.parse(await ready.json());
        expect(body.embedder).toMatchObject({
          id: `openai-compatible:${MODEL}@16`,
          deadline_ms: DEADLINE_MS,
          last_question: { vectors: 'unavailable', cause: 'timeout' },
        });
        const answer = await fetch(`${server.base}/api/query?q=${encodeURIComponent('yeast in the dough')}`);
        expect(answer.status).toBe(200);
        expectByWords((await answer.json()) as Record<string, unknown>, 'timeout', /did not answer within 300 ms/);
        expect(server.output()).toMatch(/question embeddings unavailable .*answering from the words alone/);
      } finally {
        const exited = server.child.exitCode !== null ? Promise.resolve() : new Promise((resolve) => server.child.once('exit', resolve));
        server.child.kill('SIGTERM');
        await exited;
      }
    },
    TEST_TIMEOUT_MS,
  );
});

describe('retrieval without the question embedding (core/retrieve.ts)', () => {
  it('applies no relevance floor and no question gate, and reports floor 0', async () => {
    const built = await buildApp(writeFixtureContent());
    const real = await testEmbedder();
    const failing: Embedder = { id: real.id, dims: real.dims, embed: () => Promise.reject(new Error('worker gone')) };
    const degraded = await loadCorpus(built.artifactsDir, failing);
    const query = parseQueryParameters({ q: 'tide tables of the harbour' });
    const strict = { floors: { relevant: 1, atlas: 1 }, questionGate: 1 };
    // With vectors, floors this high turn every record away; without them, none is applied.
    expect((await retrieve(built.corpus, query, strict)).hits).toEqual([]);
    const byWords = await retrieve(degraded, query, strict);
    expect(byWords.vectors).toEqual({ cause: 'error', reason: 'the embedding model failed: Error' });
    expect(byWords.relevance).toMatchObject({ floor: 0, atlasFloor: 0, gate: 0 });
    expect(byWords.hits[0]?.record.id).toBe('TST-1');
    for (const hit of byWords.hits) expect(hit.similarity).toBe(0);
    // A caller that did not ask for the fallback (the build's probe, the calibration, BEIR) still sees the failure.
    await expect(degraded.search.search('tide tables')).rejects.toThrow('worker gone');
    await expect(retrieve(degraded, query, { vectors: 'required' })).rejects.toThrow('worker gone');
  });
});
