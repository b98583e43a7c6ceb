/**
 * Contract fuzzing (issue 7) against an app without a live panel and without an
 * ingestion secret: every operation of /openapi.json, RUNS_PER_SEED requests × 3 seeds.
 * The only 5xx this configuration makes expected is 503 LIVE_PANEL_UNAVAILABLE (and
 * PERSISTENCE_UNAVAILABLE for persist) on the operations that document it.
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type BuiltApp } from '../../devkit/app.ts';
import { writeFixtureContent } from '../../devkit/fixture-content.ts';
import { FuzzStats, type FuzzConfig, type FuzzContext, type Operation } from '../helpers/fuzz.ts';
import { contextFor, describeOperations, documentedOperationIds, type FuzzEnvironment } from './suite.ts';

const NO_PANEL_503 = new Set(['LIVE_PANEL_UNAVAILABLE', 'PERSISTENCE_UNAVAILABLE']);

const config: FuzzConfig = {
  name: 'no-panel',
  live: false,
  // Precise: a 503 with a no-panel code, on an operation that documents that code (MCP tools relay it inside a 200).
  expected5xx: (status, code, operation) =>
    status === 503 && code !== undefined && NO_PANEL_503.has(code) && (operation.id === 'mcpPost' || Boolean(operation.codes.get(503)?.includes(code))),
};

const OPERATION_IDS = documentedOperationIds();
const stats = new FuzzStats();
let built: BuiltApp;
let environment: FuzzEnvironment;
let context: FuzzContext;
let operations: Operation[];

beforeAll(async () => {
  const contentDir = writeFixtureContent();
  // contribute and store share one per-client window: at the default 30 an hour, fuzzing contribute
  // first left store nothing but 429 (its 2xx were never reached). The limits are fuzzed in contract-writes.
  built = await buildApp(contentDir, { limits: { contribute: { limit: 1_000_000, windowMs: 3_600_000 } } });
  const server: Server = built.app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  environment = { app: built.app, server, corpus: built.corpus, config, internalPaths: [contentDir, built.artifactsDir] };
  ({ context, operations } = await contextFor(environment));
});

afterAll(async () => {
  environment?.server.close();
});

describe('the fuzzed operations are the documented ones', () => {
  it('every path × method of the served /openapi.json is fuzzed', () => {
    expect(operations.map((operation) => operation.id).sort()).toEqual([...OPERATION_IDS].sort());
  });
});

describeOperations('no panel', OPERATION_IDS, () => ({ context, environment, operations, stats }));

describe('coverage', () => {
  it('every operation that can succeed without a panel reached a 2xx', () => {
    // recordDisposition needs the ingestion secret, which this configuration does not have (503 first);
    // federationOffer needs push on and a pinned peer (test/federation-offer.test.ts covers its 202).
    const unreachable = new Set(['queryPost', 'trace', 'councilGet', 'councilPost', 'cancelJob', 'recordDisposition', 'federationOffer']);
    const missing = OPERATION_IDS.filter((id) => !unreachable.has(id) && !stats.succeeded.has(id));
    expect(missing).toEqual([]);
  });
});
